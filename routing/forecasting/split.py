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
from .prior import RatePrior, check_counts, distinct_pairs, fit_prior, pair_log_beta, resampled_priors


def _pair_chance(pairs: np.ndarray, k: int, a, b, zero, one) -> np.ndarray:
    """Each distinct pair's chance to split at k under its posterior, one row per fit (a, b, zero, one: arrays
    over fits): the posterior's Beta part, Beta(a + c, b + n - c), times the chance the task is not a point
    mass given its counts. Neither factor falls as k grows, so neither does the chance."""
    a, b, zero, one = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (a, b, zero, one))
    pc, pn = pairs[:, 0].astype(np.float64), pairs[:, 1].astype(np.float64)
    chance = _split_chance(a[:, None] + pc, b[:, None] + pn - pc, min(k, D.FORECAST_MAX_ROLLOUTS))
    if not (zero.any() or one.any()):
        return chance
    j = np.arange(int(pairs[:, 1].max()))
    ta, tb, tn = (pairs[:, :1] > j) * 1.0, ((pairs[:, 1:] - pairs[:, :1]) > j) * 1.0, (pairs[:, 1:] > j) * 1.0
    beta = np.exp(pair_log_beta(ta, tb, tn, a, b)) * (1 - zero - one)[:, None]
    mix = zero[:, None] * (pairs[:, 0] == 0) + one[:, None] * (pairs[:, 0] == pairs[:, 1]) + beta
    return chance * beta / np.maximum(mix, 1e-300)


def _split_chance(alpha: np.ndarray, beta: np.ndarray, k: int) -> np.ndarray:
    """1 - E[p^k] - E[(1-p)^k] for p ~ Beta(alpha, beta), elementwise: E[p^k] = prod_{j<k} (alpha+j)/(alpha+beta+j)."""
    j = np.arange(k, dtype=np.float64)
    al, be = alpha[..., None], beta[..., None]
    log_total = np.log(al + be + j).sum(axis=-1)
    chance = 1.0 - np.exp(np.log(al + j).sum(axis=-1) - log_total) - np.exp(np.log(be + j).sum(axis=-1) - log_total)
    return np.clip(chance, 0.0, 1.0)


def posterior_split_chance(passes: np.ndarray, rollouts: np.ndarray, k: int, prior: RatePrior) -> np.ndarray:
    """Each group's chance that k fresh rollouts hold a pass and a fail, under its posterior: Beta(a + c,
    b + n - c), weighted by the chance the task is not one of the prior's point masses."""
    c, n = check_counts(passes, rollouts)
    pairs, _, inverse = distinct_pairs(c, n, inverse=True)
    chance = _pair_chance(pairs, k, prior.a, prior.b, prior.zero, prior.one)[0]
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
    pairs, weight = distinct_pairs(c, n)
    if interval and len(c) >= D.MIN_CI_TASKS:
        # the tasks resampled and the prior refitted on each: the fit's own uncertainty, which dominates far
        # from the observed k, is in the interval
        refits, picks = resampled_priors(c, n, prior)
    out = []
    for k in sorted({int(k) for k in ks}):
        if k < 2:
            raise InputError(f"k is {k}; a group splits only with 2 or more rollouts", field="k")
        share = float(weight @ _pair_chance(pairs, k, prior.a, prior.b, prior.zero, prior.one)[0]) / len(c)
        ci = None
        if interval and len(c) >= D.MIN_CI_TASKS:
            chance = _pair_chance(pairs, k, *refits)
            shares = (picks * chance).sum(axis=1) / len(c)
            ci = (float(np.quantile(shares, 0.025)), float(np.quantile(shares, 0.975)))
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
