"""The mistakes `after` refuses to judge: the same rows given twice, the arms swapped against the frozen manifest,
two evaluations under one name, and the arms' rollouts per task differing (said, with what it does).

Each returns reasons (the verdict is then not_comparable) or warnings; none reads a file.
"""

from __future__ import annotations

import dataclasses

from collections.abc import Mapping

import numpy as np

from ..rows import GradedRows, display_name
from ..shared import dominant_model


def same_rows(a: GradedRows, b: GradedRows) -> bool:
    """The same rollouts: the same tasks, grades and replies in the same order (a folder given twice, a copy); for two
    summaries, the same counts for the same tasks. The cheap columns are compared first."""
    if len(a) != len(b) or (a.counts is None) != (b.counts is None):
        return False
    if not np.array_equal(a.reward, b.reward, equal_nan=True):
        return False
    if a.counts is not None and not all(np.array_equal(getattr(a.counts, f.name), getattr(b.counts, f.name),
                                                       equal_nan=np.asarray(getattr(a.counts, f.name)).dtype.kind == "f")
                                        for f in dataclasses.fields(a.counts)):
        return False
    if (a.reply_len is None) != (b.reply_len is None) or (
            a.reply_len is not None and not (np.array_equal(a.reply_len, b.reply_len)
                                             and np.array_equal(a.reply_hash, b.reply_hash))):
        return False
    return _named(a.task_names, a.task) == _named(b.task_names, b.task) and (
        _named(a.model_names, a.model) == _named(b.model_names, b.model))


def _named(names: list[str], codes: np.ndarray) -> list[str | None]:
    """Each row's name (None for a code of -1), so two reads that coded the same names apart compare equal."""
    lookup = np.asarray([*names, None], dtype=object)
    return lookup[np.where(codes >= 0, codes, len(names))].tolist()


def identical(arms: Mapping[str, GradedRows]) -> list[str]:
    """Before and after holding the same rows: a run compared with itself says nothing about training. (The controls
    are left to stand in for one another or for after in a dry run.)"""
    if "before" not in arms or "after" not in arms or not same_rows(arms["before"], arms["after"]):
        return []
    where = arms["after"].read_from or arms["after"].source
    shown = f" ({where})" if isinstance(where, str) else ""
    return [f"before and after are the same rows{shown}: one run compared with itself shows nothing; pass the base's "
            f"rows as before and the trained checkpoint's as after"]


def swapped(arms: Mapping[str, GradedRows], base_model: str | None) -> tuple[list[str], list[str]]:
    """(reasons, warnings) from the manifest's base model: after sampled by it, before by another, is a swap; both
    by it, a warning (a checkpoint served under the base's name, or the base's rows given twice)."""
    if not base_model:
        return [], []
    b, a = dominant_model(arms["before"]), dominant_model(arms["after"])
    if a is None or display_name(a) != display_name(base_model):
        return [], []
    if b is not None and display_name(b) != display_name(base_model):
        return [f"after's rows were sampled by {display_name(a)}, the base model the frozen manifest was drawn from, "
                f"and before's by {display_name(b)}: the arms look swapped; pass the base's rows as before (first) "
                f"and the trained checkpoint's as after (second)"], []
    return [], [f"after's rows name {display_name(a)}, the base model the frozen manifest was drawn from: if the "
                f"checkpoint is served under the base's name, say so to yourself and go on; else after holds the "
                f"base's rows, not the trained checkpoint's"]


def two_evaluations(arms: Mapping[str, GradedRows]) -> list[str]:
    """Arms read by the same tool that name different environments / tasks: two evaluations, whatever their ids."""
    names = list(arms)
    first = arms[names[0]]
    out = []
    for other in names[1:]:
        rows = arms[other]
        same_tool = set(first.formats) & set(rows.formats)
        if first.suites and rows.suites and same_tool and not set(first.suites) & set(rows.suites):
            out.append(f"{names[0]} is {', '.join(first.suites)} and {other} is {', '.join(rows.suites)} (both "
                       f"{sorted(same_tool)[0]}): two evaluations, not one scored twice; score every arm on the same "
                       f"one")
    return out


def rollouts_differ(ks: Mapping[str, int], means: Mapping[str, float]) -> list[str]:
    """A warning where the arms' rollouts per task differ, and what that does to the comparison."""
    if len(set(ks.values())) < 2 and max(means.values()) - min(means.values()) < 0.5:
        return []
    shown = ", ".join(f"{n} k={ks[n]}" + (f" (mean {means[n]:.3g})" if abs(means[n] - ks[n]) >= 0.5 else "")
                      for n in ks)
    low = min(ks, key=ks.__getitem__)
    return [f"the arms' rollouts per task differ ({shown}): each task's pass rate is the mean of its own rollouts, "
            f"so the paired difference is still unbiased for pass@1, but {low}'s rates carry most of the noise (each "
            f"arm's interval is capped at its own rollouts) and the sizing assumes k={ks[low]}; a pass@k or "
            f"majority-vote score would not compare at all. Score every arm at the same k"]
