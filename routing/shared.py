"""What every job says of the rows and their table: the pass-threshold check, the arguments that read the rows
again, the grading warnings each verdict carries, who sampled most rows and at what token cap, and the words
for counts (a group or a task). The route, forecasting, `after` and `track` all read these; none owns them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pick_a_method.common.errors import InputError

from . import defaults as D
from .counts import weighted_median
from .rows import NAME_LIMIT, GradedRows, display_name
from .table import Table, table_of

MAX_K = 1_000_000_000  # rollouts per task; a larger k is a mistake, and past 1.8e308 one that overflows


def rows_arguments(rows: GradedRows) -> tuple[dict[str, Any], list[str]]:
    """The `rows_path` (and `fields`) arguments that re-read these rows, or a note that the caller must pass
    them again."""
    extra = {"fields": dict(rows.fields)} if rows.fields else {}
    if rows.read_from is not None or rows.source is not None:
        return {"rows_path": rows.read_from if rows.read_from is not None else rows.source, **extra}, []
    return extra, ["rows"]


def check_threshold(pass_threshold: float) -> float:
    if not np.isfinite(pass_threshold):
        raise InputError(f"pass_threshold is {pass_threshold}; give a finite number (default "
                         f"{D.PASS_THRESHOLD}: a row passes when reward >= it)", field="pass_threshold")
    return float(pass_threshold)


def groups(rows: GradedRows, pass_threshold: float = D.PASS_THRESHOLD) -> Table:
    """The graded groups (one task's rollouts from one sampler in one arm) of the rows' table."""
    return table_of(rows, pass_threshold).graded()


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def replies(n: int, kind: str) -> str:
    return f"{n} {kind} {'reply' if n == 1 else 'replies'}"


def unit(g: Table) -> str:
    """What one entry of the table is called in a count: a group (one task's rollouts from one sampler in one arm)
    where some task has several (samplers, arms), else a task, so no count of groups reads as tasks."""
    return "group" if len(g) != g.n_tasks else "task"


def groups_of(g: Table) -> str:
    """'50 tasks', or '100 groups (50 tasks)' where a task has several groups."""
    return f"{plural(len(g), 'group')} ({plural(g.n_tasks, 'task')})" if unit(g) == "group" else plural(len(g), "task")


def single_warning(n_single: int, word: str = "task") -> str:
    """One wording for groups of one, so rollouts_per_task and band do not say it twice in a route."""
    return (f"{plural(n_single, word)} {'has' if n_single == 1 else 'have'} a single graded rollout: it cannot "
            f"split, so a grouped method gets no signal from it and split_share leaves it out; drop such {word}s or "
            f"sample them again")


def sampler_warning(t: Table) -> list[str]:
    if not t.several:
        return []
    s = t.samplers()
    shown = "; ".join(t.sampler_label(*_codes_of(t, e)) + f" ({e['rows']} rows)" for e in s[:4])
    more = f" and {len(s) - 4} more" if len(s) > 4 else ""
    return [f"rows from {len(s)} samplers/arms ({shown}{more}): each task's rollouts are grouped per sampler and "
            f"arm ({len(t)} groups over {plural(t.n_tasks, 'task')}), never pooled"]


def _codes_of(t: Table, entry: dict[str, Any]) -> tuple[int, int]:
    names, arms = t.model_names, t.rows.arm_names
    m = next((i for i, n in enumerate(names) if display_name(n) == entry["model"]), -1)
    a = next((i for i, n in enumerate(arms) if display_name(n) == entry.get("arm")), -1)
    return m, a


def reward_scale(rows: GradedRows, pass_threshold: float) -> tuple[float, float] | None:
    """(lowest, highest) graded reward when the rewards run on a scale past 0-1 (0-10, 0-100) while a pass is still
    read at the default threshold of 1: every partial score would then pass. None when the scale and the threshold
    agree (or the caller moved the threshold)."""
    span = rows.reward_range()
    if span is None or pass_threshold != D.PASS_THRESHOLD:
        return None
    low, high = span
    return (low, high) if high >= D.SCALE_PAST else None


def scale_advice(scale: tuple[float, float]) -> str:
    low, high = scale
    return (f"rewards run from {low:g} to {high:g}, not 0 to 1, and a row passes at reward >= {D.PASS_THRESHOLD:g}, so "
            f"a score of 1 out of {high:g} passes: set pass_threshold to the score that means solved (e.g. "
            f"pass_threshold={high:g} for full marks), or rescale the rewards to 0-1")


def grading_warnings(rows: GradedRows, g: Table, pass_threshold: float) -> list[str]:
    """What the caller must know about how the rows were graded (g: the whole table, ungraded groups too)."""
    out = list(rows.notes)
    scale = reward_scale(rows, pass_threshold)
    if scale is not None:
        advice = scale_advice(scale)
        out.append(advice[0].upper() + advice[1:])
    if g.n_ungraded:
        nan = f" ({rows.n_nan_rewards} of them NaN: did the grader fail?)" if rows.n_nan_rewards else ""
        out.append(f"{g.n_ungraded} of {rows.n_rollouts} rows carry no reward{nan}; they are left out of every rate, "
                   f"not counted as fails")
    if g.n_nonbinary:
        out.append(f"{g.n_nonbinary} graded rows have a reward other than 0 or 1; a row passes when reward >= "
                   f"{pass_threshold:g} (set pass_threshold to change that)")
    span = rows.reward_range()
    if g.n_graded >= 2 and span[0] == span[1]:
        out.append(f"every graded row scored {span[0]:g}; check the grader before reading any rate")
    return out


def listing(names: list[str], values: list[float]) -> dict[str, float]:
    """name -> value, stopping once the listed names reach LIST_CHARS characters (answers stay small)."""
    out, used = {}, 0
    for name, value in zip(names, values):
        used += min(len(name), NAME_LIMIT) + 24
        if used > D.LIST_CHARS and out:
            break
        out[name] = value
    return out


def cap_list(items: list[Any], limit: int = D.LIST_LIMIT) -> tuple[list[Any], int]:
    return items[:limit], max(0, len(items) - limit)


def model_rollouts(rows: GradedRows) -> np.ndarray:
    """Rollouts per model code (a summary's rows count theirs)."""
    named = rows.model >= 0
    weights = None if rows.weights is None else rows.weights[named]
    return np.bincount(rows.model[named], weights=weights, minlength=len(rows.model_names)).astype(np.int64)


def dominant_model(rows: GradedRows) -> str | None:
    """The model that sampled most of the rows, or None when no row names one."""
    counts = model_rollouts(rows)
    if not counts.any():
        return None
    return rows.model_names[int(counts.argmax())]


def median_budget(rows: GradedRows) -> float | None:
    """The median token budget the rows state (a summary's, weighted by the rollouts each budget counts)."""
    if rows.weights is not None:
        return weighted_median(rows.max_tokens, rows.weights)
    stated = rows.max_tokens[~np.isnan(rows.max_tokens)]
    return float(np.median(stated)) if len(stated) else None
