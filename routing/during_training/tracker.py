"""`track(run)`: read a run's step files as the trainer wrote them (only the new ones since the last call), judge
each window of steps, and say whether to keep going, stop, switch method, or fix the grader."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from pick_a_method.common.next_step import Tool

from .. import defaults as D
from pick_a_method.common.errors import InputError
from . import cache
from .alarms import count_alarms, window_alarms
from .evals import eval_curve
from .layout import Layout, StepFile, layout
from .metrics import cannot_judge, read_metrics
from .models import RunRead, Track, Window
from .rollouts import READERS, NotThisFormat
from .summary import StepSummary, summarise
from .verdict import decide, plateau_gain, trends
from .windows import metric_windows, pooled, window_of, window_size

# A dump with no all-pass and no all-fail group among this many is read as filtered (the DAPO recipe dumps after
# its group filter, verl-recipe dapo/dapo_ray_trainer.py): an unfiltered run of 64 groups a step with a third of
# them uniform has a chance of (2/3)^64 of none in one step, let alone fifty groups over several.
FILTERED_AFTER_GROUPS = 50


def track(run: str | os.PathLike[str], *, window: int | None = None, pass_threshold: float = D.PASS_THRESHOLD,
          group_size: int | None = None, filtered: bool | None = None, windows_shown: int = D.LIST_LIMIT,
          now: float | None = None) -> Track:
    """Track a training run from the files its trainer writes (see the README's "During training")."""
    size = window_size(window)
    if size < 1:
        raise InputError(f"window={window}: a window holds at least one step")
    lay = layout(run, now=now)
    warnings = list(lay.warnings)
    metrics_whose, metrics = read_metrics(lay.metrics) if lay.metrics else (None, {})
    key = (str(lay.run.resolve()), lay.trainer, pass_threshold, group_size)
    entry = cache.run_cache(key)
    if lay.trainer:
        steps = _read_steps(lay, entry, pass_threshold, group_size, warnings)
        if not steps:
            raise InputError(f"track: none of {lay.run}'s {lay.trainer} step files could be read (see the warnings: "
                             + "; ".join(warnings[-3:]) + ")")
        answer = judge_steps(steps, window=size, filtered=filtered, metrics=metrics, run=str(lay.run),
                             trainer=lay.trainer, warnings=warnings)
    elif metrics:
        answer = _from_metrics(lay, metrics_whose, metrics, size, warnings)
    else:
        answer = _from_evals(lay, pass_threshold, warnings)
    read = answer.run
    read.new_windows = max(0, len(answer.windows) + read.windows_omitted - entry["windows"])
    entry["windows"] = len(answer.windows) + read.windows_omitted
    if len(answer.windows) > windows_shown:
        read.windows_omitted += len(answer.windows) - windows_shown
        answer.windows = answer.windows[len(answer.windows) - windows_shown:]
    if lay.checkpoints and read.source != "evals":
        read.evals = eval_curve(lay.checkpoints, pass_threshold, warnings)
    read.held_back = [f.step for f in lay.held_back]
    return answer


def _read_steps(lay: Layout, entry: dict[str, Any], threshold: float, group_size: int | None,
                warnings: list[str]) -> list[StepSummary]:
    read = READERS[lay.trainer]
    out, bad, notes = [], [], Counter()
    for f in lay.steps:
        s = cache.cached(entry, f)
        if s is None:
            try:
                rows = read(f.path, f.step, group_size) if lay.trainer in ("trl", "nemo-rl") else read(f.path, f.step)
            except (NotThisFormat, OSError) as e:
                bad.append(f"{f.path.name} ({e})")
                continue
            s = summarise(rows, threshold)
            cache.keep(entry, f, s)
        notes.update(s.notes)
        out.append(s)
    if bad:
        warnings.append(f"{len(bad)} step file(s) are not what their names say and were left out: "
                        + "; ".join(bad[: D.TRACK_EXAMPLES]))
    warnings.extend(n for n in notes)
    _order_warnings(lay.steps, out, warnings)
    return [s for s in out if s.rows]


def _order_warnings(files: list[StepFile], steps: list[StepSummary], warnings: list[str]) -> None:
    inside = [s for s in steps if s.step_inside is not None]
    if inside:
        warnings.append(f"{len(inside)} step file(s) hold rows of another step than their name says (e.g. "
                        f"{os.path.basename(inside[0].source)} holds step {inside[0].step_inside}): read by the name")
    numbers = [f.step for f in files]
    gaps = Counter(b - a for a, b in zip(numbers, numbers[1:]))
    if gaps:
        usual = gaps.most_common(1)[0][0]
        missing = [s for a, b in zip(numbers, numbers[1:]) if b - a > usual for s in range(a + usual, b, usual)]
        if missing:
            warnings.append(f"{len(missing)} step(s) missing (every {usual} expected): "
                            f"{', '.join(map(str, missing[:10]))}{' ...' if len(missing) > 10 else ''}; the windows "
                            f"count the steps present")
    late = [a.step for a, b in zip(files, files[1:]) if a.mtime_ns - b.mtime_ns > 60e9]
    if late:
        warnings.append(f"step files written out of step order (step {late[0]} is newer than the step after it: a run "
                        f"restarted from a checkpoint into the same folder?): read in step order")


def _filtered(steps: list[StepSummary], said: bool | None, warnings: list[str]) -> bool:
    groups = sum(s.groups for s in steps)
    uniform = sum(s.all_pass + s.all_fail for s in steps)
    seems = groups >= FILTERED_AFTER_GROUPS and uniform == 0
    if said is None and seems:
        warnings.append(f"no all-pass or all-fail group in {groups} groups: these rollouts were dumped after a group "
                        f"filter (the DAPO recipe's dynamic sampling), so the band cannot be measured from them; the "
                        f"band alarms are off (routing.track(..., filtered=False) reads them if the run has no filter)")
    return seems if said is None else said


def judge_steps(steps: list[StepSummary], *, window: int = D.TRACK_WINDOW, filtered: bool | None = None,
                metrics: dict[int, dict[str, float]] | None = None, run: str = "", trainer: str | None = None,
                warnings: list[str] | None = None) -> Track:
    """The verdict from steps' summaries (in step order): what `track` does once the files are read; the
    simulations (tests/during_training/simulate.py) call it on steps they make."""
    size, metrics, warnings = window, metrics or {}, warnings if warnings is not None else []
    is_filtered = _filtered(steps, filtered, warnings)
    chunks = [steps[i:i + size] for i in range(0, len(steps), size)]
    pools = [pooled(c) for c in chunks]
    windows = [window_of(i, p, size, metrics) for i, p in enumerate(pools)]
    whole = [p for p, w in zip(pools, windows) if not w.partial]
    alarms, _ = window_alarms(whole, is_filtered)
    alarms.update(count_alarms(steps, size))
    judged = windows[: len(whole)]
    trend = trends(judged, whole)
    latest = steps[-1].source
    verdict, summary, step, alts = decide(alarms, len(whole), trend, plateau_gain(whole), run, latest)
    link = alarms.get("length_follows_grade")
    if link and verdict != "length_hacking":
        warnings.append(f"since step {link.first_step} {link.evidence}; reply length and reward are not rising "
                        f"together (yet): audit the grader before trusting the reward")
    if is_filtered:
        warnings.append("band alarms off: a filtered dump")
    missing = []
    if steps[0].cut is None and not any("cut_off_share" in m for m in metrics.values()):
        missing.append(f"the cut-off share and cut-off passes (question 1): {trainer}'s dump does not record why a "
                       f"reply ended; check that the reward fails a reply cut at the length cap")
    elif steps[0].cut is None:
        missing.append("cut-off passes (question 1): the trainer logs the cut-off share but not which replies")
    if not any(("entropy" in m or "kl" in m) for m in metrics.values()):
        missing.append("entropy and KL: no metrics log beside the rollouts (TRL trainer_state.json, prime-rl "
                       "metrics.jsonl, verl's file logger)")
    return Track(verdict=verdict, summary=summary, next_step=step, alternatives=alts, warnings=warnings,
                 windows=windows, alarms=sorted(alarms.values(), key=lambda a: a.first_step),
                 run=RunRead(trainer=trainer, source="rollouts", path=run, steps_read=len(steps),
                             first_step=steps[0].step, last_step=steps[-1].step, window_steps=size,
                             trends=list(trend.values()), cannot_judge=missing))


def _from_metrics(lay: Layout, whose: str | None, metrics: dict[int, dict[str, float]], size: int,
                  warnings: list[str]) -> Track:
    windows = metric_windows(metrics, size)
    whole = [w for w in windows if not w.partial]
    names = {n for m in metrics.values() for n in m}
    alarms = {}
    from .models import Alarm
    for i, w in enumerate(whole):
        high = w.split_ci95[1] if w.split_ci95 else w.split_share
        if "split_share" in names and high is not None and high < D.TRACK_MIN_SPLIT_SHARE and "band" not in alarms:
            name = "band_emptied" if (w.all_pass_share or 0) >= (w.all_fail_share or 0) else "band_floor"
            alarms[name] = Alarm(name=name, first_step=w.first_step, window=i, holds_now=False,
                                 evidence=f"the logged split share is {w.split_share:.0%}")
    last = whole[-1] if whole else None
    for a in alarms.values():
        a.holds_now = last is not None and (last.split_share or 1) < D.TRACK_MIN_SPLIT_SHARE
    trend = {t.what: t for t in _metric_trends(whole)}
    verdict, summary, step, alts = decide(alarms, len(whole), trend, None, str(lay.run), None)
    steps = sorted(metrics)
    return Track(verdict=verdict, summary=summary + " (From the logged metrics alone.)", next_step=step,
                 alternatives=alts, warnings=warnings, windows=windows, alarms=list(alarms.values()),
                 run=RunRead(trainer=whose, source="metrics", path=str(lay.run), steps_read=len(steps),
                             first_step=steps[0], last_step=steps[-1], window_steps=size, trends=list(trend.values()),
                             cannot_judge=cannot_judge(names)
                             + ["plateau: the log's per-step means, not the groups, give the reward's interval"]))


def _metric_trends(windows: list[Window]) -> list[Any]:
    from .verdict import slope

    out = []
    mid = [(w.first_step + w.last_step) / 2 for w in windows]
    for name, ci in (("reward", "reward_ci95"), ("split_share", "split_ci95"), ("cut_off_share", "cut_off_ci95")):
        y = [getattr(w, name) for w in windows]
        se = [(getattr(w, ci)[1] - getattr(w, ci)[0]) / 3.92 if getattr(w, ci) else None for w in windows]
        t = slope(mid, y, se)
        if t is not None:
            t.what = name
            out.append(t)
    return out


def _from_evals(lay: Layout, threshold: float, warnings: list[str]) -> Track:
    from ..verdicts import NextStep

    points = eval_curve(lay.checkpoints, threshold, warnings)
    last = points[-1] if points else None
    said = (f"{len(points)} checkpoints; the newest (step {last.step}) at pass@1 {last.pass_at_1:.3f}"
            + (f", {last.diff_from_first:+.3f} from the first on shared tasks" if last.diff_from_first is not None
               else "") if last and last.pass_at_1 is not None else "no checkpoint's evals could be read")
    step = NextStep(tool=Tool.AFTER, arguments={"before_rows_path": str(points[0].folder) if points else "<before>",
                                             "after_rows_path": str(last.folder) if last else "<after>"},
                    command=f"pick-a-method after {points[0].folder} {last.folder}" if points else None,
                    why="Compare the first and the newest checkpoint on the held-out tasks with `after`.")
    return Track(verdict="too_early" if len(points) < D.TRACK_MIN_WINDOWS else "learning",
                 summary=f"The held-out curve: {said}. Per-checkpoint evals carry no band, grader or cut-off "
                         f"alarms over steps; read the rollouts for those.",
                 next_step=step, warnings=warnings, windows=[],
                 run=RunRead(trainer=None, source="evals", path=str(lay.run), steps_read=len(points),
                             first_step=points[0].step if points else None, last_step=last.step if last else None,
                             window_steps=1, evals=points, cannot_judge=[
                                 "the band, the grader and collapse: per-checkpoint evals, not training rollouts"]))
