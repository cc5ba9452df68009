"""Steps into windows: each window adds its steps' sums (summary.py) and reads its shares and means with their
intervals; a run of metrics alone makes windows from the logged scalars, each step's value one observation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from .. import defaults as D
from .models import Window
from .summary import LENGTH_EDGES, Ratio, StepSummary

Z95 = NormalDist().inv_cdf(0.975)


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's (1927) score interval on k of n."""
    if n <= 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def normal(mean: float | None, se: float | None, lo: float = -math.inf, hi: float = math.inf) -> Any:
    if mean is None or se is None:
        return None
    return max(mean - Z95 * se, lo), min(mean + Z95 * se, hi)


@dataclass
class Pooled:
    """The sums of some steps: what a window reads, and what a reference (the windows before) reads."""

    steps: list[StepSummary] = field(default_factory=list)
    groups: int = 0
    all_pass: int = 0
    all_fail: int = 0
    split: int = 0
    rows: int = 0
    reward: Ratio = field(default_factory=Ratio)
    cut: Ratio | None = None
    cut_passes: int = 0
    length: Ratio | None = None
    bins: np.ndarray | None = None
    blank_passes: int = 0
    repeated: int = 0
    flipped: int = 0
    distinct: Ratio | None = None
    link_w: float = 0.0
    link_wr: float = 0.0
    link_groups: int = 0

    def add(self, s: StepSummary) -> Pooled:
        self.steps.append(s)
        return self.merge(s)

    def merge(self, s: StepSummary | Pooled) -> Pooled:
        """Add another's sums (a step's, or a window's: the windows before are pooled a window at a time)."""
        self.rows += s.rows
        self.groups += s.groups
        self.all_pass += s.all_pass
        self.all_fail += s.all_fail
        self.split += s.split
        self.reward += s.reward
        self.cut = _plus(self.cut, s.cut)
        self.cut_passes += s.cut_passes
        self.length = _plus(self.length, s.length)
        bins = s.length_bins if isinstance(s, StepSummary) else s.bins
        if bins is not None:
            self.bins = bins.copy() if self.bins is None else self.bins + bins
        self.blank_passes += s.blank_passes
        self.repeated += s.repeated
        self.flipped += s.flipped
        self.distinct = _plus(self.distinct, s.distinct)
        self.link_w += s.link_w
        self.link_wr += s.link_wr
        self.link_groups += s.link_groups
        return self

    @property
    def rho(self) -> float | None:
        return self.link_wr / self.link_w if self.link_w else None

    @property
    def z(self) -> float | None:
        """Question 0's pooled statistic: sum((n - 1) r) / sqrt(sum(n - 1)), normal under no link."""
        return self.link_wr / math.sqrt(self.link_w) if self.link_w else None

    def p90(self) -> float | None:
        if self.bins is None or not self.bins.sum():
            return None
        i = int(np.searchsorted(np.cumsum(self.bins), 0.9 * self.bins.sum()))
        return float(LENGTH_EDGES[min(i, len(LENGTH_EDGES) - 1)])


def _plus(a: Ratio | None, b: Ratio | None) -> Ratio | None:
    return b if a is None else a if b is None else a + b


def pooled(steps: list[StepSummary]) -> Pooled:
    p = Pooled()
    for s in steps:
        p.add(s)
    return p


def window_of(index: int, p: Pooled, size: int, metrics: dict[int, dict[str, float]]) -> Window:
    first, last = p.steps[0].step, p.steps[-1].step
    w = Window(index=index, first_step=first, last_step=last, steps=len(p.steps), partial=len(p.steps) < size,
               rows=p.rows, groups=p.groups)
    if p.groups:
        w.all_pass_share, w.all_fail_share = p.all_pass / p.groups, p.all_fail / p.groups
        w.split_share, w.split_ci95 = p.split / p.groups, wilson(p.split, p.groups)
        w.split_per_step = p.split / len(p.steps)
    w.reward = p.reward.mean
    w.reward_ci95 = normal(p.reward.mean, p.reward.se)
    if p.cut is not None:
        w.cut_off_share, w.cut_off_ci95 = p.cut.mean, normal(p.cut.mean, p.cut.se, 0.0, 1.0)
        w.cut_off_passes = p.cut_passes
    if p.length is not None:
        w.length_mean, w.length_p90, w.length_unit = p.length.mean, p.p90(), "characters"
        w.blank_passes, w.repeated_replies, w.graded_both_ways = p.blank_passes, p.repeated, p.flipped
        w.length_rho, w.length_z = p.rho, p.z
    if p.distinct is not None and p.distinct.n:
        w.distinct_share, w.distinct_ci95 = p.distinct.mean, normal(p.distinct.mean, p.distinct.se, 0.0, 1.0)
    logged = [metrics[s.step] for s in p.steps if s.step in metrics]
    for name in ("entropy", "kl"):
        values = [m[name] for m in logged if name in m]
        setattr(w, name, float(np.mean(values)) if values else None)
    if w.cut_off_share is None:  # TRL's per-step clipped_ratio where the rows do not say
        values = [m["cut_off_share"] for m in logged if "cut_off_share" in m]
        w.cut_off_share = float(np.mean(values)) if values else None
    return w


def cut_windows(steps: list[StepSummary], size: int) -> list[list[StepSummary]]:
    return [steps[i:i + size] for i in range(0, len(steps), size)]


def metric_windows(metrics: dict[int, dict[str, float]], size: int) -> list[Window]:
    """Windows of logged scalars alone: each step's value an observation, the interval from their spread."""
    steps = sorted(metrics)
    out = []
    for index, start in enumerate(range(0, len(steps), size)):
        chunk = steps[start:start + size]
        w = Window(index=index, first_step=chunk[0], last_step=chunk[-1], steps=len(chunk), partial=len(chunk) < size)
        for ours, attr in (("reward", "reward"), ("split_share", "split_share"), ("all_pass_share", "all_pass_share"),
                           ("all_fail_share", "all_fail_share"), ("cut_off_share", "cut_off_share"),
                           ("length_tokens", "length_mean"), ("entropy", "entropy"), ("kl", "kl")):
            values = np.array([metrics[s][ours] for s in chunk if ours in metrics[s]])
            if not len(values):
                continue
            setattr(w, attr, float(values.mean()))
            if attr in ("reward", "split_share", "cut_off_share") and len(values) >= 2:
                ci = normal(float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values))))
                setattr(w, {"reward": "reward_ci95", "split_share": "split_ci95",
                            "cut_off_share": "cut_off_ci95"}[attr], ci)
        if w.split_share is None:
            zero = [metrics[s]["zero_std_share"] for s in chunk if "zero_std_share" in metrics[s]]
            if zero:
                w.split_share = 1 - float(np.mean(zero))
        if w.length_mean is not None:
            w.length_unit = "tokens"
        out.append(w)
    return out


def window_size(size: int | None) -> int:
    return int(size) if size else D.TRACK_WINDOW
