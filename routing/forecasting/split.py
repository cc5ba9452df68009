"""The split share at k from a fitted prior (routing.prior): each task's chance to split under its posterior,
the predicted share with its interval, the k that buys the most signal per rollout, the batch for a target
number of informative groups, and the measured signal of a group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import defaults as D
from pick_a_method.common.errors import InputError
from .prior import RatePrior, check_counts, distinct_pairs, fit_prior, resampled_priors


def _pair_chances(pairs: np.ndarray, a, b, zero, one, k_max: int):
    """Each distinct pair's chance to split at k under its posterior, one row per fit (a, b, zero, one: arrays
    over fits), as a function of k: the posterior's Beta part, Beta(a + c, b + n - c), times the chance the task
    is not a point mass given its counts. Neither factor falls as k grows, so neither does the chance.

    Every product below is over consecutive integers past a or b (a + c + j, j < k), so one cumulative sum of
    log(x + i) per fit, L[m] = sum_{i<m} log(x + i), gives any of them as L[stop] - L[start]: the logs cost
    fits x (max n + k), not fits x pairs x k at each k asked. Each sum is of log(x + i) - s, s a log near the
    middle of the range, added back as m x s: the sums stay small, so their differences keep the precision
    the direct sums had (about 1e-13)."""
    a, b, zero, one = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (a, b, zero, one))
    pc, pn = pairs[:, 0], pairs[:, 1]
    pf = pn - pc
    i = np.arange(int(pn.max()) + min(k_max, D.FORECAST_MAX_ROLLOUTS), dtype=np.float64)

    def cumulative(x):
        shift = np.log(x + len(i) / 2)
        out = np.zeros((len(x), len(i) + 1))
        np.cumsum(np.log(x[:, None] + i) - shift[:, None], axis=1, out=out[:, 1:])
        return out, shift

    (la, sa), (lb, sb), (lab, sab) = cumulative(a), cumulative(b), cumulative(a + b)
    da, db = (sa - sab)[:, None], (sb - sab)[:, None]  # the shifts, net of the denominator's
    weight = None
    if zero.any() or one.any():  # the chance the task is no point mass: its Beta part's share of its likelihood
        beta = np.exp(la[:, pc] + lb[:, pf] - lab[:, pn] + pc * da + pf * db) * (1 - zero - one)[:, None]
        mix = zero[:, None] * (pc == 0) + one[:, None] * (pc == pn) + beta
        weight = beta / np.maximum(mix, 1e-300)

    def at(k: int) -> np.ndarray:
        """1 - E[p^k] - E[(1-p)^k] for p ~ Beta(a + c, b + n - c): E[p^k] = prod_{j<k} (a+c+j) / (a+b+n+j)."""
        k = min(k, D.FORECAST_MAX_ROLLOUTS)
        log_total = lab[:, pn + k] - lab[:, pn]
        chance = (1.0 - np.exp(la[:, pc + k] - la[:, pc] - log_total + k * da)
                  - np.exp(lb[:, pf + k] - lb[:, pf] - log_total + k * db))
        chance = np.clip(chance, 0.0, 1.0)
        return chance if weight is None else chance * weight

    return at


def posterior_split_chance(passes: np.ndarray, rollouts: np.ndarray, k: int, prior: RatePrior) -> np.ndarray:
    """Each group's chance that k fresh rollouts hold a pass and a fail, under its posterior: Beta(a + c,
    b + n - c), weighted by the chance the task is not one of the prior's point masses."""
    c, n = check_counts(passes, rollouts)
    pairs, _, inverse = distinct_pairs(c, n, inverse=True)
    chance = _pair_chances(pairs, prior.a, prior.b, prior.zero, prior.one, k)(k)[0]
    return chance[inverse.reshape(-1)]


@dataclass(frozen=True)
class SplitPrediction:
    k: int
    share: float
    ci95: tuple[float, float] | None
    informative_per_1000_rollouts: float
    informative_per_million_tokens: float | None


def predict_split(passes: np.ndarray, rollouts: np.ndarray, ks=D.ROLLOUT_CANDIDATES, *,
                  prior: RatePrior | None = None, tokens: np.ndarray | None = None,
                  interval: bool = True) -> list[SplitPrediction]:
    """The predicted share of groups that split at each k, a 95% task-bootstrap interval on it, and informative groups per 1,000 rollouts (and per million tokens when `tokens`, the mean completion
    tokens of each group's rollouts, is given)."""
    c, n = check_counts(passes, rollouts)
    prior = prior or fit_prior(c, n)
    mean_tokens = None
    if tokens is not None:
        t = np.asarray(tokens, dtype=np.float64).reshape(-1)
        if t.shape != c.shape:
            raise InputError(f"tokens has {len(t)} entries for {len(c)} groups", field="tokens")
        mean_tokens = float(np.nanmean(t)) if np.isfinite(t).any() else None
    ks = sorted({int(k) for k in ks})
    if ks and ks[0] < 2:
        raise InputError(f"k is {ks[0]}; a group splits only with 2 or more rollouts", field="k")
    pairs, weight = distinct_pairs(c, n)
    k_max = ks[-1] if ks else 2
    chance_at = _pair_chances(pairs, prior.a, prior.b, prior.zero, prior.one, k_max)
    ranged = interval and len(c) >= D.MIN_CI_TASKS
    if ranged:
        # the tasks resampled and the prior refitted on each: the fit's own uncertainty, which dominates far
        # from the observed k, is in the interval
        refits, picks = resampled_priors(c, n, prior)
        refit_chance_at = _pair_chances(pairs, *refits, k_max)
    out = []
    for k in ks:
        share = float(weight @ chance_at(k)[0]) / len(c)
        ci = None
        if ranged:
            shares = (picks * refit_chance_at(k)).sum(axis=1) / len(c)
            lo, hi = np.quantile(shares, [0.025, 0.975])
            ci = (float(lo), float(hi))
        per_token = share / (k * mean_tokens) * 1e6 if mean_tokens else None
        out.append(SplitPrediction(k=k, share=share, ci95=ci, informative_per_1000_rollouts=share / k * 1000,
                                   informative_per_million_tokens=per_token))
    return out


def best_k(predictions: list[SplitPrediction]) -> int:
    """The k with the most informative groups per rollout (per token, where known: the same ordering, since a
    group of k costs k replies); ties go to the smaller k."""
    return max(predictions, key=lambda p: (round(p.informative_per_1000_rollouts, 9), -p.k)).k


def batch_for(target_groups: int, share: float) -> int | None:
    """Prompts per step that give `target_groups` informative groups per step on average; None when nothing
    splits."""
    if target_groups < 1:
        raise InputError(f"target_groups is {target_groups}; give 1 or more", field="target_groups")
    return None if share <= 0 else math.ceil(target_groups / share - 1e-9)


def suggest_group_size(predictions: list[SplitPrediction], k_now: int, n_tasks: int,
                       share_now: float) -> SplitPrediction | None:
    """The smallest k above k_now whose predicted split share gains D.MIN_SPLIT_GAIN over the share at k_now
    and reaches D.MIN_SPLIT_TASKS split tasks; None when no k does (then more rollouts per task do not fix
    the shortage: more tasks in the band do)."""
    enough = [p for p in predictions if p.k > k_now and p.share - share_now >= D.MIN_SPLIT_GAIN
              and p.share * n_tasks >= D.MIN_SPLIT_TASKS]
    return min(enough, key=lambda p: p.k) if enough else None


def group_signal(passes: np.ndarray, rollouts: np.ndarray, *, reward_sum: np.ndarray | None = None,
                 reward_sumsq: np.ndarray | None = None, reward_spread: np.ndarray | None = None,
                 binary: bool = True) -> tuple[np.ndarray, str]:
    """Which groups give a grouped method signal, and by which definition (D.SIGNAL_DEFINITIONS).

    Binary rewards: a pass rate strictly between 0 and 1. Otherwise the group's rewards must differ: spread
    within the group above rounding, identical non-binary rewards (0.7 four times) being no signal. The
    spread is `reward_spread` (each group's sum of squared deviations from its mean, the stable form) or
    else sumsq - sum^2 / n from `reward_sum` and `reward_sumsq`."""
    c, n = check_counts(passes, rollouts)
    if binary:
        return (c > 0) & (c < n) & (n >= 2), D.SIGNAL_DEFINITIONS["binary"]
    with np.errstate(over="ignore", invalid="ignore"):  # rewards near 1e308: no signal claimed from inf - inf
        if reward_spread is not None:
            spread = np.asarray(reward_spread, dtype=np.float64).reshape(-1)
            scale = np.ones_like(spread) if reward_sumsq is None else np.asarray(reward_sumsq, dtype=np.float64)
        elif reward_sum is not None and reward_sumsq is not None:
            total = np.asarray(reward_sum, dtype=np.float64).reshape(-1)
            scale = np.asarray(reward_sumsq, dtype=np.float64).reshape(-1)
            spread = scale - total * total / n if total.shape == c.shape else total
        else:
            raise InputError("non-binary rewards need each group's reward spread (or its sum and sum of squares)",
                             field="reward_spread")
        if spread.shape != c.shape or np.shape(scale) != c.shape:
            raise InputError("the reward spread (or sum and sum of squares) needs one entry per group",
                             field="reward_spread")
        has = (n >= 2) & (spread > 1e-9 * np.maximum(1.0, scale))
    return has, D.SIGNAL_DEFINITIONS["spread"]
