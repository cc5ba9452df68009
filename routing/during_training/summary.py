"""One step's rows as a handful of sums (`StepSummary`): what the windows add up and the cache keeps, so a step is
read once and its rows let go.

Every share and mean is a ratio over groups (the group, one prompt's rollouts, is the unit: rows of a group are not
independent), kept as the six sums a ratio estimator's variance needs (`Ratio`; Cochran 1977, Sampling Techniques,
section 6.4), so windows add steps' sums and read a mean with its standard error without the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import defaults as D
from ..stats import within_group_spearman  # question 0's length check, per step
from .rollouts import StepRows

# (task, reply) keys as question 0 makes them (routing/grader.py MIX): hash times an odd constant plus the group
MIX = np.uint64(0x9E3779B97F4A7C15)
LENGTH_EDGES = D.TRACK_LENGTH_BIN_RATIO ** np.arange(D.TRACK_LENGTH_BINS)  # bin i holds lengths in [edge i, i+1)


@dataclass
class Ratio:
    """sum(y) / sum(m) over clusters, with the sums its linearised variance needs (n clusters)."""

    sy: float = 0.0
    syy: float = 0.0
    sym: float = 0.0
    sm: float = 0.0
    smm: float = 0.0
    n: int = 0

    @classmethod
    def of(cls, y: np.ndarray, m: np.ndarray) -> Ratio:
        y, m = y.astype(np.float64), m.astype(np.float64)
        return cls(float(y.sum()), float((y * y).sum()), float((y * m).sum()), float(m.sum()), float((m * m).sum()),
                   len(y))

    def __add__(self, o: Ratio) -> Ratio:
        return Ratio(self.sy + o.sy, self.syy + o.syy, self.sym + o.sym, self.sm + o.sm, self.smm + o.smm,
                     self.n + o.n)

    @property
    def mean(self) -> float | None:
        return self.sy / self.sm if self.sm else None

    @property
    def se(self) -> float | None:
        if self.n < 2 or not self.sm:
            return None
        p = self.sy / self.sm
        ss = max(self.syy - 2 * p * self.sym + p * p * self.smm, 0.0)
        return math.sqrt(self.n / (self.n - 1) * ss) / self.sm


@dataclass
class StepSummary:
    step: int
    source: str
    rows: int = 0
    graded: int = 0
    groups: int = 0  # groups with 2+ graded rows (the ones that can split)
    single: int = 0
    all_pass: int = 0
    all_fail: int = 0
    split: int = 0  # groups with signal: rewards differ within the group (binary: a pass and a fail)
    binary: bool = True
    reward: Ratio = field(default_factory=Ratio)  # over groups: sum of rewards / graded rows
    cut: Ratio | None = None  # cut-off rows / rows, None where the trainer does not record it
    cut_passes: int = 0
    length: Ratio | None = None  # reply characters (whitespace stripped) / replies
    length_bins: np.ndarray | None = None
    blank: int = 0
    blank_passes: int = 0
    repeated: int = 0  # replies given 2+ times within a group
    flipped: int = 0  # of those, graded both ways
    distinct: Ratio | None = None  # distinct replies / replies, over groups of 2+ replies
    link_w: float = 0.0  # question 0's length check: sum over groups of (n - 1), of (n - 1) rho, groups used
    link_wr: float = 0.0
    link_groups: int = 0
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # alarm -> rows that show it
    notes: list[str] = field(default_factory=list)
    step_inside: int | None = None


def _refs(r: StepRows, at: np.ndarray) -> list[dict[str, Any]]:
    key = "line" if r.source.endswith(".jsonl") else "row"
    return [{"step": r.step, "file": r.source, key: int(r.lines[i]),
             **({"group": r.group_names[r.group[i]]} if r.group_names else {})} for i in at[: D.TRACK_EXAMPLES]]


def summarise(r: StepRows, pass_threshold: float = D.PASS_THRESHOLD) -> StepSummary:
    s = StepSummary(r.step, r.source, rows=len(r), notes=list(r.notes), step_inside=r.step_inside)
    graded = ~np.isnan(r.reward)
    s.graded = int(graded.sum())
    if not s.graded:
        return s
    g, reward = r.group[graded], r.reward[graded]
    passed = reward >= pass_threshold
    s.binary = bool(np.isin(reward, (0.0, 1.0)).all())
    n_groups = int(g.max()) + 1
    size = np.bincount(g, minlength=n_groups)
    hi = np.full(n_groups, -np.inf)
    lo = np.full(n_groups, np.inf)
    np.maximum.at(hi, g, reward)
    np.minimum.at(lo, g, reward)
    sized = size >= 2
    signal = sized & (hi - lo > 1e-9)
    uniform = sized & ~signal
    s.groups, s.single, s.split = int(sized.sum()), int((size == 1).sum()), int(signal.sum())
    s.all_pass = int((uniform & (lo >= pass_threshold)).sum())
    s.all_fail = int((uniform & (lo < pass_threshold)).sum())
    used = size > 0
    s.reward = Ratio.of(np.bincount(g, weights=reward, minlength=n_groups)[used], size[used])
    rows_g = np.flatnonzero(graded)
    if r.truncated is not None:
        cut = r.truncated[graded]
        s.cut = Ratio.of(np.bincount(g, weights=cut, minlength=n_groups)[used], size[used])
        hits = rows_g[cut & passed]
        s.cut_passes = len(hits)
        if len(hits):
            s.examples["cut_off_passes"] = _refs(r, hits)
    if r.reply_len is not None:
        _replies(r, s, graded, g, reward, passed, rows_g, n_groups)
    return s


def _replies(r: StepRows, s: StepSummary, graded: np.ndarray, g: np.ndarray, reward: np.ndarray,
             passed: np.ndarray, rows_g: np.ndarray, n_groups: int) -> None:
    length = r.reply_len[graded]
    read = length >= 0  # a reply read (blank included); tool trajectories and no-reply rows are not
    if not read.any():
        return
    cut = r.truncated[graded] if r.truncated is not None else np.zeros(len(g), dtype=bool)
    gr, lr = g[read], length[read]
    s.length = Ratio.of(np.bincount(gr, weights=lr, minlength=n_groups), np.bincount(gr, minlength=n_groups))
    s.length_bins = np.bincount(np.searchsorted(LENGTH_EDGES, np.maximum(lr, 1), side="right") - 1,
                                minlength=D.TRACK_LENGTH_BINS)
    blank = read & (length == 0)
    s.blank = int(blank.sum())
    hits = rows_g[blank & passed]
    s.blank_passes = len(hits)
    if len(hits):
        s.examples["blank_passes"] = _refs(r, hits)
    # distinct replies per group, and the same reply graded both ways (cut-off rows left out, as question 0 does)
    key = r.reply_hash[graded].view(np.uint64) * MIX + g.astype(np.uint64)
    order = np.argsort(key[read], kind="stable")
    k_sorted = key[read][order]
    new = np.concatenate(([True], k_sorted[1:] != k_sorted[:-1]))
    per_group = np.bincount(gr, minlength=n_groups)
    distinct = np.bincount(gr[order][new], minlength=n_groups)
    many = per_group >= 2
    s.distinct = Ratio.of(distinct[many], per_group[many])
    whole = read & ~cut
    kw = key[whole]
    order = np.argsort(kw, kind="stable")
    kw = kw[order]
    starts = np.flatnonzero(np.concatenate(([True], kw[1:] != kw[:-1])))
    counts = np.diff(np.append(starts, len(kw)))
    rw = reward[whole][order]
    if len(kw):
        spread = np.maximum.reduceat(rw, starts) - np.minimum.reduceat(rw, starts)
        rep = counts >= 2
        s.repeated, flips = int(rep.sum()), rep & (spread > 1e-9)
        s.flipped = int(flips.sum())
        if s.flipped:
            s.examples["graded_both_ways"] = _refs(r, np.sort(rows_g[whole][order][starts[flips]]))
    _length_link(s, g, reward, length, cut)


def _length_link(s: StepSummary, g: np.ndarray, reward: np.ndarray, length: np.ndarray, cut: np.ndarray) -> None:
    """Question 0's length check (routing/grader.py _length_link) as sums a window pools: Spearman's rho of reply
    length and grade within each group where both vary (blank and cut-off rows left out), weighted n - 1."""
    keep = (length > 0) & ~cut
    if keep.sum() < 3:
        return
    group = np.unique(g[keep], return_inverse=True)[1].reshape(-1)
    n, use, rho = within_group_spearman(group, length[keep].astype(np.float64), reward[keep])
    if use.any():
        w = n[use] - 1
        s.link_w, s.link_wr = float(w.sum()), float((w * rho).sum())
        s.link_groups = int(use.sum())
