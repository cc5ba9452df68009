"""The statistics behind the verdicts: a task bootstrap, the unbiased pass@k / pass^k estimators, sizing.

The bootstrap resamples tasks, not rows (Miller 2024, arXiv:2411.00640). Per-task pass rates take few
distinct values (c/n), so one resample of n tasks is a multinomial draw over those values: the cost grows
with draws x distinct values, not draws x tasks.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from . import defaults as D
from .errors import InputError

MAX_TASKS = 1e15  # past this a held-out size means "not provable", and the arithmetic overflows soon after

_MAX_CATEGORIES = 4096  # beyond this many distinct values, resample indices in blocks instead
_BLOCK_CELLS = 1 << 22


def percentile_interval(means: np.ndarray, level: float = D.CI_LEVEL) -> tuple[float, float]:
    """Order statistics of sorted resample means, as the anchor takes them (2000 draws: 50th and 1949th)."""
    means = np.sort(means)
    draws = len(means)
    lo = int((1 - level) / 2 * draws)
    hi = int((1 + level) / 2 * draws) - 1
    return float(means[lo]), float(means[hi])


def bootstrap_moments(values: np.ndarray, *, draws: int = D.BOOTSTRAP_DRAWS,
                      seed: int = D.BOOTSTRAP_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance (ddof 1) of `draws` resamples (with replacement, same size) of `values`."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) <= _MAX_CATEGORIES:
        picks = rng.multinomial(n, counts / n, size=draws).astype(np.float64)
        mean = picks @ distinct / n
        square = picks @ (distinct * distinct) / n
    else:
        mean, square = np.empty(draws), np.empty(draws)
        block = max(1, _BLOCK_CELLS // n)
        for start in range(0, draws, block):
            stop = min(draws, start + block)
            sample = values[rng.integers(0, n, size=(stop - start, n))]
            mean[start:stop] = sample.mean(axis=1)
            square[start:stop] = (sample * sample).mean(axis=1)
    var = np.maximum(square - mean * mean, 0.0) * (n / max(n - 1, 1))
    return mean, var


def bootstrap_means(values: np.ndarray, *, draws: int = D.BOOTSTRAP_DRAWS, seed: int = D.BOOTSTRAP_SEED) -> np.ndarray:
    """Means of `draws` resamples (with replacement, same size) of `values`."""
    return bootstrap_moments(values, draws=draws, seed=seed)[0]


def bootstrap_ci(values: np.ndarray, *, draws: int = D.BOOTSTRAP_DRAWS, level: float = D.CI_LEVEL,
                 seed: int = D.BOOTSTRAP_SEED) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of the mean, or None under MIN_CI_TASKS values."""
    if len(values) < D.MIN_CI_TASKS:
        return None
    return percentile_interval(bootstrap_means(values, draws=draws, seed=seed), level)


def pass_at_k_per_group(n: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Unbiased per-group pass@k = 1 - C(n-c, k)/C(n, k) (Chen et al. 2021) and pass^k = C(c, k)/C(n, k)
    (Yao et al. 2024, tau-bench). Groups must have n >= k. Exact integer combinatorics per distinct (n, c)."""
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    at_k = np.empty(len(pairs))
    pow_k = np.empty(len(pairs))
    for j, (nj, cj) in enumerate(pairs.tolist()):
        total = math.comb(nj, k)
        at_k[j] = 1.0 - math.comb(nj - cj, k) / total
        pow_k[j] = math.comb(cj, k) / total
    inverse = inverse.reshape(-1)
    return at_k[inverse], pow_k[inverse]


def split_probability(p: np.ndarray, k: int) -> np.ndarray:
    """Chance that k draws at pass rate p hold both a pass and a fail: 1 - p^k - (1-p)^k."""
    return 1.0 - p**k - (1.0 - p) ** k


def z_power(power: float, alpha: float) -> float:
    """Phi^-1(1 - alpha/2) + Phi^-1(power), exact (2.801585 at 0.8 / 0.05)."""
    nd = NormalDist()
    return nd.inv_cdf(1 - alpha / 2) + nd.inv_cdf(power)


def tasks_needed(sd: float, effect: float, power: float, alpha: float) -> int:
    """Paired tasks to detect `effect` given one task's paired-difference sd."""
    ratio = z_power(power, alpha) * sd / effect
    inner = 1.0 if sd == 0 else ratio * ratio  # a float product overflows to inf, where ** 2 raises
    if not inner <= MAX_TASKS:
        raise InputError(f"proving a gain of {effect:g} against a task sd of {sd:g} takes more than {MAX_TASKS:.0e} "
                         f"held-out tasks; prove a larger effect (or check task_std)", field="effect")
    return max(D.MIN_HOLDOUT_TASKS, math.ceil(inner - 1e-9))
