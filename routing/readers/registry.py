"""The formats in detection order, the one function that tells a file's format, and the read of a path argument
(a file, a run folder, a glob, or several of them) into one set of rows.

To add a format: write its reader module (a `Format` with `sniff` and `read`, see base.py), put it in FORMATS
above the plain formats, and add a fixture the real tool wrote under tests/fixtures/eval_tools/.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pick_a_method.common.errors import InputError
from pick_a_method.common.paths import confine, expand_user_path
from ..rows import GradedRows, concat
from . import inspect_ai, lm_eval, plain_formats, summary, verifiers, verl
from .base import Format, Probe, ReadArgs
from .once import distinct

# Most specific first: each eval tool's format before the plain files its rows also are (a per-task summary too).
FORMATS: tuple[Format, ...] = (
    *summary.FORMATS, *inspect_ai.FORMATS, *verifiers.FORMATS, *lm_eval.FORMATS, *verl.FORMATS, *plain_formats.FORMATS)
FOLDER_LIMIT = 10_000  # files looked at under one folder or glob


def detect(probe: Probe) -> Format | None:
    """The format of a file, from its content (the plain formats fall back on the extension)."""
    return next((f for f in FORMATS if f.sniff(probe)), None)


def closest(keys: Sequence[str]) -> str:
    """' (closest known format: ...)' for a file that read as none: the format whose telltale fields it shares most."""
    have = set(keys)
    best = max((f for f in FORMATS if f.keys), key=lambda f: len(have & set(f.keys)), default=None)
    if best is None or not have & set(best.keys):
        return ""
    missing = [k for k in best.keys if k not in have]
    return (f" (closest known format: {best.name}, written by {best.tool}; it has "
            f"{', '.join(sorted(have & set(best.keys)))} but not {', '.join(missing)})")


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _files(p: Path, argument: str) -> list[Path]:
    """A folder's files, recursively, in name order, hidden ones skipped."""
    out = []
    for root, dirs, names in os.walk(p):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [Path(root) / n for n in sorted(names) if not n.startswith(".")]
        if len(out) > FOLDER_LIMIT:
            raise InputError(f"{p} holds more than {FOLDER_LIMIT:,} files; name the run folder or the files "
                             f"themselves", field=argument)
    return out


def _check_file(p: Path, args: ReadArgs) -> None:
    if not p.exists():
        raise InputError(f"{p}: no such file; check the path (relative paths are read from {Path.cwd()})",
                         field=args.argument)
    if not p.is_file():  # a pipe blocks the read forever; a device (/dev/zero) never ends
        raise InputError(f"{p} is not a regular file (a pipe, socket or device); save the rows to a file and "
                         f"pass its path", field=args.argument)
    size = p.stat().st_size
    if args.max_bytes is not None and size > args.max_bytes:
        raise InputError(f"{p} is {size:,} bytes, over the cap of {args.max_bytes:,} bytes; raise it with the "
                         f"server option --max-bytes (or PICK_A_METHOD_MAX_BYTES), or split the file",
                         field=args.argument)


def _prepare(p: Path, probe: Probe | None, args: ReadArgs) -> tuple[Path, Probe, Format]:
    """One file checked and its format told; `probe` is the folder walk's, where it already read the file's head."""
    p = confine(p, args.argument, args.roots)  # every file, also those a folder or glob named: symlinks resolved
    _check_file(p, args)
    probe = probe or Probe.of(p)
    fmt = plain_formats.named(args.format) if args.format else detect(probe)
    if fmt is None:
        if probe.zip_names is not None:
            raise InputError(f"{p}: a zip archive that is not an inspect-ai .eval log (no header.json or "
                             f"samples/ inside); unzip it and name the rows file", field=args.argument)
        raise InputError(f"{p}: cannot tell the format from the content or the name; name the file .jsonl, .json, "
                         f".csv or .parquet (an inspect-ai log is read as its .eval file or `inspect log dump` JSON)",
                         field="format")
    return p, probe, fmt


def _one(p: Path, probe: Probe, fmt: Format, args: ReadArgs) -> GradedRows:
    """One file read by its format."""
    try:
        return fmt.read(p, probe, args)
    except InputError as e:
        if e.field in ("task_id", "scenario_id", "prompt") and fmt in plain_formats.FORMATS and probe.first:
            raise InputError(f"{e}{closest(list(probe.first))}", row=e.row, field=e.field) from None
        raise


def _gather(value: str | os.PathLike[str], args: ReadArgs) -> list[tuple[Path, Probe | None]]:
    """The files one path argument names: the file itself, a folder's rows files, or a glob's matches."""
    p = expand_user_path(value, args.argument)
    if p.exists() or not _is_glob(str(p)):
        p = confine(value, args.argument, args.roots)
    if not p.exists() and _is_glob(str(p)):
        matches = sorted(glob.glob(str(p), recursive=True))[: FOLDER_LIMIT + 1]
        if not matches:
            raise InputError(f"{os.fsdecode(value)}: the pattern matches no file; check it (relative paths are read from "
                             f"{Path.cwd()})", field=args.argument)
        found = []
        for m in map(Path, matches):
            m = confine(m, args.argument, args.roots)
            found += _gather(m, args) if m.is_dir() else [(m, None)]
        return found
    if not p.is_dir():
        return [(p, None)]
    found, skipped = [], 0
    for f in _files(p, args.argument):
        f = confine(f, args.argument, args.roots)  # a symlink in the folder that leads out of the roots is refused
        if not f.is_file():
            continue
        probe = Probe.of(f)
        fmt = detect(probe)
        if fmt is None or any(g.sidecar(probe) for g in FORMATS) or not plain_formats.rows_like(fmt, probe):
            skipped += 1
            continue
        found.append((f, probe))
    if not found:
        raise InputError(f"{p} is a folder with no rows file in it ({skipped} other files); name the rows file, or a "
                         f"run folder of vf-eval, lm-eval (--log_samples), inspect or verl's rollout dumps",
                         field=args.argument)
    return found


def read_paths(value: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], args: ReadArgs) -> GradedRows:
    """Rows from a file, a run folder, a glob, or a list of them, read as one set."""
    many = isinstance(value, (list, tuple))
    values = list(value) if many else [value]
    if many and not values:
        raise InputError(f"{args.argument} is an empty list; name at least one rows file or folder",
                         field=args.argument)
    named = [pair for v in values for pair in _gather(v, args)]
    files, skipped = distinct([_prepare(f, probe, args) for f, probe in named], args)  # each rollout read once
    parts = []
    total = 0
    for f, probe, fmt in files:
        rows = _one(f, probe, fmt, args)
        total += len(rows)
        if args.max_rows is not None and total > args.max_rows:
            raise InputError(f"more than {args.max_rows:,} rows; raise the cap with --max-rows (or "
                             f"PICK_A_METHOD_MAX_ROWS), or pass a sample of the rows", field="rows")
        parts.append(rows)
    given = [str(expand_user_path(v, args.argument)) for v in values]  # what reads these rows again
    read_from: str | list[str] = given if many else given[0]
    source = str(files[0][0]) if len(files) == 1 else (given[0] if not many else f"{len(files)} files")
    rows = concat(parts, source=source, read_from=read_from)
    return replace(rows, notes=[*rows.notes, *skipped]) if skipped else rows
