"""Simulated training runs for track's calibration: each step G groups of k rollouts, each group a task whose pass
rate is drawn from Beta(A, B); replies of log-normal length, each its own text; a cut-off share of rows that fail.
A change starts at `at` and holds to the end; the steps go straight to the core's summaries (no files)."""

from __future__ import annotations

import numpy as np

from pick_a_method.routing.during_training.rollouts import StepRows
from pick_a_method.routing.during_training.summary import summarise
from pick_a_method.routing.during_training.tracker import judge_steps

GROUPS, K, STEPS, WINDOW = 32, 8, 200, 10
A, B = 1.0, 1.0  # pass rates uniform: about 78% of groups of 8 split
CUT = 0.05
CHANGES = ("band_empties", "blank_passes", "length_biased", "collapse", "cut_off_doubles")
# the alarm each designed change must sound
FINDS = {"band_empties": "band_emptied", "blank_passes": "blank_passes", "length_biased": "length_follows_grade",
         "collapse": "collapsed", "cut_off_doubles": "cut_off_rising"}


def step_rows(rng: np.random.Generator, step: int, change: str | None, on: bool) -> StepRows:
    n = GROUPS * K
    group = np.repeat(np.arange(GROUPS), K)
    p = rng.beta(A, B, GROUPS)
    if on and change == "band_empties":
        p = np.where(rng.random(GROUPS) < 0.95, 1.0, p)  # nearly every task now always solved
    length = np.exp(rng.normal(5.5, 0.5, n)).astype(np.int32) + 1
    logit = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1))[group]
    if on and change == "length_biased":  # the grade now follows length within the group
        z = (np.log(length) - 5.5) / 0.5
        logit = logit + 0.8 * z
    reward = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    cut_share = 2 * CUT if on and change == "cut_off_doubles" else CUT
    truncated = (rng.random(n) < cut_share) & (p[group] < 1)  # a task always solved is solved short
    reward[truncated] = 0.0
    length[truncated] = 4000
    reply_hash = rng.integers(-2**62, 2**62, n)
    if on and change == "collapse":  # most replies copy the group's first
        copy = rng.random(n) < 0.7
        reply_hash = np.where(copy, reply_hash[group * K], reply_hash)
        length = np.where(copy, length[group * K], length)
        reward = np.where(copy & ~truncated, reward[group * K], reward)
    if on and change == "blank_passes":
        blank = rng.random(n) < 0.01
        length[blank], reward[blank], truncated[blank] = 0, 1.0, False
    return StepRows(step, group, reward, truncated, reply_hash, length.astype(np.int32),
                    np.arange(1, n + 1), f"sim/{step}.jsonl")


def found(track, change: str, at: int) -> bool:
    """The change's alarm fired in the window holding its start or the two after (within 3 windows)."""
    start = (at - 1) // WINDOW
    alarm = next((a for a in track.alarms if a.name == FINDS[change]), None)
    return alarm is not None and start <= alarm.window < start + 3


def run(seed: int, change: str | None = None, at: int = 105):
    rng = np.random.default_rng(seed)
    steps = [summarise(step_rows(rng, s, change, s >= at)) for s in range(1, STEPS + 1)]
    return judge_steps(steps, window=WINDOW)
