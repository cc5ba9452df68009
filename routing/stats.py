"""The statistics behind the verdicts: task-level intervals, a task bootstrap, the unbiased pass@k / pass^k
estimators, sizing.

Both treat the task as the unit (Miller 2024, arXiv:2411.00640). The intervals are analytic (the
percentile bootstrap ran short with few tasks and skewed rates; bench/coverage_bench.py has the table). The
bootstrap stays for what has no closed form (holdout_size's range, the route's confidence): per-task pass
rates take few distinct values (c/n), so one resample of n tasks is a multinomial draw over those values,
and the cost grows with draws x distinct values, not draws x tasks.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from . import defaults as D
from pick_a_method.common.errors import InputError

MAX_TASKS = 1e15  # past this a held-out size means "not provable", and the arithmetic overflows soon after

_MAX_CATEGORIES = 4096  # beyond this many distinct values, resample indices in blocks instead
_BLOCK_CELLS = 1 << 22


def distinct(keys: np.ndarray, *, index: bool = False, inverse: bool = False) -> tuple[np.ndarray, ...]:
    """np.unique(keys, return_index=index, return_inverse=inverse, return_counts=True) for non-negative integer keys:
    the same arrays, by one bincount over the keys' range where it is small beside their number (keys packed from
    counts and codes), so no sort; np.unique itself otherwise."""
    keys = np.asarray(keys).reshape(-1)
    top = int(keys.max()) + 1 if len(keys) else 0
    if not len(keys) or top > 4 * len(keys) + (1 << 16) or keys.min() < 0:
        return np.unique(keys, return_index=index, return_inverse=inverse, return_counts=True)
    counts = np.bincount(keys, minlength=top)
    values = np.flatnonzero(counts)
    out = [values.astype(keys.dtype, copy=False)]
    if index or inverse:
        where = np.zeros(top, dtype=np.intp)
        where[values] = np.arange(len(values))
        codes = where[keys]
    if index:  # each value's first position
        first = np.full(len(values), len(keys), dtype=np.intp)
        np.minimum.at(first, codes, np.arange(len(keys)))
        out.append(first)
    if inverse:
        out.append(codes)
    out.append(counts[values])
    return tuple(out)


def percentile_interval(means: np.ndarray, level: float = D.CI_LEVEL) -> tuple[float, float]:
    """Order statistics of sorted resample means, as the anchor takes them (2000 draws: 50th and 1949th); kept
    for bench/coverage_bench.py's comparison and for ranges with no closed form."""
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


def t_quantile(p: float, df: float) -> float:
    """Student-t quantile: exact at df 1 and 2, else the Cornish-Fisher series in 1/df (Abramowitz & Stegun
    26.7.5; |error| < 4e-3 at df 3, < 2e-5 from df 9). The normal quantile at infinite df."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    if not math.isfinite(df):
        return z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def rate_intervals(values: np.ndarray, *, n_max: float | np.ndarray = np.inf, level: float = D.CI_LEVEL,
                   agresti_floor: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The task-level interval on the mean of per-task values in [0, 1], one per row of `values` (evals x tasks).

    A score interval on an effective sample size (D.RATE_INTERVAL): m = p(1-p) / var(mean) tasks, shrunk by
    (z / t_{n-1})^2 for the estimated variance (Korn & Graubard 1998) and held in [n, n_max]. m = n is the
    bound: no [0, 1] value varies more than p(1-p), so there the variance is known, not estimated, and the
    interval is Agresti-Coull on n tasks; above it, Wilson on m. A set at one rate (every task passes, say)
    has no variance estimate and gets the task-level interval: n tasks, not a point. n_max (total rollouts
    for pass rates) is the most a sample can be worth: every task at the same rate. `agresti_floor=False` keeps
    Wilson at the floor too (the limits MOVER combines, D.PAIRED_INTERVAL)."""
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    n = values.shape[1]
    return score_intervals(values.mean(axis=1), values.var(axis=1, ddof=1), n, n_max=n_max, level=level,
                           agresti_floor=agresti_floor)


def score_intervals(mean: np.ndarray, var: np.ndarray, n: int, *, n_max: float | np.ndarray = np.inf,
                    level: float = D.CI_LEVEL, agresti_floor: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """`rate_intervals` from each sample's mean and sample variance (ddof 1) over n tasks, so a resample
    needs only its moments (the route's confidence re-decides thousands of them)."""
    p = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64) / n
    z = NormalDist().inv_cdf((1 + level) / 2)
    shrink = (z / t_quantile((1 + level) / 2, n - 1)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        m = p * (1 - p) / var * shrink
    m = np.where(var > 0, np.clip(np.nan_to_num(m, nan=n, posinf=n), n, n_max), float(n))
    total = m + z * z
    centre = (m * p + z * z / 2) / total
    wilson = z / total * np.sqrt(np.maximum(m * p * (1 - p), 0.0) + z * z / 4)
    agresti = z * np.sqrt(centre * (1 - centre) / total)
    half = np.where(m <= n, agresti, wilson) if agresti_floor else wilson
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def paired_intervals(a: np.ndarray, b: np.ndarray, *, n_max_a: float | np.ndarray = np.inf,
                     n_max_b: float | np.ndarray = np.inf, level: float = D.CI_LEVEL,
                     agresti_floor: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The interval on mean(a - b) over paired tasks (rows: evals, columns: shared tasks), both in [0, 1]:
    MOVER (D.PAIRED_INTERVAL) recovers it from each arm's Wilson limits on its effective sample size and the
    tasks' correlation, so it keeps their asymmetry near 0 or 1, where a symmetric interval on the differences
    runs short. Wilson, not pass_at's Agresti-Coull, at the floor: Newcombe's method 10 squares and adds score
    limits, and Agresti-Coull's wider ones made the sum run wide by the ceiling (0.976 at 40 one-rollout tasks;
    `agresti_floor=True` is the first analytic version, kept for bench/coverage_bench.py's before/after)."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    la, ua = rate_intervals(a, n_max=n_max_a, level=level, agresti_floor=agresti_floor)
    lb, ub = rate_intervals(b, n_max=n_max_b, level=level, agresti_floor=agresti_floor)
    pa, pb = a.mean(axis=1), b.mean(axis=1)
    ca, cb = a - pa[:, None], b - pb[:, None]
    den = np.sqrt((ca * ca).sum(axis=1) * (cb * cb).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(den > 0, (ca * cb).sum(axis=1) / den, 0.0)
    d = pa - pb
    low = d - np.sqrt(np.maximum((pa - la) ** 2 + (ub - pb) ** 2 - 2 * rho * (pa - la) * (ub - pb), 0.0))
    high = d + np.sqrt(np.maximum((ua - pa) ** 2 + (pb - lb) ** 2 - 2 * rho * (ua - pa) * (pb - lb), 0.0))
    return np.maximum(low, -1.0), np.minimum(high, 1.0)


def _difference_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """Differences alone (no arms): t on n - 1 df; a set of equal differences gets the rule-of-three share of
    tasks (z^2 / (n + z^2)) that may differ by up to 1 unseen."""
    n = len(values)
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    half = t_quantile((1 + level) / 2, n - 1) * sd / math.sqrt(n)
    if sd == 0:
        z = NormalDist().inv_cdf((1 + level) / 2)
        half = z * z / (n + z * z)
    return max(mean - half, -1.0), min(mean + half, 1.0)


def task_ci(values: np.ndarray, *, level: float = D.CI_LEVEL,
            rollouts: np.ndarray | None = None) -> tuple[float, float] | None:
    """95% interval of the mean of per-task values, or None under MIN_CI_TASKS tasks. Values in [0, 1]
    (pass rates, pass@k): `rate_intervals`, capped at the binomial worth of `rollouts` per task when given;
    values below 0 (differences): t with a rule-of-three floor (prefer `paired_ci`, which sees both arms)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < D.MIN_CI_TASKS:
        return None
    if values.min() < 0:
        return _difference_interval(values, level)
    lo, hi = rate_intervals(values, n_max=rollouts_worth(len(values), rollouts), level=level)
    return float(lo[0]), float(hi[0])


def rollouts_worth(tasks: int, rollouts: np.ndarray | None) -> float:
    """The most n tasks' mean rate can be worth in rollouts (n^2 / sum(1/k): n x k at k each); inf unknown."""
    return np.inf if rollouts is None else tasks ** 2 / float(np.sum(1.0 / np.asarray(rollouts, dtype=np.float64)))


def paired_ci(a: np.ndarray, b: np.ndarray, *, level: float = D.CI_LEVEL, rollouts_a: np.ndarray | None = None,
              rollouts_b: np.ndarray | None = None) -> tuple[float, float] | None:
    """95% interval of mean(a - b) over paired per-task rates, or None under MIN_CI_TASKS shared tasks; each
    arm capped at what its rollouts per task are worth when given (as task_ci)."""
    if len(a) < D.MIN_CI_TASKS:
        return None
    lo, hi = paired_intervals(a, b, n_max_a=rollouts_worth(len(a), rollouts_a),
                              n_max_b=rollouts_worth(len(b), rollouts_b), level=level)
    return float(lo[0]), float(hi[0])


# The questions' name for the interval; it was the anchor's percentile bootstrap before the analytic intervals.
bootstrap_ci = task_ci


def pass_at_k_per_group(n: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Unbiased per-group pass@k = 1 - C(n-c, k)/C(n, k) (Chen et al. 2021) and pass^k = C(c, k)/C(n, k)
    (Yao et al. 2024, tau-bench). Groups must have n >= k. Exact integer combinatorics per distinct (n, c)."""
    n, c = np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)
    base = int(n.max()) + 1 if len(n) else 1
    # a 1-D unique of (size code, passes): sizes are few, so the keys stay small enough for a bincount
    sizes, size_code, _ = distinct(n, inverse=True)
    keys, inverse, _ = distinct(size_code * base + c, inverse=True)
    pairs = np.stack([sizes[keys // base], keys % base], axis=1)
    # under k fails C(n-c, k) is 0, so pass@k is 1.0; under k passes C(c, k) is 0, so pass^k is 0.0: only the
    # pairs with k of either need the integers
    at_k = np.ones(len(pairs))
    pow_k = np.zeros(len(pairs))
    for j in np.flatnonzero((pairs[:, 0] - pairs[:, 1] >= k) | (pairs[:, 1] >= k)).tolist():
        nj, cj = pairs[j].tolist()
        total = math.comb(nj, k)
        at_k[j] = 1.0 - math.comb(nj - cj, k) / total
        pow_k[j] = math.comb(cj, k) / total
    inverse = inverse.reshape(-1)
    return at_k[inverse], pow_k[inverse]


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


def midranks(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each value's rank within its group, ties given their mean rank (1-based)."""
    order = np.lexsort((values, group))
    g, v = group[order], values[order]
    new_group = np.concatenate(([True], g[1:] != g[:-1]))
    new_value = new_group | np.concatenate(([True], v[1:] != v[:-1]))
    position = np.arange(len(order)) - np.maximum.accumulate(np.where(new_group, np.arange(len(order)), 0)) + 1
    tie = np.cumsum(new_value) - 1
    first = np.flatnonzero(new_value)
    last = np.append(first[1:], len(order)) - 1
    mean = (position[first] + position[last]) / 2.0
    ranks = np.empty(len(order))
    ranks[order] = mean[tie]
    return ranks


def within_group_spearman(group: np.ndarray, x: np.ndarray,
                          y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spearman's rho of x and y within each group (0..G-1), from mid-ranks: (rows per group, the mask of groups
    where both vary, rho over those groups). Question 0's length check and track's per-step one both read it."""
    rx, ry = midranks(group, x), midranks(group, y)
    n = np.bincount(group).astype(np.float64)
    centre = (n + 1) / 2.0
    dx, dy = rx - centre[group], ry - centre[group]
    sxy = np.bincount(group, weights=dx * dy, minlength=len(n))
    sxx = np.bincount(group, weights=dx * dx, minlength=len(n))
    syy = np.bincount(group, weights=dy * dy, minlength=len(n))
    use = (sxx > 0) & (syy > 0)  # both vary (so n >= 2)
    return n, use, sxy[use] / np.sqrt(sxx[use] * syy[use])

