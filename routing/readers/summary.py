"""A per-task summary: one row per task (and model, arm, step, token budget) with the counts the verdicts read, as
DuckDB or Spark write it from rows past one machine (summary_sql.py has their query; counts.py what each count is).

Read as Parquet (what both engines write, a folder of part files included), JSONL or CSV; told from the columns
(task_id, rollouts, graded, passes, pass_threshold). The entries become GradedRows whose `counts` hold the sums,
so every question reads the table built from them (counts.summary_table) as it reads one built from rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pick_a_method.common.errors import InputError
from ..counts import COUNTS, RANGE, SCHEMA_VERSION, SUMS, SummaryCounts
from ..rows import GradedRows
from .base import Format, Probe, ReadArgs

TELLTALE = ("task_id", "rollouts", "graded", "passes", "pass_threshold")  # every summary has these columns
NAME = "per-task summary"


def _columns(probe: Probe) -> list[str]:
    """The column names of a Parquet file, a JSONL file's first row or a CSV header ([] when none)."""
    if probe.zip_names is not None:
        return []
    if probe.head[:4] == b"PAR1":
        try:
            import pyarrow.parquet as pq

            return list(pq.read_schema(probe.path).names)
        except Exception:  # noqa: BLE001  (a damaged file: the plain reader says why)
            return []
    if probe.first is not None:
        return list(probe.first)
    line = probe.head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
    return [c.strip().strip('"') for c in line.split(",")] if "," in line else []


def _sniff(probe: Probe) -> bool:
    return set(TELLTALE) <= set(_columns(probe))


def _table(p: Path, probe: Probe) -> Any:
    import pyarrow as pa

    try:
        if probe.head[:4] == b"PAR1":
            import pyarrow.parquet as pq

            return pq.read_table(p)
        if probe.first is not None:
            import pyarrow.json as pj

            return pj.read_json(p)
        import pyarrow.csv as pc

        return pc.read_csv(p)
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"{p}: a per-task summary that cannot be read ({e}); write it again", field="rows") from None


def _codes(col: Any) -> tuple[np.ndarray, list[str]]:
    """Codes in first-seen order (-1 for null) and the names, as the rows' readers code tasks, models and arms."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = pc.cast(col, pa.string()) if not pa.types.is_null(col.type) else pa.nulls(len(col), pa.string())
    enc = col.combine_chunks().dictionary_encode() if isinstance(col, pa.ChunkedArray) else col.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False)
    codes = np.where(enc.indices.is_null().to_numpy(zero_copy_only=False), -1, codes).astype(np.int32)
    return codes, [str(x) for x in enc.dictionary.to_pylist()]


def _numbers(table: Any, name: str, fill: float) -> np.ndarray:
    if name not in table.column_names:
        return np.full(table.num_rows, fill)
    import pyarrow as pa

    col = table.column(name).cast(pa.float64())
    return col.to_numpy(zero_copy_only=False).astype(np.float64)


def _in_order(seen: Any) -> bool:
    """A whole-number first_seen with no nulls that never falls (summarize writes it so): Arrow's stable sort would
    keep every entry where it is, so none is needed."""
    import pyarrow as pa

    if seen.null_count or not pa.types.is_integer(seen.type):
        return False
    order = seen.to_numpy()
    return bool((order[1:] >= order[:-1]).all())


def _check(p: Path, table: Any, c: dict[str, np.ndarray], task: np.ndarray) -> None:
    """Refuse a summary whose counts cannot come from rows, naming the first bad row and its column."""
    def bad(mask: np.ndarray, what: str, column: str) -> None:
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            raise InputError(f"row {i + 1} of {p}: {what}; make the summary again with pick-a-method summarize or "
                             f"the query summary-sql prints", row=i, field=column)

    bad(task < 0, "task_id is empty (rows with no task id cannot be grouped: give every row its task)", "task_id")
    for name in COUNTS:
        v = c[name]
        bad(np.isnan(v) | (v < 0) | (v != np.floor(v)), f"{name} is not a whole number of rows, 0 or more", name)
    bad(c["graded"] > c["rollouts"], "more graded rows than rollouts", "graded")
    bad(c["passes"] > c["graded"], "more passes than graded rows", "passes")
    bad(c["truncated_passes"] > np.minimum(c["truncated"], c["passes"]), "more cut-off passes than cut-off rows or "
        "passes", "truncated_passes")
    bad(c["truncated"] > c["truncation_stated"], "more cut-off rows than rows that say whether they were cut off",
        "truncated")
    bad(np.isinf(c["reward_min"]) | np.isinf(c["reward_max"]), "a reward is infinite; a reward must be a finite "
        "number (null when the row is not graded)", "reward_max")


def read_summary(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    table = _table(p, probe)
    version = _numbers(table, "summary_version", SCHEMA_VERSION)
    if len(version) and np.nanmax(version) > SCHEMA_VERSION:
        raise InputError(f"{p} is a summary of version {int(np.nanmax(version))}; this pick-a-method reads up to "
                         f"{SCHEMA_VERSION}: upgrade it", field="summary_version")
    if "first_seen" in table.column_names and not _in_order(table.column("first_seen")):
        import pyarrow.compute as pc  # the engines group in no order: back to the rows' first-seen order

        table = table.take(pc.sort_indices(table, [("first_seen", "ascending")]))
    c = {name: _numbers(table, name, 0.0) for name in (*COUNTS, *SUMS)}
    c.update({name: _numbers(table, name, np.nan) for name in RANGE})
    thresholds = np.unique(_numbers(table, "pass_threshold", np.nan))
    if len(thresholds) > 1 or (len(thresholds) and np.isnan(thresholds[0])):
        raise InputError(f"{p}: pass_threshold is {', '.join(f'{t:g}' for t in thresholds)}; a summary counts passes "
                         f"at one threshold: make it again with one", field="pass_threshold")
    task, task_names = _codes(table.column("task_id"))
    _check(p, table, c, task)
    model, model_names = _codes(table.column("model")) if "model" in table.column_names else (
        np.full(table.num_rows, -1, np.int32), [])
    arm, arm_names = _codes(table.column("arm")) if "arm" in table.column_names else (
        np.full(table.num_rows, -1, np.int32), [])
    step = _numbers(table, "step", np.nan)
    ints = {name: c[name].astype(np.int64) for name in COUNTS}
    counts = SummaryCounts(**ints, **{name: c[name] for name in (*SUMS, *RANGE)},
                           step=np.where(np.isnan(step), -1, step).astype(np.int64),
                           pass_threshold=float(thresholds[0]) if len(thresholds) else 1.0)
    n = table.num_rows
    with np.errstate(invalid="ignore", divide="ignore"):
        tokens = np.where(ints["tokens_n"] > 0, c["tokens_sum"] / ints["tokens_n"], np.nan)
    notes = []
    unknown = int(ints["reasons_unknown"].sum())
    if unknown:
        notes.append(f"{unknown} rows gave a finish reason not known as a cut-off or a stop; they count as not saying "
                     f"whether they were cut off. If it means the reply hit the token cap, summarize again with "
                     f"fields={{\"cut_off\": \"<that word>\"}}")
    return GradedRows(
        task=task, task_names=task_names, reward=np.full(n, np.nan), truncated=np.zeros(n, bool),
        stated=np.zeros(n, bool), model=model, model_names=model_names,
        max_tokens=_numbers(table, "max_tokens", np.nan), nan_reward=np.zeros(n, bool), has_pairs=False,
        source=str(p), arm=arm if arm_names else None, arm_names=arm_names,
        tokens=tokens if ints["tokens_n"].any() else None, fields=dict(args.fields), notes=notes,
        formats=[NAME], counts=counts)


FORMATS = (Format(name=NAME, tool="pick-a-method summarize (DuckDB), or the query summary-sql prints run by DuckDB or "
                  "Spark SQL", sniff=_sniff, read=read_summary, keys=TELLTALE),)
