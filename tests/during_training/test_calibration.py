"""track's alarms calibrated by simulation (simulate.py): runs of 200 steps with no change sound no alarm in at
least 95% of runs, and each designed change is found within 3 windows of its start in at least 90%.

Measured (seeds below): no alarm in 200 of 200 unchanged runs; each change found in 60 of 60 (band empties, blank
passes start, a length-biased grade starts, replies collapse, the cut-off share doubles). About a minute on 2 cores.
"""

import pytest
from simulate import CHANGES, found, run

NULL_RUNS, CHANGE_RUNS = 200, 60


def test_a_run_with_no_change_sounds_no_alarm_in_95_percent_of_runs():
    quiet = sum(not run(seed).alarms for seed in range(NULL_RUNS))
    assert quiet / NULL_RUNS >= 0.95, f"{NULL_RUNS - quiet} of {NULL_RUNS} unchanged runs sounded an alarm"


@pytest.mark.parametrize("change", CHANGES)
def test_each_designed_change_is_found_within_3_windows_in_90_percent_of_runs(change):
    tracks = [run(10_000 + seed, change, at=105) for seed in range(CHANGE_RUNS)]
    hits = sum(found(t, change, 105) for t in tracks)
    early = sum(any(a.window < 10 for a in t.alarms) for t in tracks)  # before the change: false alarms
    assert hits / CHANGE_RUNS >= 0.9, f"{change}: found in {hits} of {CHANGE_RUNS}"
    assert early / CHANGE_RUNS <= 0.05, f"{change}: {early} runs alarmed before the change"


def test_the_verdict_names_the_change():
    expected = {"band_empties": "band_emptied", "blank_passes": "fix_reward", "collapse": "collapsed",
                "cut_off_doubles": "fix_reward"}
    for change, verdict in expected.items():
        assert run(7, change).verdict == verdict, change
    assert run(7).verdict in ("plateau", "learning")
