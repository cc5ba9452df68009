"""A per-task summary's counts: what one summary row carries, and the table built from them.

A summary (readers/summary.py reads one; readers/summary_sql.py has the engines' query that makes one) holds, per
task and sampler (and arm, step, token budget), the counts every verdict of the route, `after` and `track` reads:
the table of counts (table.py) is built from them as it is from rows, in the same group order, so both give the
same Table. What needs the rows themselves (question 0's replies, the row a finding points at) a summary cannot give.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

import numpy as np

from pick_a_method.common.errors import InputError

from .stats import distinct

if TYPE_CHECKING:
    from .rows import GradedRows
    from .table import Table

# The summary's columns past its keys, as the engines' query names them (readers/summary_sql.py writes them):
# integer counts, then sums, then the reward's range.
COUNTS = ("rollouts", "graded", "passes", "truncated", "truncated_graded", "truncated_passes", "truncation_stated",
          "stated_graded", "stated_passes", "nan_rewards", "nonbinary", "tokens_n", "reasons_unknown")
SUMS = ("reward_sum", "reward_sq", "tokens_sum")
RANGE = ("reward_min", "reward_max")
KEYS = ("task_id", "model", "arm", "step", "max_tokens")
SCHEMA_VERSION = 1  # the `summary_version` column; a reader refuses a newer one


@dataclass(frozen=True)
class SummaryCounts:
    """One entry per summary row (the rows' task, model, arm and max_tokens columns hold its keys).

    rollouts            rows in the entry, graded or not
    graded              rows with a reward that is a number (NaN and null are not graded)
    passes              graded rows with reward >= pass_threshold
    truncated           rows cut off at the token cap; truncated_graded / _passes: those graded / that passed
    truncation_stated   rows that say whether they were cut off; stated_graded / _passes: of those, graded / passed
    nan_rewards         rows whose reward was NaN (a grader failure?), told apart from a missing one
    nonbinary           graded rows whose reward is neither 0 nor 1
    reward_sum/_sq      sum and sum of squares of the graded rewards; reward_min/_max their range (NaN: none graded)
    tokens_sum/_n       completion tokens summed over the rows that state them, and how many rows do
    reasons_unknown     rows whose finish reason is a word not known as a cut-off or a stop
    step                the training step (track's key), -1 where the rows name none
    pass_threshold      the threshold the passes were counted at
    """

    rollouts: np.ndarray
    graded: np.ndarray
    passes: np.ndarray
    truncated: np.ndarray
    truncated_graded: np.ndarray
    truncated_passes: np.ndarray
    truncation_stated: np.ndarray
    stated_graded: np.ndarray
    stated_passes: np.ndarray
    nan_rewards: np.ndarray
    nonbinary: np.ndarray
    tokens_n: np.ndarray
    reasons_unknown: np.ndarray
    reward_sum: np.ndarray
    reward_sq: np.ndarray
    tokens_sum: np.ndarray
    reward_min: np.ndarray
    reward_max: np.ndarray
    step: np.ndarray
    pass_threshold: float

    def subset(self, mask: np.ndarray) -> SummaryCounts:
        kept = {f.name: getattr(self, f.name)[mask] for f in fields(self) if f.name != "pass_threshold"}
        return replace(self, **kept)

    @property
    def binary(self) -> bool:
        """Every graded reward is 0 or 1: then the passes are the same at any threshold in (0, 1]."""
        return not self.nonbinary.any()

    def passes_at(self, pass_threshold: float, where: str) -> None:
        """Refuse a threshold the passes were not counted at, unless every reward is 0 or 1 and both thresholds
        pass exactly the 1s."""
        same = pass_threshold == self.pass_threshold
        if same or (self.binary and 0 < pass_threshold <= 1 and 0 < self.pass_threshold <= 1):
            return
        raise InputError(f"{where} counted passes at reward >= {self.pass_threshold:g}, and its rewards are not all 0 "
                         f"or 1, so passes at {pass_threshold:g} cannot be told from it: summarize the rows again with "
                         f"--pass-threshold {pass_threshold:g}, or ask at pass_threshold={self.pass_threshold:g}",
                         field="pass_threshold")


def concat_counts(parts: list[SummaryCounts], where: str) -> SummaryCounts:
    thresholds = {p.pass_threshold for p in parts}
    if len(thresholds) > 1 and not all(p.binary for p in parts):
        raise InputError(f"{where}: the summaries counted passes at different thresholds "
                         f"({', '.join(f'{t:g}' for t in sorted(thresholds))}); summarize them at one",
                         field="pass_threshold")
    return SummaryCounts(**{f.name: np.concatenate([getattr(p, f.name) for p in parts])
                            for f in fields(SummaryCounts) if f.name != "pass_threshold"},
                         pass_threshold=parts[0].pass_threshold)


# -- what the verdicts read off the rows, off a summary's counts -------------------------------------------------


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float | None:
    """np.median of the values each repeated `weights` times (the same two middle values averaged), or None."""
    keep = ~np.isnan(values) & (weights > 0)
    values, weights = values[keep], weights[keep]
    if not len(values):
        return None
    order = np.argsort(values, kind="stable")
    values, ends = values[order], np.cumsum(weights[order])
    total = int(ends[-1])
    lo = values[np.searchsorted(ends, (total - 1) // 2, side="right")]
    hi = values[np.searchsorted(ends, total // 2, side="right")]
    return float(np.mean([lo, hi]))


def summary_table(rows: GradedRows, pass_threshold: float) -> Table:
    """The table of a summary's counts: entries of one (task, sampler, arm) summed into its group, the groups in
    the order build_table gives the same rollouts (task first seen, then sampler and arm codes)."""
    from .table import Table, samplers_of

    s = rows.counts
    s.passes_at(pass_threshold, rows.source or "the summary")
    model, model_names = samplers_of(rows)
    n_models, n_arms = len(model_names) + 1, len(rows.arm_names) + 1
    arm = rows.arms
    key = rows.task.astype(np.int64)
    key *= n_models
    key += model
    key += 1
    key *= n_arms
    key += arm
    key += 1
    if bool((key[1:] > key[:-1]).all()):  # each entry a group, in group order (the engines' GROUP BY read back in
        first, groups = slice(None), len(key)  # first-seen order): the table's columns are the entries' own
    else:
        _, first, inverse, _ = distinct(key, index=True, inverse=True)
        groups = len(first)
    if groups == len(key):  # an entry a group: the groups are the entries, reordered
        total = lambda w: w[first] + 0.0  # noqa: E731  (+ 0.0: a sum from 0, as bincount's, turns -0.0 to 0.0)
        count = lambda w: w[first].astype(np.int64, copy=False)  # noqa: E731
    else:
        inverse = inverse.reshape(-1)
        total = lambda w: np.bincount(inverse, weights=w, minlength=groups)  # noqa: E731
        count = lambda w: total(w).astype(np.int64)  # noqa: E731  (counts below 2^53 sum exactly in float64)
    n_rows, n, c = count(s.rollouts), count(s.graded), count(s.passes)
    nonbinary = count(s.nonbinary)
    if nonbinary.any():
        reward_sum, reward_sq = total(s.reward_sum), total(s.reward_sq)
    else:  # as build_table: every grade 0 or 1, the sums are the number of 1s
        reward_sum = reward_sq = total(s.reward_sum)
    tokens_n = count(s.tokens_n)
    return Table(rows=rows, pass_threshold=pass_threshold, model_names=model_names,
                 task=rows.task[first].astype(np.int32, copy=False), model=model[first].astype(np.int32, copy=False),
                 arm=arm[first].astype(np.int32, copy=False), n_rows=n_rows, n=n, c=c, truncated=count(s.truncated),
                 truncated_passes=count(s.truncated_passes), ungraded=n_rows - n, nonbinary=nonbinary,
                 reward_sum=reward_sum, reward_sq=reward_sq,
                 tokens_sum=total(s.tokens_sum) if rows.tokens is not None or tokens_n.any() else np.zeros(groups),
                 tokens_n=tokens_n)
