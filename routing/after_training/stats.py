"""The numbers behind `after`: each arm's per-task numbers on one task list, paired differences with the project's
interval (stats.paired_intervals), Holm's step-down over guards, flips, and the size that would decide.

Everything here takes arrays with one row per eval (the simulations judge thousands at once) or one eval (`after`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import defaults as D
from ..paired import diff_sd, model_sd
from ..rows import GradedRows
from ..stats import paired_intervals, rollouts_worth, task_ci, tasks_needed, z_power
from ..table import table_of


@dataclass(frozen=True)
class ArmNumbers:
    """One arm on the compared tasks (one entry per task, in the compared order)."""

    rates: np.ndarray  # mean pass rate over the task's graded groups
    worth: np.ndarray  # rollouts that mean is worth: g^2 / sum(1/n) over its g groups (Table.task_worth)
    var_mean: np.ndarray  # unbiased sampling variance of that mean, sum(s_j^2 / n_j) / g^2; NaN below 2 rollouts
    cut: np.ndarray  # share of the task's rows cut off at the token cap, among rows that say; NaN where none say
    tokens: np.ndarray  # mean completion tokens of the task's rows that state them; NaN where none do
    k: int  # the smallest graded group
    n_rows: int  # the arm's rows on these tasks, graded or not

    @property
    def n(self) -> int:
        return len(self.rates)

    def pass_at_1(self) -> tuple[float | None, tuple[float, float] | None]:
        if not self.n:
            return None, None
        return float(self.rates.mean()), task_ci(self.rates, rollouts=self.worth)


def positions(names: list[str], tasks: list[str], index: dict[str, int] | None = None) -> np.ndarray:
    """For each of the rows' task names, its column in `tasks` (`index`: tasks' name -> column, when already built),
    or -1. Arms read from files of one suite usually list the same tasks in the same order: then it is a range."""
    if names == tasks:
        return np.arange(len(names), dtype=np.int64)
    index = {name: i for i, name in enumerate(tasks)} if index is None else index
    return np.array([index.get(name, -1) for name in names], dtype=np.int64)


def graded_tasks(rows: GradedRows, pass_threshold: float) -> list[str]:
    """The tasks with at least one graded rollout, in first-seen order."""
    t = table_of(rows, pass_threshold).graded()
    codes = t.task if not t.several else np.unique(t.task)  # one group a task: already unique, in order
    if len(codes) == rows.n_tasks:
        return rows.task_names
    return [rows.task_names[i] for i in codes.tolist()]


def arm_numbers(rows: GradedRows, tasks: list[str], pass_threshold: float,
                index: dict[str, int] | None = None) -> ArmNumbers:
    """The arm's numbers on `tasks` (every one must have a graded group: the caller compares shared tasks)."""
    m = len(tasks)
    where = positions(rows.task_names, tasks, index)
    t = table_of(rows, pass_threshold).graded()
    col = where[t.task]
    keep = col >= 0
    col, n, c = col[keep], t.n[keep].astype(np.float64), t.c[keep].astype(np.float64)
    per = lambda w: np.bincount(col, weights=w, minlength=m)  # noqa: E731
    groups = np.bincount(col, minlength=m).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = per(c / n) / groups
        worth = groups * groups / per(1.0 / n)
        s2 = np.where(n > 1, c * (n - c) / (n * (n - 1)), np.nan)  # unbiased variance of one rollout's pass
        var_mean = per(s2 / n) / (groups * groups)
        row_col = where[rows.task]
        if rows.counts is not None:  # a summary's rows: the counts per task, summed
            cut, tokens, n_rows = _summary_numbers(rows, row_col, m)
            return ArmNumbers(rates=rates, worth=worth, var_mean=var_mean, cut=cut, tokens=tokens,
                              k=int(n.min()) if len(n) else 0, n_rows=n_rows)
        said = (row_col >= 0) & rows.stated
        cut = (np.bincount(row_col[said], weights=rows.truncated[said], minlength=m)
               / np.bincount(row_col[said], minlength=m))
        tokens = np.full(m, np.nan)
        if rows.tokens is not None:
            stated = (row_col >= 0) & ~np.isnan(rows.tokens)
            tokens = (np.bincount(row_col[stated], weights=rows.tokens[stated], minlength=m)
                      / np.bincount(row_col[stated], minlength=m))
    return ArmNumbers(rates=rates, worth=worth, var_mean=var_mean, cut=cut, tokens=tokens,
                      k=int(n.min()) if len(n) else 0, n_rows=int((row_col >= 0).sum()))


def _summary_numbers(rows: GradedRows, row_col: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, int]:
    """arm_numbers' cut-off share and mean tokens per task, and the rows counted, from a summary's counts."""
    s, keep = rows.counts, row_col >= 0
    per = lambda w: np.bincount(row_col[keep], weights=w[keep], minlength=m)  # noqa: E731
    cut = per(s.truncated) / per(s.truncation_stated)
    tokens = per(s.tokens_sum) / per(s.tokens_n) if rows.tokens is not None else np.full(m, np.nan)
    return cut, tokens, int(s.rollouts[keep].sum())


@dataclass(frozen=True)
class Diff:
    """A paired difference (upper - lower) per eval: its mean and interval (NaN where there is none)."""

    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def one(self) -> tuple[float, tuple[float, float] | None]:
        lo, hi = float(self.lo[0]), float(self.hi[0])
        return float(self.mean[0]), None if math.isnan(lo) else (lo, hi)


def paired_diff(upper: np.ndarray, lower: np.ndarray, *, worth_upper: np.ndarray | float = np.inf,
                worth_lower: np.ndarray | float = np.inf, level: float = D.CI_LEVEL) -> Diff:
    """mean(upper - lower) over paired tasks (rows: evals, columns: tasks) with the MOVER interval, each arm capped
    at what its rollouts are worth (`worth_*`: per eval, stats.rollouts_worth); no interval under MIN_CI_TASKS."""
    upper, lower = np.atleast_2d(upper), np.atleast_2d(lower)
    mean = (upper - lower).mean(axis=1) if upper.shape[1] else np.full(len(upper), np.nan)
    if upper.shape[1] < D.MIN_CI_TASKS:
        nan = np.full(len(upper), np.nan)
        return Diff(mean, nan, nan)
    lo, hi = paired_intervals(upper, lower, n_max_a=worth_upper, n_max_b=worth_lower, level=level)
    return Diff(mean, lo, hi)


def compare(upper: ArmNumbers, lower: ArmNumbers, level: float = D.CI_LEVEL) -> Diff:
    """`paired_diff` of two arms on the same tasks, each capped at its rollouts (as teacher_clears' paired is)."""
    return paired_diff(upper.rates, lower.rates, worth_upper=rollouts_worth(upper.n, upper.worth),
                       worth_lower=rollouts_worth(lower.n, lower.worth), level=level)


@dataclass(frozen=True)
class Holm:
    """Holm's step-down over m guards (arrays [guard, eval])."""

    regressed: np.ndarray  # rejected with the interval below 0
    level: np.ndarray  # the level each guard was last tested at
    lo: np.ndarray  # and that interval
    hi: np.ndarray


def holm(diff_at: Callable[[float], list[Diff]], m: int, alpha: float = 1 - D.CI_LEVEL) -> Holm:
    """Holm's step-down over m two-sided tests, on intervals: with j guards still standing, each whose interval at
    level 1 - alpha/j excludes 0 is rejected; repeat with the rest until none is. The same rejections as Holm on
    p-values, since a wider level's interval holds the narrower one. `diff_at(level)` gives every guard's Diff
    at that level (arrays over evals)."""
    levels = [1 - alpha / j for j in range(1, m + 1)]
    at = [diff_at(lv) for lv in levels]  # at[j - 1][g]: guard g's interval with j standing
    lo = np.stack([np.stack([d.lo for d in row]) for row in at])  # [j, guard, eval]
    hi = np.stack([np.stack([d.hi for d in row]) for row in at])
    evals = lo.shape[2]
    standing = np.ones((m, evals), dtype=bool)
    rejected = np.zeros((m, evals), dtype=bool)
    out_lo, out_hi, out_level = np.empty((m, evals)), np.empty((m, evals)), np.empty((m, evals))
    for _ in range(m):
        j = standing.sum(axis=0)  # guards standing, per eval
        pick = np.broadcast_to(np.maximum(j, 1) - 1, (m, evals))[None]
        now_lo, now_hi = np.take_along_axis(lo, pick, 0)[0], np.take_along_axis(hi, pick, 0)[0]
        out_lo = np.where(standing, now_lo, out_lo)
        out_hi = np.where(standing, now_hi, out_hi)
        out_level = np.where(standing, np.array(levels)[pick[0]], out_level)
        newly = standing & ((now_lo > 0) | (now_hi < 0))
        if not newly.any():
            break
        rejected |= newly
        standing &= ~newly
    return Holm(regressed=rejected & (out_hi < 0), level=out_level, lo=out_lo, hi=out_hi)


def holm_regressed(pairs: list[tuple[ArmNumbers, ArmNumbers]], alpha: float = 1 - D.CI_LEVEL) -> Holm:
    """`holm` over the guards' (after, before) pairs of one eval."""
    return holm(lambda level: [compare(a, b, level=level) for a, b in pairs], len(pairs), alpha)


@dataclass(frozen=True)
class FlipCounts:
    fail_to_pass: np.ndarray  # indices of tasks under FLIP_AT before and over it after
    pass_to_fail: np.ndarray
    up: int
    down: int
    same: int


def flips(before: np.ndarray, after: np.ndarray) -> FlipCounts:
    """Tasks whose majority outcome changed (McNemar's discordant pairs at one rollout), and how many moved."""
    f = D.FLIP_AT
    return FlipCounts(fail_to_pass=np.flatnonzero((before < f) & (after > f)),
                      pass_to_fail=np.flatnonzero((before > f) & (after < f)),
                      up=int((after > before).sum()), down=int((after < before).sum()),
                      same=int((after == before).sum()))


@dataclass(frozen=True)
class Size:
    task_std: float  # one task's paired-difference sd used (measured, or the binomial model's)
    sd_source: str  # "rows" or "model"
    detectable: float  # the smallest gain the compared tasks detect at HOLDOUT_POWER / HOLDOUT_ALPHA
    n_tasks: int  # held-out tasks at the rows' k that would decide
    basis: str  # "effect": they detect the registered effect; "observed": they would tell the observed gain apart
    k_needed: int | None  # rollouts per task on the tasks in hand that would, or None (k_why)
    k_why: str | None


def size(upper: ArmNumbers, lower: ArmNumbers, effect: float, base: float, diff: Diff, *,
         above_only: bool = False) -> Size:
    """What decides a comparison (`diff`, upper - lower): the tasks that detect `effect` from the measured paired sd
    (holdout_size's formula; the binomial model at `base` where the sd is 0 or unmeasured), and the rollouts per task
    that would on the tasks in hand. Where the tasks in hand already suffice for `effect` and the comparison is still
    open, the observed gain sits between 0 and the effect: then the size is what shrinks the interval until it
    excludes 0 or the effect (only 0 with `above_only`, a control comparison), if the observed gain holds.
    `detectable` is the gain the interval in hand detects at HOLDOUT_POWER."""
    n = upper.n
    d = upper.rates - lower.rates
    zp, z = z_power(D.HOLDOUT_POWER, D.HOLDOUT_ALPHA), z_power(0.5, D.HOLDOUT_ALPHA)
    k = max(min(upper.k, lower.k), 1)
    sd = diff_sd(d)
    source = "rows"
    if not sd > 0:
        p = min(max(base, 0.0), 1.0)
        sd, source = model_sd(p if 0 < p < 1 else D.HOLDOUT_BASE, effect, k), "model"
    mean, ci = diff.one()
    # the interval in hand where its spread was measured; where the differences did not vary (an interval of ~0
    # width) the binomial model's sd, the one the sizes below use
    half = (ci[1] - ci[0]) / 2 if ci and source == "rows" else z * sd / math.sqrt(max(n, 1))
    detectable = zp / z * half
    n_tasks, basis = tasks_needed(sd, effect, D.HOLDOUT_POWER, D.HOLDOUT_ALPHA), "effect"
    k_needed, why = rollouts_needed(upper, lower, effect, zp, sd, source)
    still_open = ci is not None and ci[0] <= 0 <= ci[1] if above_only else (
        ci is not None and ci[0] <= 0 and ci[1] >= effect)
    if n_tasks <= n and still_open:
        room = mean if above_only else max(mean, effect - mean)
        basis = "observed"
        n_tasks = math.ceil(n * (half / room) ** 2) if room > 0 else n
        k_needed, why = None, "these tasks suffice for the registered effect; the observed gain sits between 0 and it"
    return Size(task_std=sd, sd_source=source, detectable=detectable, n_tasks=max(n_tasks, D.MIN_HOLDOUT_TASKS),
                basis=basis, k_needed=k_needed, k_why=why)


def rollouts_needed(upper: ArmNumbers, lower: ArmNumbers, effect: float, zp: float, sd: float,
                    source: str) -> tuple[int | None, str | None]:
    """Rollouts per task (both arms) on the tasks in hand that detect `effect`: Var d = omega^2 + sigma^2 / k, with
    sigma^2 the two arms' per-rollout variance and omega^2 what the tasks' own spread leaves (Miller 2024 sec. 5).
    None, with the reason, when the sampling part is unmeasured or the task part alone is too wide."""
    n = upper.n
    if n < D.MIN_CI_TASKS:
        return None, "too few tasks to split the spread"
    if source != "rows":
        return None, "the paired differences do not vary: no spread to split"
    within = upper.var_mean + lower.var_mean
    if np.isnan(within).any():
        return None, "one rollout a task: the sampling spread is unmeasured"
    per_rollout = float((upper.var_mean * upper.worth + lower.var_mean * lower.worth).mean())
    sampling = float(within.mean())
    if sampling > sd * sd:  # the sampling part cannot exceed the whole: scale the per-rollout spread to fit
        per_rollout, sampling = per_rollout * sd * sd / sampling, sd * sd
    omega2 = sd * sd - sampling
    room = n * effect * effect / (zp * zp) - omega2
    if not per_rollout > 0:
        return None, "no sampling spread: more rollouts change nothing"
    if room <= 0:
        return None, "the tasks' own spread alone is too wide: more rollouts cannot decide, more tasks can"
    return max(1, math.ceil(per_rollout / room - 1e-9)), None
