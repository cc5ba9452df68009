"""Rows in: every input the router takes, read once into `GradedRows`.

`as_rows` takes rows already in hand (a list of dicts, or GradedRows); `read_rows` takes a file, a run folder, a
glob or a list of them, and reads each file by the format its content shows (`registry.py`): an eval tool's own
output (verifiers, lm-evaluation-harness, inspect-ai, verl's rollout dumps) or plain rows (JSONL, JSON, CSV,
Parquet). Modules: `base` (the interface), `registry` (the formats, detection, paths), `once` (the same
rollouts reached twice, by two names or in two forms, read once), one module per tool, `plain_formats` + `plain` +
`columnar`/`arrow_columns` (plain files, careful and fast), `builder` (row dicts to columns).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import fields as F
from pick_a_method.common.errors import InputError
from ..rows import GradedRows, RowsLike
from .base import ReadArgs
from .builder import ColumnBuilder
from .plain import CHUNK_ROWS, Progress

__all__ = ["as_rows", "read_rows", "CHUNK_ROWS"]


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


def _is_paths(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and bool(value)
            and all(isinstance(v, (str, bytes, os.PathLike)) for v in value))


def read_rows(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[dict[str, Any]], *,
              fields: Mapping[str, str] | None = None, format: str | None = None, max_rows: int | None = None,
              max_bytes: int | None = None, progress: Progress | None = None, argument: str = "path",
              roots: Sequence[str | os.PathLike[str]] | None = None) -> GradedRows:
    """Read graded rows from a file, a run folder, a glob, or a list of them (or take a list of row dicts).

    Each file's format is told from its content: vf-eval's results.jsonl (+ metadata.json) or traces.jsonl,
    lm-eval's samples_*.jsonl (+ results_*.json), an inspect-ai log (.eval, or `inspect log dump` JSON), verl's
    rollout dumps, or plain rows (JSONL, optionally .gz; a JSON array; CSV; Parquet). `fields` maps canonical names
    (task_id, reward, truncated, model, arm, tokens) to yours, e.g. {"reward": "correct", "model": "sampling.model"}
    (a dotted path reaches in; a number indexes a list). `max_rows` and `max_bytes` cap what is read; going past
    either is an InputError that names the cap. `progress(done_bytes, total_bytes)` is called as it reads.
    `argument` names `path` in errors. `roots` confines every file read (the ones a folder or glob names too) to
    those folders, symlinks resolved first; None reads anywhere.
    """
    if not isinstance(path, (str, bytes, os.PathLike)) and not _is_paths(path):
        if isinstance(path, GradedRows):
            return as_rows(path, fields=fields)
        if max_rows is not None and isinstance(path, Sequence) and len(path) > max_rows:
            raise InputError(f"more than {max_rows:,} rows; raise the cap with --max-rows (or "
                             f"PICK_A_METHOD_MAX_ROWS), or pass a sample of the rows", field="rows")
        return as_rows(path, fields=fields)  # type: ignore[arg-type]
    from .registry import read_paths

    args = ReadArgs(fields=F.check_fields(fields), max_rows=max_rows, max_bytes=max_bytes, progress=progress,
                    argument=argument, format=format,
                    roots=None if roots is None else tuple(Path(os.path.realpath(r)) for r in roots))
    return read_paths(path, args)  # type: ignore[arg-type]
