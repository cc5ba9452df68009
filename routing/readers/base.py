"""What every reader shares: the probe a format is recognised by, the format's spec, and the plain-file read.

A format is recognised from the file itself (its first row's fields, its JSON head, its zip members), never from
its name alone. Each reader module defines one or more `Format`s; `registry.py` lists them in detection order.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .. import fields as F
from pick_a_method.common.errors import InputError
from pick_a_method.common.paths import confine
from ..rows import GradedRows
from .builder import ColumnBuilder
from .plain import Progress, open_bytes, read_careful

HEAD_BYTES = 1 << 16  # what detection reads of a file


@dataclass(frozen=True)
class ReadArgs:
    """The caller's options, the same for every file of one read."""

    fields: Mapping[str, str] = field(default_factory=dict)  # checked by fields.check_fields
    max_rows: int | None = None
    max_bytes: int | None = None
    progress: Progress | None = None
    argument: str = "rows_path"
    format: str | None = None  # a plain format named by the caller: jsonl, json, csv or parquet
    roots: tuple[Path, ...] | None = None  # the folders reads are confined to (paths.confine); None: anywhere


@dataclass
class Probe:
    """What detection looks at: the head of a file, its first JSON row where it has one, its zip members."""

    path: Path
    head: bytes
    first: dict[str, Any] | None = None  # the first line parsed, where it is one JSON object
    zip_names: list[str] | None = None  # members, where the file is a zip archive

    @classmethod
    def of(cls, path: Path) -> Probe:
        if zipfile.is_zipfile(path):
            try:
                with zipfile.ZipFile(path) as z:
                    return cls(path, b"", zip_names=z.namelist())
            except (zipfile.BadZipFile, OSError):
                return cls(path, b"")
        try:
            with open_bytes(path) as f:
                head = f.read(HEAD_BYTES)
        except (OSError, EOFError, zlib.error):  # a damaged .gz: the read that follows names it
            head = b""
        probe = cls(path, head)
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] == b"{":
            line = text.split(b"\n", 1)[0].strip()
            try:
                doc = orjson.loads(line)
                probe.first = doc if isinstance(doc, dict) else None
            except orjson.JSONDecodeError:
                pass
        return probe

    def has(self, *keys: str) -> bool:
        """The first row has every one of `keys` (a dotted key reaches in; a numeric part indexes a list)."""
        return self.first is not None and all(F.get_path(self.first, k) is not None or k in self.first for k in keys)


@dataclass(frozen=True)
class Rollouts:
    """The rollouts a file holds, where its format names them: the run they belong to (an inspect eval id, which the
    `.eval` and its `inspect log dump` JSON share) and each rollout's key in that run. Two files with the same run and
    the same keys are one log in two forms (`once.py`)."""

    run: str  # "inspect-ai eval 3pAEWb2mQS8VBSLiCpksLK"
    keys: frozenset[str]


@dataclass(frozen=True)
class Format:
    """One input format: how to recognise it and how to read it into GradedRows.

    name     what verdicts call it ("verifiers 0.3 results")
    tool     the tool and command that write it, and the versions it was checked on (the README's table)
    sniff    True when a probe is this format (from the content)
    read     (path, probe, args) -> GradedRows
    sidecar  True for a file this format reads beside its rows (metadata.json): in a folder, not read as rows
    keys     a row's telltale fields, to name the closest format when a file reads as none
    rollouts (path, probe, args) -> Rollouts, or None: which rollouts the file holds, where the format names them
             (its run id and sample ids); files without one are told apart by their bytes
    """

    name: str
    tool: str
    sniff: Callable[[Probe], bool]
    read: Callable[[Path, Probe, ReadArgs], GradedRows]
    sidecar: Callable[[Probe], bool] = lambda probe: False
    keys: tuple[str, ...] = ()
    rollouts: Callable[[Path, Probe, ReadArgs], Rollouts | None] | None = None


def merged(own: Mapping[str, str], args: ReadArgs) -> dict[str, str]:
    """A format's field mapping under the caller's: what the caller names wins."""
    return {**own, **args.fields}


def read_plain(p: Path, fmt: str, args: ReadArgs, fields: Mapping[str, str] | None = None,
               graders: Mapping[str, str] | None = None) -> GradedRows:
    """A JSONL / JSON / CSV / Parquet file of rows: the columnar reader where it takes the file, else the careful one.
    `graders` names other graders' fields in the rows (name -> field), read beside the reward for question 0."""
    size = p.stat().st_size
    builder = ColumnBuilder(source=str(p), max_rows=args.max_rows, fields=args.fields if fields is None else fields,
                            graders=graders)
    from .columnar import read_columnar

    fast = read_columnar(p, fmt, builder, size=size, progress=args.progress)
    if fast is not None:
        return fast
    read_careful(p, fmt, builder, size=size, progress=args.progress, max_bytes=args.max_bytes)
    return builder.finish()


def read_dicts(chunks: Any, source: str, args: ReadArgs, fields: Mapping[str, str],
               graders: Mapping[str, str] | None = None) -> GradedRows:
    """Rows a reader made itself (an inspect log's samples, lm-eval's rows of one filter), chunk by chunk."""
    builder = ColumnBuilder(source=source, max_rows=args.max_rows, fields=fields, graders=graders)
    for chunk in chunks:
        builder.add(chunk)
    return builder.finish()


def load_json(p: Path, args: ReadArgs) -> Any:
    """A small JSON sidecar (metadata.json, results_*.json), or None when it is not there, not JSON, or outside the
    roots (a sidecar is read beside its rows, but through the same validator: a link out of the roots is not read)."""
    try:
        p = confine(p, args.argument, args.roots)
        if p.stat().st_size > 64 << 20:
            return None
        return orjson.loads(p.read_bytes())
    except (OSError, orjson.JSONDecodeError, InputError):
        return None


def token_cap(value: Any) -> float | None:
    """A run's token cap as its record holds it: a positive number (not a bool), else None (not said)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")
    return float(value) if ok else None


def with_cap(rows: GradedRows, cap: Any) -> GradedRows:
    """The rows, each that states no cap of its own sampled at the run's `cap` (an eval tool records it once for the
    run), so two runs at different caps are told apart (`after`, `teacher_clears`)."""
    cap = token_cap(cap)
    unsaid = np.isnan(rows.max_tokens)
    if cap is None or not unsaid.any():
        return rows
    return replace(rows, max_tokens=np.where(unsaid, cap, rows.max_tokens), _tables={})


def close(a: float | None, b: float | None, tol: float = 1e-6) -> bool:
    return a is None or b is None or abs(a - b) <= tol


def graded_mean(rows: GradedRows) -> float | None:
    graded = rows.reward[~np.isnan(rows.reward)]
    return float(graded.mean()) if len(graded) else None


def disagreement(tool: str, what: str, theirs: float | None, ours: float | None) -> list[str]:
    """A note when the tool's own summary of the run disagrees with the rows read."""
    if close(theirs, ours):
        return []
    return [f"{tool}'s own summary gives {what} {theirs:.4g}, the rows read give {ours:.4g}: check that every file of "
            f"the run was given (and only that run's files)"]


def other_graders(names: list[str], picked: str | None, path: Callable[[str], str]) -> dict[str, str]:
    """The graders besides the one read as the reward (name -> its field), for question 0 to compare."""
    return {n: path(n) for n in names if n != picked}


def scorer_note(kind: str, names: list[str], picked: str, path: Callable[[str], str],
                fields: Mapping[str, str]) -> list[str]:
    """Several scorers (metrics) in the rows: say which was read and the argument that reads each other one."""
    others = [n for n in names if n != picked]
    if not others:
        return []
    how = "; ".join(f"{F.argument('reward', path(n), fields)} reads {n}" for n in others[:4])
    return [f"the rows carry {len(names)} {kind}s ({', '.join(names[:8])}); read {picked!r} as the reward. {how}"]

