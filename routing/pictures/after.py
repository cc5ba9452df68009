"""`after` as a picture, as data: per task, the pass rate before against after (a table of counts the sketch prints
and the figure draws as bubbles), and each paired difference with its 95% interval beside 0 and the registered
effect (the verdict's own numbers: nothing is computed twice). routing/pictures/route.py puts them in a Picture; the
sketch (server/sketch.py) and the figure (server/plot.py) draw them. numpy and pydantic only.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from ..after_training import arm_numbers
from ..after_training import After, Difference
from ..rows import GradedRows
from ..verdicts import Interval

# Presentation only: a rate axis shows every j/k where every task's rate is one (k up to EXACT_K), else these bins.
EXACT_K = 8
BIN_EDGES = (0.25, 0.5, 0.75)  # inside (0, 1); 0 and 1 keep their own levels either way

Side = Literal["higher", "lower", "same"]  # a cell of the per-task table: after's level above, below, or at before's
Reading = Literal["above_0", "below_0", "open"]  # a difference's interval: above 0, below 0, or holding it


class Level(BaseModel):
    low: float
    high: float
    label: str = Field(description="As an axis shows it: 3/8 for an exact rate, .25-.50 for a bin (0 and 1 apart).")

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2


class PerTaskPanel(BaseModel):
    """Each compared task's pass rate before (rows) and after (columns), counted."""

    before_levels: list[Level]
    after_levels: list[Level]
    counts: list[list[int]] = Field(description="counts[i][j]: tasks at before level i and after level j.")
    n_tasks: int
    k_before: int
    k_after: int
    mean_before: float
    mean_after: float
    fail_to_pass: int = Field(description="The verdict's flips: majority outcome fail before, pass after.")
    pass_to_fail: int

    def side(self, i: int, j: int) -> Side:
        """Where a cell lies: after's level above before's, below, or the same (both axes are exact rates, or both
        the same bins)."""
        b, a = self.before_levels[i].middle, self.after_levels[j].middle
        return "higher" if a > b + 1e-9 else "lower" if a < b - 1e-9 else "same"

    @property
    def binned(self) -> bool:
        """The axes are bins (some task's rate is no j/k for a small k), so a cell may hold tasks that moved."""
        return any(lv.low != lv.high for lv in self.before_levels + self.after_levels)

    def total(self, side: Side) -> int:
        return sum(c for i, row in enumerate(self.counts) for j, c in enumerate(row) if self.side(i, j) == side)


class DiffRow(BaseModel):
    label: str = Field(description="What minus what, e.g. 'after - before', 'guard math: after - before'.")
    mean_diff: float
    ci95: Interval | None
    reading: Reading


class DiffPanel(BaseModel):
    """The paired differences the verdict weighed: after - before first, then each control, then the guards."""

    rows: list[DiffRow]
    effect: float
    n_tasks: int
    verdict: str

    def span(self) -> tuple[float, float]:
        """The lowest and highest value drawn: 0, the effect, each mean and interval end (the axis to fit)."""
        ends = [0.0, self.effect] + [x for r in self.rows for x in (r.mean_diff, *(r.ci95 or ()))]
        return min(ends), max(ends)


def exact(rates: np.ndarray, k: int) -> bool:
    """Every rate is some j/k (one group of k a task), with k small enough for a level each."""
    return 1 <= k <= EXACT_K and bool(np.allclose(rates * k, np.round(rates * k)))


def levels(rates: np.ndarray, k: int, binned: bool) -> list[Level]:
    """An axis: every j/k, or (`binned`) 0, the bins between, and 1."""
    if not binned:
        return [Level(low=j / k, high=j / k, label="0" if j == 0 else "1" if j == k else f"{j}/{k}")
                for j in range(k + 1)]
    edges = (0.0, *BIN_EDGES, 1.0)
    short = lambda x: f"{x:g}" if x in (0, 1) else f"{x:.2f}".lstrip("0")  # noqa: E731  (0, .25, .50, 1)
    inner = [Level(low=a, high=b, label=f"{short(a)}-{short(b)}") for a, b in zip(edges[:-1], edges[1:])]
    return [Level(low=0.0, high=0.0, label="0"), *inner, Level(low=1.0, high=1.0, label="1")]


def level_of(rates: np.ndarray, axis: list[Level]) -> np.ndarray:
    """Each rate's level on the axis (an exact level by nearest value; a bin by its edges, 0 and 1 apart)."""
    if all(lv.low == lv.high for lv in axis):
        return np.abs(rates[:, None] - np.array([lv.low for lv in axis])[None, :]).argmin(axis=1)
    inner = np.searchsorted(np.array(BIN_EDGES), rates, side="right") + 1
    return np.where(rates <= 0, 0, np.where(rates >= 1, len(axis) - 1, inner))


def per_task_panel(before: GradedRows, after: GradedRows, verdict: After, pass_threshold: float
                   ) -> PerTaskPanel | None:
    """The compared tasks' rates, as the verdict read them (its task list, the same per-task numbers)."""
    tasks = verdict.compared_tasks()
    if verdict.paired is None or not tasks:
        return None
    index = {name: i for i, name in enumerate(tasks)}
    b, a = arm_numbers(before, tasks, pass_threshold, index), arm_numbers(after, tasks, pass_threshold, index)
    binned = not (exact(b.rates, b.k) and exact(a.rates, a.k))  # one axis binned: both, so cells compare
    rows, cols = levels(b.rates, b.k, binned), levels(a.rates, a.k, binned)
    counts = np.zeros((len(rows), len(cols)), dtype=np.int64)
    np.add.at(counts, (level_of(b.rates, rows), level_of(a.rates, cols)), 1)
    flips = verdict.flips
    return PerTaskPanel(before_levels=rows, after_levels=cols, counts=counts.tolist(), n_tasks=len(tasks),
                        k_before=b.k, k_after=a.k, mean_before=float(b.rates.mean()),
                        mean_after=float(a.rates.mean()), fail_to_pass=flips.fail_to_pass if flips else 0,
                        pass_to_fail=flips.pass_to_fail if flips else 0)


def _row(label: str, d: Difference, ci95: Interval | None = None) -> DiffRow:
    ci = d.ci95 if ci95 is None else ci95
    reading: Reading = "above_0" if ci and ci[0] > 0 else "below_0" if ci and ci[1] < 0 else "open"
    return DiffRow(label=label, mean_diff=d.mean_diff, ci95=ci, reading=reading)


def diff_panel(verdict: After) -> DiffPanel | None:
    """The verdict's differences in the order the rule weighs them (a guard at the interval Holm tested it at)."""
    if verdict.paired is None:
        return None
    rows = [_row("after - before", verdict.paired)]
    for name, c in (("random_selection", verdict.random_selection), ("random_reward", verdict.random_reward)):
        if c is not None:
            rows += [_row(f"after - {name}", c), _row(f"{name} - before", c.gain)]
    rows += [_row(f"guard {g.name}: after - before", g, g.tested_ci) for g in verdict.guards]
    return DiffPanel(rows=rows, effect=verdict.effect, n_tasks=verdict.n_tasks, verdict=verdict.verdict)


def after_caption(verdict: After, panel: PerTaskPanel | None) -> str:
    """The verdict, the rule that gave it, and what the per-task panel counts."""
    head = f"{verdict.verdict.replace('_', ' ').capitalize()}: {verdict.decided_by}."
    if panel is None:
        return head + " Nothing is drawn: arms that cannot be compared are not paired."
    return (f"{head} {panel.n_tasks} tasks: {panel.total('higher')} higher after, {panel.total('lower')} lower, "
            f"{panel.total('same')} the same{' (or in the same bin)' if panel.binned else ''}; "
            f"{panel.fail_to_pass} fail -> pass, {panel.pass_to_fail} pass -> fail. Registered effect "
            f"{verdict.effect:g}.")

