"""The alarms: each window judged against the windows before it (pooled), and the step each alarm first fired.

Counts that decide at any number (a blank reply that passes, a cut-off reply that passes: question 0's and
question 1's rules) fire at the step they appear, partial window included. The rest are tests of a window: at
window w (1-based) one-sided at TRACK_ALARM_ALPHA / (w (w + 1)), levels that sum to TRACK_ALARM_ALPHA over a run
of any length (a Bonferroni split that never needs the run's length, so a followed run's early windows are
never judged again), and each also asks for an effect large enough to act on (defaults.py says which).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from .. import defaults as D
from .models import Alarm
from .summary import StepSummary
from .windows import Pooled, wilson


Z95_ONE_SIDED = NormalDist().inv_cdf(0.95)


def level_z(w: int) -> float:
    """The one-sided z of window w's tests (w 0-based)."""
    return NormalDist().inv_cdf(1 - D.TRACK_ALARM_ALPHA / ((w + 1) * (w + 2)))


def _first(alarms: dict[str, Alarm], name: str, w: int, step: int, evidence: str, rows: list | None = None) -> None:
    if name not in alarms:
        alarms[name] = Alarm(name=name, first_step=step, window=w, holds_now=False, evidence=evidence,
                             rows=(rows or [])[: D.TRACK_EXAMPLES])


def count_alarms(steps: list[StepSummary], size: int) -> dict[str, Alarm]:
    """Blank replies and cut-off replies that pass: the first step with any, and its rows."""
    alarms: dict[str, Alarm] = {}
    total = {"blank_passes": 0, "cut_off_passes": 0}
    for i, s in enumerate(steps):
        for name, count, what in (("blank_passes", s.blank_passes, "blank (or whitespace-only) replies"),
                                  ("cut_off_passes", s.cut_passes, "replies cut off at the token cap")):
            total[name] += count
            if count:
                _first(alarms, name, i // size, s.step, f"{count} {what} passed at step {s.step}: the grader passes "
                                                        f"them, so the policy learns to give them",
                       s.examples.get(name))
    for name, alarm in alarms.items():
        last = steps[-size:]
        alarm.holds_now = any((s.blank_passes if name == "blank_passes" else s.cut_passes) for s in last)
        alarm.evidence += f" ({total[name]} in all)"
    return alarms


def window_alarms(windows: list[Pooled], filtered: bool) -> tuple[dict[str, Alarm], dict[str, list[int]]]:
    """The tests of each whole window; (alarms by name, the windows each fired in)."""
    alarms: dict[str, Alarm] = {}
    fired: dict[str, list[int]] = {}
    before = Pooled()  # the windows before w, pooled a window at a time
    refs: dict[str, Pooled | None] = {}  # each alarm's reference when it first fired
    for w, p in enumerate(windows):
        ref = before if w >= D.TRACK_REFERENCE_WINDOWS else None
        for name, evidence, rows in _tests(p, ref, level_z(w), filtered):
            fired.setdefault(name, []).append(w)
            if name not in alarms:
                refs[name] = None if ref is None else Pooled().merge(ref)
            _first(alarms, name, w, p.steps[0].step, evidence, rows)
        before.merge(p)
    for name, alarm in alarms.items():  # the newest window against what came before the alarm, at the 95% level
        alarm.holds_now = name in {t[0] for t in _tests(windows[-1], refs[name], Z95_ONE_SIDED, filtered)}
    return alarms, fired


def _tests(p: Pooled, ref: Pooled | None, z: float, filtered: bool) -> list[tuple[str, str, list]]:
    out: list[tuple[str, str, list]] = []
    if p.groups and not filtered:
        high = wilson(p.split, p.groups, z)[1]
        if high < D.TRACK_MIN_SPLIT_SHARE:
            name = "band_emptied" if p.all_pass >= p.all_fail else "band_floor"
            out.append((name, f"{p.split} of {p.groups} groups split ({p.split / p.groups:.0%}, at most {high:.0%}); "
                              f"{p.all_pass} all pass, {p.all_fail} all fail: under {D.TRACK_MIN_SPLIT_SHARE:.0%} "
                              f"the zero-advantage groups leave a grouped method little to learn from", []))
    if p.repeated >= D.TRACK_MIN_REPEATED and p.flipped / p.repeated > D.GRADER_FLIP_SHARE:
        rows = [r for s in p.steps for r in s.examples.get("graded_both_ways", [])]
        out.append(("graded_both_ways", f"{p.flipped} of {p.repeated} repeated replies got different grades within "
                                        f"a group: the grade is not a function of the reply", rows))
    if p.link_groups >= D.LENGTH_MIN_GROUPS and p.rho is not None and p.rho >= D.LENGTH_MIN_RHO and p.z > z:
        out.append(("length_follows_grade", f"within groups the grade rises with the reply's length (Spearman rho "
                                            f"{p.rho:.2f} over {p.link_groups} groups, z {p.z:.1f}): question 0's "
                                            f"length check", []))
    if ref is None:
        return out
    if p.cut is not None and ref.cut is not None and p.cut.mean is not None and ref.cut.mean is not None:
        now, before = p.cut.mean, ref.cut.mean
        se = math.hypot(p.cut.se or 0.0, ref.cut.se or 0.0)
        if (now >= D.TRACK_CUT_OFF_RISE * before and now - before >= D.TRACK_CUT_OFF_MIN_RISE and se > 0
                and (now - before) / se > z):
            out.append(("cut_off_rising", f"the cut-off share rose to {now:.1%} from {before:.1%} in the steps "
                                          f"before: replies run into the token cap", []))
    if p.distinct is not None and ref.distinct is not None and p.distinct.n and ref.distinct.n:
        now, before = p.distinct.mean, ref.distinct.mean
        se = math.hypot(p.distinct.se or 0.0, ref.distinct.se or 0.0)
        if now <= (1 - D.TRACK_COLLAPSE_DROP) * before and se > 0 and (before - now) / se > z:
            out.append(("collapsed", f"distinct replies per group fell to {now:.0%} from {before:.0%}: the policy "
                                     f"gives the same reply again and again", []))
    return out
