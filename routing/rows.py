"""Graded rows in, columns out.

Every routing function works on `GradedRows`: one numpy column per field the router reads (task, reward,
truncation, sampler, arm, tokens), built once at the edge from a list of dicts or a file, with the field
names resolved by the row-field contract (`fields.py`). Files go through the columnar reader (pyarrow)
where it can take them, else through the careful reader, which names the line and field of a bad value.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import fields as F
from .builder import ColumnBuilder
from .careful import CHUNK_ROWS, Progress, _open_bytes, read_careful
from .errors import InputError
from .paths import expand_user_path

TASK_FIELDS = F.NATIVE["task_id"]  # first present wins (DESIGN.md)
FORMATS = ("jsonl", "json", "csv", "parquet")
__all__ = ["GradedRows", "RowsLike", "as_rows", "read_rows", "display_name", "make_rows", "CHUNK_ROWS", "NAME_LIMIT"]


@dataclass(frozen=True)
class GradedRows:
    """The columns the router reads, one entry per rollout."""

    task: np.ndarray  # int32 code into task_names
    task_names: list[str]
    reward: np.ndarray  # float64; NaN = ungraded (missing, null or NaN)
    truncated: np.ndarray  # bool: `truncated` is true or finish_reason == "length"
    stated: np.ndarray  # bool: the row says whether it was cut off (truncated or finish_reason)
    model: np.ndarray  # int32 code into model_names; -1 = the row names no model
    model_names: list[str]
    max_tokens: np.ndarray  # float64 token budget the row was sampled with; NaN = not stated
    nan_reward: np.ndarray  # bool: the reward was NaN (a grader failure?), told apart from a missing one
    has_pairs: bool  # some row carries both `chosen` and `rejected` (a natural preference pair)
    lines: np.ndarray | None = None  # 1-based line numbers when read from a file
    source: str | None = None
    arm: np.ndarray | None = None  # int32 code into arm_names; -1 = no arm; None = no row has one
    arm_names: list[str] = field(default_factory=list)
    tokens: np.ndarray | None = None  # float64 completion tokens; NaN = not stated; None = no row states any
    fields: dict[str, str] = field(default_factory=dict)  # the caller's mapping these rows were read with
    notes: list[str] = field(default_factory=list)  # grades / samplers carried under names not read
    suggested_fields: dict[str, str] = field(default_factory=dict)  # the `fields` that would read a grade found
    _tables: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)  # table.py's cache

    def __len__(self) -> int:
        return int(self.task.shape[0])

    @property
    def n_tasks(self) -> int:
        return len(self.task_names)

    @property
    def n_truncation_stated(self) -> int:
        return int(self.stated.sum())

    @property
    def n_nan_rewards(self) -> int:
        return int(self.nan_reward.sum())

    @property
    def arms(self) -> np.ndarray:
        return self.arm if self.arm is not None else np.full(len(self), -1, dtype=np.int32)

    def where(self, i: int) -> str:
        """How to point a person at row i."""
        if self.lines is not None:
            return f"line {int(self.lines[i])} of {self.source}"
        return f"row {i}"

    def refs(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """Evidence entries for rows: where they are and which task they answered."""
        return [{"row": int(i), **({"line": int(self.lines[i])} if self.lines is not None else {}),
                 "task_id": display_name(self.task_names[int(self.task[i])])} for i in indices]

    def subset(self, mask: np.ndarray) -> GradedRows:
        """The rows where `mask` is true, sharing names and codes (so tasks compare across subsets)."""
        pick = lambda a: None if a is None else a[mask]  # noqa: E731
        return GradedRows(
            task=self.task[mask], task_names=self.task_names, reward=self.reward[mask],
            truncated=self.truncated[mask], stated=self.stated[mask], model=self.model[mask],
            model_names=self.model_names, max_tokens=self.max_tokens[mask], nan_reward=self.nan_reward[mask],
            has_pairs=self.has_pairs, lines=pick(self.lines), source=self.source, arm=pick(self.arm),
            arm_names=self.arm_names, tokens=pick(self.tokens), fields=self.fields, notes=self.notes)


RowsLike = GradedRows | Sequence[dict[str, Any]]

NAME_LIMIT = 80  # a longer task id (a whole prompt, say) is listed shortened, so answers stay small


def display_name(name: str) -> str:
    """A name as verdicts list it: whole up to NAME_LIMIT characters, else its head plus a stable hash."""
    if len(name) <= NAME_LIMIT:
        return name
    return f"{name[:60]}…{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def make_rows(*, task: np.ndarray, task_names: list[str], reward: np.ndarray, truncated: np.ndarray,
              stated: np.ndarray, model: np.ndarray, model_names: list[str], arm: np.ndarray,
              arm_names: list[str], tokens: np.ndarray, max_tokens: np.ndarray, nan_reward: np.ndarray, has_pairs: bool,
              lines: np.ndarray | None, source: str | None, fields: Mapping[str, str], keys: list[str],
              reward_read: bool) -> GradedRows:
    """GradedRows from finished columns (both readers end here), with the notes on fields not read."""
    notes = F.field_notes(keys, fields, reward_read=reward_read, model_read=bool((model >= 0).any())) if keys else []
    return GradedRows(
        task=task, task_names=task_names, reward=reward, truncated=truncated, stated=stated,
        model=model, model_names=model_names, max_tokens=max_tokens, nan_reward=nan_reward,
        has_pairs=has_pairs, lines=lines, source=source, arm=arm if arm_names else None, arm_names=arm_names,
        tokens=tokens if len(tokens) and not np.isnan(tokens).all() else None, fields=dict(fields), notes=notes,
        suggested_fields=F.suggest(keys, fields, reward_read=reward_read))


def as_rows(rows: RowsLike | None, *, what: str = "rows", fields: Mapping[str, str] | None = None) -> GradedRows:
    """Accept a list of row dicts or an already-read `GradedRows`."""
    if isinstance(rows, GradedRows):
        if fields and F.check_fields(fields) != rows.fields:
            raise InputError(f"{what} were read with fields={rows.fields}; pass fields to read_rows, not here",
                             field="fields")
        return rows
    if rows is None:
        raise InputError(f"no {what} given: pass a list of graded rows or read a file with read_rows(path)",
                         field=what)
    if isinstance(rows, (str, bytes, os.PathLike)):
        raise InputError(f"{what} is a path, not rows: call read_rows({str(rows)!r}) first", field=what)
    if isinstance(rows, Mapping):
        raise InputError(f"{what} is one object, not a list of rows: wrap it in a list", field=what)
    builder = ColumnBuilder(source=None, fields=fields)
    builder.add(list(rows))
    return builder.finish()


def read_rows(path: str | os.PathLike[str] | Sequence[dict[str, Any]], *, fields: Mapping[str, str] | None = None,
              format: str | None = None, max_rows: int | None = None, max_bytes: int | None = None,
              progress: Progress | None = None, argument: str = "path") -> GradedRows:
    """Read graded rows from JSONL (optionally .gz), a JSON array, CSV, or Parquet, or take a list of row dicts.

    `fields` maps canonical names (task_id, reward, truncated, model, arm, tokens) to yours, e.g.
    {"reward": "correct", "model": "sampling.model"}. `max_rows` and `max_bytes` cap what is read; going past
    either is an InputError that names the cap. `progress(done_bytes, total_bytes)` is called as it reads.
    `argument` names `path` in errors.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        if isinstance(path, GradedRows):
            return as_rows(path, fields=fields)
        if max_rows is not None and isinstance(path, Sequence) and len(path) > max_rows:
            raise InputError(f"more than {max_rows:,} rows; raise the cap with --max-rows (or "
                             f"PICK_A_METHOD_MAX_ROWS), or pass a sample of the rows", field="rows")
        return as_rows(path, fields=fields)  # type: ignore[arg-type]
    p = expand_user_path(path, argument)
    if not p.exists():
        raise InputError(f"{p}: no such file; check the path (relative paths are read from {Path.cwd()})",
                         field="rows_path")
    if p.is_dir():
        raise InputError(f"{p} is a folder, not a file of rows: name the .jsonl/.json/.csv file inside it",
                         field="rows_path")
    if not p.is_file():  # a pipe blocks the read forever; a device (/dev/zero) never ends
        raise InputError(f"{p} is not a regular file (a pipe, socket or device); save the rows to a file and "
                         f"pass its path", field="rows_path")
    size = p.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise InputError(f"{p} is {size:,} bytes, over the cap of {max_bytes:,} bytes; raise it with the "
                         f"server option --max-bytes (or PICK_A_METHOD_MAX_BYTES), or split the file",
                         field="rows_path")
    fmt = format or _guess_format(p)
    if fmt not in FORMATS:
        raise InputError(f"{p}: unknown format {fmt!r}; use one of {', '.join(FORMATS)}", field="format")
    builder = ColumnBuilder(source=str(p), max_rows=max_rows, fields=fields)  # checks `fields` first
    from .columnar import read_columnar

    fast = read_columnar(p, fmt, builder, size=size, progress=progress)
    if fast is not None:
        return fast
    read_careful(p, fmt, builder, size=size, progress=progress, max_bytes=max_bytes)
    return builder.finish()


def _guess_format(p: Path) -> str:
    name = p.name.lower()
    for suffix in (".gz",):
        name = name.removesuffix(suffix)
    for ext, fmt in ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".csv", "csv"),
                     (".parquet", "parquet"), (".pq", "parquet")):
        if name.endswith(ext):
            return fmt
    # Unknown extension: sniff the first non-blank byte.
    with _open_bytes(p) as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] == b"[":
        return "json"
    if head[:1] == b"{":
        return "jsonl"
    raise InputError(f"{p}: cannot tell the format from the name or the first bytes; name the file .jsonl, "
                     f".json, .csv or .parquet, or pass format=", field="format")
