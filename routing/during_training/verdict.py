"""One verdict from the windows and the alarms, in models.PRECEDENCE, each with the step it rests on and a next step
that runs as printed (a `pick-a-method` command, or the MCP call beside it)."""

from __future__ import annotations

import math
import shlex

from pick_a_method.common.next_step import Tool

import numpy as np

from .. import defaults as D
from ..verdicts import NextStep
from .models import Alarm, Trend, Window
from .windows import Z95, Pooled, normal

GRADER_ALARMS = ("blank_passes", "cut_off_passes", "graded_both_ways")


def slope(x: list[float], y: list[float | None], se: list[float | None]) -> Trend | None:
    """Weighted least squares of y on x (weights 1 / se^2), per 100 steps, its standard error widened by the
    residual spread where the windows scatter more than their intervals say."""
    keep = [(a, b, c) for a, b, c in zip(x, y, se) if b is not None and c is not None and c > 0]
    if len(keep) < 3:
        return None
    xs, ys, ss = (np.array(v, dtype=np.float64) for v in zip(*keep))
    w = 1 / ss ** 2
    xm = (w * xs).sum() / w.sum()
    sxx = (w * (xs - xm) ** 2).sum()
    if sxx <= 0:
        return None
    b = (w * (xs - xm) * ys).sum() / sxx
    a = (w * ys).sum() / w.sum() - b * xm
    chi2 = (w * (ys - a - b * xs) ** 2).sum() / (len(xs) - 2)
    se_b = math.sqrt(max(chi2, 1.0) / sxx)
    return Trend(what="", per_100_steps=100 * b, ci95=(100 * (b - Z95 * se_b), 100 * (b + Z95 * se_b)))


def trends(windows: list[Window], pooled: list[Pooled]) -> dict[str, Trend]:
    mid = [(w.first_step + w.last_step) / 2 for w in windows]
    out: dict[str, Trend] = {}
    series = {
        "reward": ([w.reward for w in windows], [p.reward.se for p in pooled]),
        "split_share": ([w.split_share for w in windows],
                        [math.sqrt(max(w.split_share * (1 - w.split_share), 0.25 / max(w.groups, 1)) / w.groups)
                         if w.groups and w.split_share is not None else None for w in windows]),
        "length_mean": ([w.length_mean for w in windows], [p.length.se if p.length else None for p in pooled]),
        "cut_off_share": ([w.cut_off_share for w in windows], [p.cut.se if p.cut else None for p in pooled]),
        "distinct_share": ([w.distinct_share for w in windows], [p.distinct.se if p.distinct else None for p in pooled]),
    }
    for name, (y, se) in series.items():
        t = slope(mid, y, se)
        if t is not None:
            t.what = name
            out[name] = t
    return out


def rising(t: Trend | None) -> bool:
    return t is not None and t.ci95 is not None and t.ci95[0] > 0


def plateau_gain(pooled: list[Pooled]) -> tuple[float, tuple[float, float]] | None:
    """The reward of the last TRACK_PLATEAU_WINDOWS windows minus the ones before them, with its interval."""
    n = D.TRACK_PLATEAU_WINDOWS
    if len(pooled) < 2 * n:
        return None
    last, before = Pooled(), Pooled()
    for p in pooled[-n:]:
        last.merge(p)
    for p in pooled[-2 * n:-n]:
        before.merge(p)
    if last.reward.mean is None or before.reward.mean is None:
        return None
    gain = last.reward.mean - before.reward.mean
    return gain, normal(gain, math.hypot(last.reward.se or 0.0, before.reward.se or 0.0))


def command(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


def decide(alarms: dict[str, Alarm], judged: int, trend: dict[str, Trend], gain: tuple | None, run: str,
           latest: str | None) -> tuple[str, str, NextStep, list[NextStep]]:
    """(verdict, summary, next step, alternatives)."""
    route_latest = (NextStep(tool=Tool.ROUTE, arguments={"rows_path": latest}, command=command("pick-a-method", "route",
                                                                                           latest),
                             why="Route the newest step's rollouts: question 0 names the rows and the fix, and the "
                                 "band says which tasks are left to learn from.") if latest else None)
    after = NextStep(tool=Tool.AFTER, arguments={"before_rows_path": "<before_rows_path>",
                                              "after_rows_path": "<after_rows_path>", "frozen_path": "<frozen_path>"},
                     needs=["before_rows_path", "after_rows_path", "frozen_path"],
                     command="pick-a-method after <before_rows> <after_rows> --frozen <frozen.json>",
                     why="Evaluate the newest checkpoint on the frozen held-out tasks and compare with the base model.")
    keep = NextStep(tool=Tool.TRACK, arguments={"run": run}, command=command("pick-a-method", "track", run, "--follow"),
                    why="Keep the run going and keep watching it: each new window is judged as it lands.")
    alts = [s for s in (route_latest,) if s]
    grader = [alarms[n] for n in GRADER_ALARMS if n in alarms]
    if "cut_off_rising" in alarms and alarms["cut_off_rising"].holds_now:
        grader.append(alarms["cut_off_rising"])
    if grader:
        a = min(grader, key=lambda a: a.first_step)
        what = ", ".join(f"{x.name.replace('_', ' ')} (step {x.first_step})" for x in grader)
        fix = ("make a blank or cut-off reply fail" if a.name != "graded_both_ways"
               else "grade at temperature 0 or with fixed seeds")
        return ("fix_reward", f"Fix the grader: {what}. {a.evidence}. Stop the run, {fix}, and restart it (from a "
                              f"checkpoint before step {a.first_step}, if there is one).",
                route_latest or keep, [keep] if route_latest else [])
    link = alarms.get("length_follows_grade")
    if link and rising(trend.get("length_mean")) and rising(trend.get("reward")):
        return ("length_hacking", f"Length hacking since step {link.first_step}: reply length and reward rise "
                                  f"together while {link.evidence}. The reward pays for length: normalise it or fix "
                                  f"the judge, then restart from a checkpoint before step {link.first_step}.",
                route_latest or keep, alts and [keep])
    for name in ("band_emptied", "band_floor"):
        a = alarms.get(name)
        if a and a.holds_now:
            said = ("The band emptied" if name == "band_emptied" else "The band sits at the floor")
            do = ("stop and run `after` on the frozen held-out set, or route again on the newest rollouts to pick "
                  "harder tasks" if name == "band_emptied" else
                  "the tasks are too hard for the policy now: route again on the newest rollouts (easier tasks, more "
                  "rollouts per task, or a teacher)")
            first = (after, route_latest) if name == "band_emptied" else (route_latest, after)
            steps = [s for s in first if s]
            return (name, f"{said} (since step {a.first_step}): {a.evidence}. Next: {do}.", steps[0], steps[1:])
    a = alarms.get("collapsed")
    if a and a.holds_now:
        return ("collapsed", f"The replies collapsed (since step {a.first_step}): {a.evidence}. Stop: evaluate the "
                             f"checkpoint before step {a.first_step} with `after`, and restart with a higher KL or "
                             f"entropy term or a lower learning rate.", after, alts)
    if judged < D.TRACK_MIN_WINDOWS:
        return ("too_early", f"Too early: {judged} whole window(s) of steps, {D.TRACK_MIN_WINDOWS} needed to read a "
                             f"trend (pass window=K for smaller windows). Nothing alarming so far.", keep, alts)
    r = trend.get("reward")
    if gain is not None and gain[1] is not None and gain[1][1] < D.TRACK_PLATEAU_GAIN:
        n = D.TRACK_PLATEAU_WINDOWS
        return ("plateau", f"Plateau: the reward of the last {n} windows is {gain[0]:+.3f} [{gain[1][0]:+.3f}, "
                           f"{gain[1][1]:+.3f}] from the {n} before, under {D.TRACK_PLATEAU_GAIN:g} at its upper "
                           f"limit, while the band holds. Stop and run `after` on the frozen held-out set.",
                after, [keep])
    said = (f"rising {r.per_100_steps:+.3f} per 100 steps [{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]" if r and r.ci95
            else "not yet flat within its interval")
    return ("learning", f"Learning: the reward is {said}, the band holds, and no alarm fired. Keep going.", keep, alts)
