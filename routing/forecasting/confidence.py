"""How sure the route is: resample the tasks and re-decide every question the data
decides (one rollout or grouped, floor / saturated / mixed, few split tasks, teacher clears).

The resample is the pass@1 bootstrap's: n tasks drawn with replacement, which for per-task counts is a
multinomial over the distinct (passes, rollouts) pairs, so the cost is draws x distinct pairs, not draws x
tasks. Everything else the route reads (truncation, on-policy, the teacher's budget and tokenizer) is held
as decided; `tail` names the route those questions lead to.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from pick_a_method.common import methods as M
from pick_a_method.common.errors import InputError

from .. import defaults as D
from .prior import narrowed
from ..stats import distinct, score_intervals

_MAX_CELLS = 1 << 23  # draws x distinct pairs held at once


@dataclass(frozen=True)
class Confidence:
    route: str  # the label on the data as given
    confidence: float  # share of resamples giving that label
    runner_up: str | None
    runner_up_share: float
    draws: int
    shares: dict[str, float]


def _pairs(passes, rollouts, what: str, signal=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (passes, rollouts, signal) triples: passes, rollouts, signal flag, and how many tasks hold each."""
    c = np.asarray(passes, dtype=np.int64).reshape(-1)
    n = np.asarray(rollouts, dtype=np.int64).reshape(-1)
    if c.shape != n.shape or len(n) == 0 or (n < 1).any() or (c < 0).any() or (c > n).any():
        raise InputError(f"{what}: give per-task passes in 0..rollouts and rollouts of 1 or more, one each",
                         field=what)
    flag = ((c > 0) & (c < n)) if signal is None else np.asarray(signal, dtype=bool).reshape(-1)
    if flag.shape != c.shape:
        raise InputError(f"{what}: signal needs one flag per task", field="signal")
    base = int(n.max()) + 1
    # one integer per triple: a 1-D unique is many times faster than one over rows
    keys, weight = distinct((n * base + c) * 2 + flag)
    pair = keys // 2
    n_pairs = pair // base
    return (pair - n_pairs * base).astype(np.float64), n_pairs.astype(np.float64), (keys % 2).astype(bool), weight


def _draw(weight: np.ndarray, draws: int, rng, fresh: bool = True) -> np.ndarray:
    """Task counts over the distinct pairs, one row per draw; draw 0 is the data itself, so the label on the data
    is what the route decided. `fresh`: each draw is a resample of a resample (a population drawn from the
    data, then an eval of the same size drawn from it), so it spreads as a second, independent eval would
    around the first (twice a single resample's variance) rather than as the first around the truth."""
    n = int(weight.sum())
    picks = rng.multinomial(n, weight / n, size=draws)
    if fresh:
        picks = rng.multinomial(n, picks / n)
    picks = picks.astype(np.float64)
    picks[0] = weight
    return picks


def _arm_intervals(picks, c, n, level):
    """pass@1 and its interval on each resample, from the resample's moments (as pass_at computes it)."""
    tasks = picks.sum(axis=1)
    rate = c / n
    mean = picks @ rate / tasks
    square = picks @ (rate * rate) / tasks
    var = np.maximum(square - mean * mean, 0.0) * tasks / np.maximum(tasks - 1, 1)
    n_max = tasks * tasks / (picks @ (1.0 / n))
    lo, hi = score_intervals(mean, var, int(tasks[0]), n_max=n_max, level=level)
    return mean, lo, hi


def route_labels(passes, rollouts, *, tail: str = M.GRPO.name, teacher: tuple | None = None, signal=None,
                 effect: float = D.PROVE_EFFECT, draws: int = D.CONFIDENCE_DRAWS,
                 seed: int = D.BOOTSTRAP_SEED, level: float = D.CI_LEVEL,
                 fresh: bool = D.CONFIDENCE_FRESH) -> list[str]:
    """The route label on each of `draws` task resamples (draw 0 is the data itself). `signal`: which tasks
    give a grouped method signal (default: passes strictly between 0 and rollouts)."""
    # counts past FORECAST_MAX_ROLLOUTS read as the forecasts read them (a pass and a fail kept): the resamples'
    # cost grows with the distinct counts, and a band's labels do not change
    c, n, flag, weight = _pairs(*narrowed(passes, rollouts), "passes", signal)
    draws = max(1, min(draws, _MAX_CELLS // max(len(c), 1)))
    rng = np.random.default_rng(seed)
    picks = _draw(weight, draws, rng, fresh)
    tasks = picks.sum(axis=1)
    # tasks of each kind per draw: whole numbers, summed exactly (as a matrix product would, without BLAS's threads)
    single, fail, passed, split = (picks[:, kind].sum(axis=1) for kind in (n == 1, c == 0, c == n, flag & (n >= 2)))
    labels = np.full(draws, tail, dtype=object)
    if tail in (M.GRPO.name, M.ASYNC.name):
        labels[split < D.MIN_SPLIT_TASKS] = f"{tail}+{M.REINFORCE_ADA.label}"
    if teacher is not None:
        tc, tn, _, tw = _pairs(*narrowed(*teacher), "teacher")
        t_mean, t_lo, _ = _arm_intervals(_draw(tw, draws, rng, fresh), tc, tn, level)
        s_mean, _, s_hi = _arm_intervals(picks, c, n, level)
        clears = (t_mean - s_mean >= effect) & (t_lo > s_hi)
        labels[clears] = M.OPD.name
    labels[passed == tasks] = "saturated"
    labels[fail == tasks] = "floor"
    labels[(single == tasks) | (single * 2 > tasks)] = "single_rollout"
    return labels.tolist()


def route_confidence(passes, rollouts, **kwargs) -> Confidence:
    """The share of resamples that give the data's own route, and the most common other route with its share."""
    labels = route_labels(passes, rollouts, **kwargs)
    counts = Counter(labels)
    own = labels[0]
    others = [(label, k) for label, k in counts.most_common() if label != own]
    total = len(labels)
    return Confidence(route=own, confidence=counts[own] / total, runner_up=others[0][0] if others else None,
                      runner_up_share=others[0][1] / total if others else 0.0, draws=total,
                      shares={label: k / total for label, k in counts.most_common()})
