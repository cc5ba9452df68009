"""Rows -> one table of sufficient statistics per group, built once in one vectorised pass.

A group is one task's rollouts from one sampler in one arm: rollouts of different models or arms are never
pooled. Every question reads this table; `table_of` caches it on the rows, so asking several questions of
the same rows (as `route` does) builds it once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from pick_a_method.common.identity import lineage
from .rows import GradedRows, display_name
from .stats import distinct


@dataclass(frozen=True)
class Table:
    """Sufficient statistics, one entry per group (numpy arrays of equal length, groups in first-seen task order).

    task, model, arm      int32 codes into rows.task_names / table.model_names / rows.arm_names (-1: none named)
    n_rows                rows in the group, graded or not
    n                     graded rollouts (a reward that is a number)
    c                     passes: graded rows with reward >= pass_threshold
    truncated             rows cut off at the token cap (truncated, or finish_reason "length")
    truncated_passes      truncated rows that passed
    ungraded              rows with no reward (missing, null or NaN): never counted as fails
    nonbinary             graded rows whose reward is neither 0 nor 1
    reward_sum, reward_sq sum and sum of squares of the graded rewards (means and spreads of non-binary rewards)
    tokens_sum, tokens_n  completion tokens summed over the rows that state them, and how many rows do
    """

    rows: GradedRows
    pass_threshold: float
    model_names: list[str]  # what the model codes name: a row's sampler, or the model an async sampler copies
    task: np.ndarray
    model: np.ndarray
    arm: np.ndarray
    n_rows: np.ndarray
    n: np.ndarray
    c: np.ndarray
    truncated: np.ndarray
    truncated_passes: np.ndarray
    ungraded: np.ndarray
    nonbinary: np.ndarray
    reward_sum: np.ndarray
    reward_sq: np.ndarray
    tokens_sum: np.ndarray
    tokens_n: np.ndarray

    def __len__(self) -> int:
        return int(self.task.shape[0])

    # -- the numbers questions read ----------------------------------------------------------------------

    @property
    def rates(self) -> np.ndarray:
        """Pass rate per group (graded groups only: call `graded()` first)."""
        return self.c / self.n

    @property
    def n_graded(self) -> int:
        return int(self.n.sum())

    @property
    def n_ungraded(self) -> int:
        return int(self.ungraded.sum())

    @property
    def n_nonbinary(self) -> int:
        return int(self.nonbinary.sum())

    @functools.cached_property
    def n_tasks(self) -> int:
        """Distinct tasks (a task with rollouts from two samplers is one task, two groups); counted once."""
        return int(np.count_nonzero(np.bincount(self.task))) if len(self) else 0

    @property
    def several(self) -> bool:
        """More than one sampler or arm: group labels name them."""
        return len(self) > 0 and (self.model.min() != self.model.max() or self.arm.min() != self.arm.max())

    @property
    def names(self) -> list[str]:
        """One label per group: the task id, plus its sampler and arm when the table holds several."""
        return self.names_in(slice(None))

    def names_in(self, part: slice) -> list[str]:
        """The labels of the groups in `part` alone (a page of them: the rest are not built)."""
        tasks = self.rows.task_names
        if not self.several:
            return [tasks[t] for t in self.task[part].tolist()]
        return [f"{tasks[t]} [{self.sampler_label(m, a)}]" for t, m, a in
                zip(self.task[part].tolist(), self.model[part].tolist(), self.arm[part].tolist())]

    def sampler_label(self, model: int, arm: int) -> str:
        m = self.model_names[model] if model >= 0 else "no model named"
        return m if arm < 0 else f"{m}, arm {self.rows.arm_names[arm]}"

    def select(self, mask: np.ndarray) -> Table:
        """The groups where `mask` is true."""
        mask = np.asarray(mask)
        if mask.dtype == bool:  # positions, found once: each column then takes them (faster than a mask each)
            mask = np.flatnonzero(mask)
        cols = {k: getattr(self, k)[mask] for k in _COLUMNS}
        return Table(rows=self.rows, pass_threshold=self.pass_threshold, model_names=self.model_names, **cols)

    def graded(self) -> Table:
        """The groups with at least one graded rollout."""
        return self if (self.n > 0).all() else self.select(self.n > 0)

    def task_means(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per task with a graded group, in task-code order: its code, the mean pass rate over its graded groups
        (equal weight), and the rollouts that mean is worth, g^2 / sum(1/n) over its g groups (its rollouts where
        it has one group). Bincounts over the task codes: no sort."""
        g = self.graded()
        groups = np.bincount(g.task, minlength=self.rows.n_tasks)
        codes = np.flatnonzero(groups)
        sums = np.bincount(g.task, weights=g.rates, minlength=self.rows.n_tasks)[codes]
        inverse_n = np.bincount(g.task, weights=1.0 / g.n, minlength=self.rows.n_tasks)[codes]
        groups = groups[codes]
        return codes, sums / groups, groups * groups / inverse_n

    def task_rates(self) -> dict[str, float]:
        """Task name -> mean pass rate over its graded groups (for pairing two tables by task)."""
        codes, rates, _ = self.task_means()
        return dict(zip(self.names_of(codes), rates.tolist()))

    def task_worth(self) -> dict[str, float]:
        """Task name -> the rollouts its task_rates mean is worth (task_means)."""
        codes, _, worth = self.task_means()
        return dict(zip(self.names_of(codes), worth.tolist()))

    def names_of(self, codes: np.ndarray) -> list[str]:
        """The names of task codes."""
        names = self.rows.task_names
        return [names[t] for t in codes.tolist()]

    def samplers(self) -> list[dict[str, Any]]:
        """Per sampler (and arm): rows, tasks, graded rows, passes and pass@1 (mean over its graded groups), most rows first."""
        if not len(self):
            return []
        out = []
        width = len(self.rows.arm_names) + 1
        key = (self.model.astype(np.int64) + 1) * width + (self.arm + 1)
        tasks = np.bincount(key)
        total = lambda w: np.bincount(key, weights=w).astype(np.int64)  # noqa: E731  (counts below 2^53: exact)
        rows, graded_rows, passes = total(self.n_rows), total(self.n), total(self.c)
        graded = self.n > 0
        for k in np.flatnonzero(tasks).tolist():
            m, a = k // width - 1, k % width - 1
            mine = np.flatnonzero(graded & (key == k))
            entry: dict[str, Any] = {"model": display_name(self.model_names[m]) if m >= 0 else None}
            if a >= 0:
                entry["arm"] = display_name(self.rows.arm_names[a])
            entry.update(rows=int(rows[k]), tasks=int(tasks[k]), graded_rows=int(graded_rows[k]), passes=int(passes[k]),
                         pass_at_1=float((self.c[mine] / self.n[mine]).mean()) if len(mine) else None)
            out.append(entry)
        return sorted(out, key=lambda e: -e["rows"])


_COLUMNS = ("task", "model", "arm", "n_rows", "n", "c", "truncated", "truncated_passes", "ungraded", "nonbinary",
            "reward_sum", "reward_sq", "tokens_sum", "tokens_n")


def build_table(rows: GradedRows, pass_threshold: float) -> Table:
    """One pass over the rows: a group code per row, then one bincount of (group, graded, passed, truncated)
    cells gives the counts; the reward and token sums each take one more bincount, only where they differ
    from the counts (non-binary rewards, stated token counts). A summary's rows are counts already (counts.py)."""
    if rows.counts is not None:
        from .counts import summary_table

        return summary_table(rows, pass_threshold)
    model, model_names = samplers_of(rows)
    n_models, n_arms = len(model_names) + 1, len(rows.arm_names) + 1
    arm = rows.arms
    one = len(rows) == 0 or (model.min() == model.max() and arm.min() == arm.max())
    if one:  # one sampler and one arm (the common case): the task code is the group, no sort needed
        present = np.bincount(rows.task, minlength=rows.n_tasks) > 0
        inverse = rows.task if present.all() else (np.cumsum(present) - 1)[rows.task]
        task = np.flatnonzero(present).astype(np.int32)
        first = np.zeros(len(task), dtype=np.int64)  # model and arm are the same in every row
    else:
        key = (rows.task.astype(np.int64) * n_models + (model + 1)) * n_arms + (arm + 1)
        _, first, inverse, _ = distinct(key, index=True, inverse=True)
        inverse = inverse.reshape(-1)
        task = rows.task[first]
    groups = len(task)
    reward = rows.reward
    graded = ~np.isnan(reward)
    passed = reward >= pass_threshold  # NaN compares false: ungraded never passes
    # cell = group * 8 + graded * 4 + passed * 2 + truncated: one integer bincount counts every combination
    cell = np.multiply(inverse, 8, dtype=np.int64)
    cell += graded * np.int64(4)
    cell += passed * np.int64(2)
    cell += rows.truncated
    cells = np.bincount(cell, minlength=8 * groups).reshape(groups, 8)
    del cell
    n = cells[:, 4:].sum(axis=1)
    c = cells[:, 6] + cells[:, 7]  # a pass needs a grade (NaN >= threshold is false)
    binary = (reward == 0.0) | (reward == 1.0)
    nonbinary = graded & ~binary
    count = lambda w: np.bincount(inverse, weights=w, minlength=groups)  # noqa: E731
    if nonbinary.any():
        safe = np.where(graded, reward, 0.0)
        with np.errstate(over="ignore"):  # a reward past 1e154 squares to inf: a spread that large is inf
            reward_sum, reward_sq = count(safe), count(safe * safe)
        n_nonbinary = count(nonbinary).astype(np.int64)
    else:  # every grade is 0 or 1: the sum (and the sum of squares) is the number of 1s
        ones = c if 0.0 < pass_threshold <= 1.0 else np.bincount(inverse[reward == 1.0], minlength=groups)
        reward_sum = reward_sq = ones.astype(np.float64)
        n_nonbinary = np.zeros(groups, np.int64)
    tokens = rows.tokens
    stated_tokens = ~np.isnan(tokens) if tokens is not None else None
    return Table(
        rows=rows, pass_threshold=pass_threshold, model_names=model_names, task=task.astype(np.int32),
        model=model[first].astype(np.int32) if groups else np.zeros(0, np.int32),
        arm=arm[first].astype(np.int32) if groups else np.zeros(0, np.int32),
        n_rows=cells.sum(axis=1), n=n, c=c, truncated=cells[:, 1::2].sum(axis=1),
        truncated_passes=cells[:, 7].copy(), ungraded=cells[:, :4].sum(axis=1),
        nonbinary=n_nonbinary, reward_sum=reward_sum, reward_sq=reward_sq,
        tokens_sum=count(np.where(stated_tokens, tokens, 0.0)) if tokens is not None else np.zeros(groups),
        tokens_n=(np.bincount(inverse[stated_tokens], minlength=groups) if tokens is not None
                  else np.zeros(groups, np.int64)))


def samplers_of(rows: GradedRows) -> tuple[np.ndarray, list[str]]:
    """Sampler codes per row. Each named model is its own sampler, with one exception: checkpoints of one model
    (`X@step-3`, `X@step-4`) that spread a task's rollouts over them, one or so each, as an async sampler does,
    are one sampler, `X`: a prompt's group is its rollouts across policy versions. Checkpoints that each scored a
    task two or more times are separate evals of it and stay apart."""
    names = rows.model_names
    bases = [lineage(n) for n in names]
    if len(set(bases)) == len(names):
        return rows.model, list(names)
    base_index = {b: i for i, b in enumerate(dict.fromkeys(bases))}
    base_of = np.array([base_index[b] for b in bases], dtype=np.int64)
    named = rows.model >= 0
    pooled = set()
    for b, i in base_index.items():
        members = np.flatnonzero(base_of == i)
        if len(members) < 2:
            continue
        mine = named & np.isin(rows.model, members)
        key = rows.task[mine].astype(np.int64) * len(names) + rows.model[mine]
        _, inverse, sizes = distinct(key, inverse=True)
        if rows.weights is not None:  # a summary's entries: the rollouts they count
            sizes = np.bincount(inverse.reshape(-1), weights=rows.weights[mine])
        if len(sizes) and np.median(sizes) < 2:
            pooled.update(members.tolist())
    if not pooled:
        return rows.model, list(names)
    out_names: list[str] = []
    index: dict[str, int] = {}
    remap = np.empty(len(names), dtype=np.int32)
    for code, name in enumerate(names):
        label = bases[code] if code in pooled else name
        remap[code] = index.setdefault(label, len(out_names))
        if remap[code] == len(out_names):
            out_names.append(label)
    return np.where(named, remap[np.maximum(rows.model, 0)], -1).astype(np.int32), out_names


def table_of(rows: GradedRows, pass_threshold: float) -> Table:
    """The table of `rows` at `pass_threshold`, built on first use and kept on the rows."""
    key = ("table", float(pass_threshold))
    table = rows._tables.get(key)
    if table is None:
        table = rows._tables[key] = build_table(rows, pass_threshold)
    return table
