"""The verdict rule of `after`, by precedence, over arrays (one entry per eval): `after` judges one eval with it,
the simulations thousands at once, so what is tested is what runs.

    not_comparable     the arms are not on the same tasks (or not the frozen ones), or not at the same token cap
    worse              the gain's interval lies below 0, or a guard regressed (Holm across the guards)
    contamination      the random-reward arm gains over before (its interval above 0), or the real arm gains
                       (interval above 0) and the random-reward arm gained at least as much (mean)
    selection_problem  the real arm gains but does not beat its random selection (after - selection reaches 0),
                       and the selection gained significantly or at least as much (mean)
    proven             the gain's interval lies above 0, and after - control above 0 for each control given
    no_gain            the gain's interval lies below the registered effect: a real null, bounded
    underpowered       none of these: the evidence sizes what would decide
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stats import Diff

VERDICTS = ("not_comparable", "worse", "contamination", "selection_problem", "proven", "no_gain", "underpowered")


@dataclass(frozen=True)
class Control:
    """A control arm: its gain over before (control - before) and the real arm over it (after - control)."""

    gain: Diff
    beaten: Diff


def explains(control: Control, gain: Diff) -> np.ndarray:
    """The control accounts for the real gain: it gained significantly, or at least as much as the real arm."""
    return (control.gain.lo > 0) | (control.gain.mean >= gain.mean)


def decide(gain: Diff, effect: float, *, random_reward: Control | None = None,
           random_selection: Control | None = None, guard_regressed: np.ndarray | None = None,
           comparable: np.ndarray | None = None) -> np.ndarray:
    """The verdict per eval (an array of VERDICTS names). NaN limits (no interval) decide nothing."""
    shape = gain.mean.shape
    no = np.zeros(shape, dtype=bool)
    gains = gain.lo > 0
    contaminated = no
    if random_reward is not None:
        contaminated = (random_reward.gain.lo > 0) | (gains & explains(random_reward, gain))
    selection = no
    beats_controls = np.ones(shape, dtype=bool)
    for control in (random_reward, random_selection):
        if control is not None:
            beats_controls &= control.beaten.lo > 0
    if random_selection is not None:
        selection = gains & ~(random_selection.beaten.lo > 0) & explains(random_selection, gain)
    worse = gain.hi < 0
    if guard_regressed is not None:
        worse = worse | guard_regressed
    conditions = [no if comparable is None else ~comparable, worse, contaminated, selection, gains & beats_controls,
                  gain.hi < effect]
    return np.select(conditions, list(VERDICTS[:-1]), default=VERDICTS[-1])
