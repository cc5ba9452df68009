"""A run being written is read again cheaply (only new or changed step files are read), and --follow prints each
new window as it lands and stops on Ctrl-C cleanly."""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from runs import verl_run, verl_step

from pick_a_method import routing
from pick_a_method.routing.during_training import cache, rollouts
from pick_a_method.server.track_tool import TrackArguments, follow

LATER = time.time() + 3600  # every file settled


def test_a_second_call_reads_only_the_new_steps(tmp_path, monkeypatch):
    cache.clear()
    verl_run(tmp_path, 20)
    read = []
    real = rollouts.READERS["verl"]
    monkeypatch.setitem(rollouts.READERS, "verl", lambda p, s: read.append(s) or real(p, s))
    first = routing.track(tmp_path, window=5, now=LATER)
    assert len(read) == 20 and first.run.new_windows == 4
    for s in (21, 22, 23, 24, 25):
        verl_step(tmp_path, s)
    read.clear()
    second = routing.track(tmp_path, window=5, now=LATER)
    assert read == [21, 22, 23, 24, 25] and second.run.new_windows == 1
    verl_step(tmp_path, 3, seed=9)  # a step file rewritten: read again
    os.utime(tmp_path / "3.jsonl", ns=(1, 1))
    read.clear()
    routing.track(tmp_path, window=5, now=LATER)
    assert read == [3]


def test_follow_prints_new_windows_as_they_land(tmp_path):
    cache.clear()
    verl_run(tmp_path, 10)
    old = time.time() - 60
    for p in tmp_path.glob("*.jsonl"):
        os.utime(p, (old, old))
    out, err = io.StringIO(), io.StringIO()
    step = iter(range(11, 100))

    def sleep(_):  # the trainer writes five more steps between reads
        for _ in range(5):
            s = next(step)
            verl_step(tmp_path, s)
            os.utime(tmp_path / f"{s}.jsonl", (old, old))

    assert follow(TrackArguments(run=str(tmp_path), window=5), out=out, err=err, rounds=3, sleep=sleep) == 0
    text = out.getvalue()
    assert text.count("\n      11-15 ") + text.count("\n      16-20 ") == 2  # each new window once, as it landed
    assert "Ctrl-C stops" in err.getvalue()


def test_follow_stops_cleanly_on_ctrl_c(tmp_path):
    verl_run(tmp_path, 10)
    root = Path(__file__).parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "pick_a_method.server.cli", "track", str(tmp_path), "--follow",
                             "--every", "0.2", "--window", "5"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "stopped following" in err
    assert "steps" in out and "windows of 5" in out
