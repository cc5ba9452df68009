"""Graded rows in, columns out.

Every routing function works on `GradedRows`: one numpy column per field the router reads (task, reward,
truncation, sampling model), built once at the edge from a list of dicts or a file. Files are read in
chunks, so a million-row JSONL is never held as a million dicts at once.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import hashlib
import io
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .errors import InputError

TASK_FIELDS = ("task_id", "scenario_id", "prompt")  # first present wins (DESIGN.md)
CHUNK_ROWS = 65_536
FORMATS = ("jsonl", "json", "csv", "parquet")

# Values a `truncated` cell may hold; CSV gives strings.
_TRUNCATED = {True: True, False: False, None: None, "": None, "true": True, "false": False, "True": True,
              "False": False, "TRUE": True, "FALSE": False, "1": True, "0": False, "yes": True, "no": False}
_BOOL_WORDS = {"true": 1.0, "false": 0.0}

Progress = Callable[[int, int], None]  # (done, total) in bytes


@dataclass(frozen=True)
class GradedRows:
    """The columns the router reads, one entry per rollout."""

    task: np.ndarray  # int32 code into task_names
    task_names: list[str]
    reward: np.ndarray  # float64; NaN = ungraded (missing, null or NaN)
    truncated: np.ndarray  # bool: `truncated` is true or finish_reason == "length"
    n_truncation_stated: int  # rows that say either way
    model: np.ndarray  # int32 code into model_names; -1 = the row names no model
    model_names: list[str]
    max_tokens: np.ndarray  # float64 token budget the row was sampled with; NaN = not stated
    n_nan_rewards: int  # rows whose reward was NaN (a grader failure?), counted apart from missing ones
    has_pairs: bool  # some row carries both `chosen` and `rejected` (a natural preference pair)
    lines: np.ndarray | None = None  # 1-based line numbers when read from a file
    source: str | None = None
    missing_reward_hint: str | None = None  # a close match for `reward` when no row has it

    def __len__(self) -> int:
        return int(self.task.shape[0])

    @property
    def n_tasks(self) -> int:
        return len(self.task_names)

    def where(self, i: int) -> str:
        """How to point a person at row i."""
        if self.lines is not None:
            return f"line {int(self.lines[i])} of {self.source}"
        return f"row {i}"

    def refs(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """Evidence entries for rows: where they are and which task they answered."""
        return [{"row": int(i), **({"line": int(self.lines[i])} if self.lines is not None else {}),
                 "task_id": display_name(self.task_names[int(self.task[i])])} for i in indices]


RowsLike = GradedRows | Sequence[dict[str, Any]]

NAME_LIMIT = 80  # a longer task id (a whole prompt, say) is listed shortened, so answers stay small


def display_name(name: str) -> str:
    """A name as verdicts list it: whole up to NAME_LIMIT characters, else its head plus a stable hash."""
    if len(name) <= NAME_LIMIT:
        return name
    return f"{name[:60]}…{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def as_rows(rows: RowsLike | None, *, what: str = "rows") -> GradedRows:
    """Accept a list of row dicts or an already-read `GradedRows`."""
    if isinstance(rows, GradedRows):
        return rows
    if rows is None:
        raise InputError(f"no {what} given: pass a list of graded rows or read a file with read_rows(path)",
                         field=what)
    if isinstance(rows, (str, bytes, os.PathLike)):
        raise InputError(f"{what} is a path, not rows: call read_rows({str(rows)!r}) first", field=what)
    builder = _ColumnBuilder(source=None)
    builder.add(list(rows))
    return builder.finish()


def read_rows(path: str | os.PathLike[str], *, format: str | None = None, max_rows: int | None = None,
              max_bytes: int | None = None, progress: Progress | None = None) -> GradedRows:
    """Read graded rows from JSONL (optionally .gz), a JSON array, CSV, or Parquet (with pyarrow).

    `max_rows` and `max_bytes` cap what is read; going past either is an InputError that names the cap.
    `progress(done_bytes, total_bytes)` is called as the file is read.
    """
    p = Path(path).expanduser()
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
    builder = _ColumnBuilder(source=str(p), max_rows=max_rows)
    if fmt == "parquet":
        _read_parquet(p, builder)
        return builder.finish()
    try:
        with _open_bytes(p) as raw:
            counted = _CountingReader(raw, total=size, progress=progress, max_bytes=max_bytes, path=p)
            if fmt == "jsonl":
                _read_jsonl(counted, builder)
            elif fmt == "json":
                _read_json_array(counted, builder, p)
            elif fmt == "csv":
                _read_csv(counted, builder, p)
            else:
                raise InputError(f"{p}: unknown format {fmt!r}; use one of {', '.join(FORMATS)}", field="format")
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:  # a cut-off or damaged .gz
        raise InputError(f"{p}: the gzip stream is cut off or damaged ({e}); copy or compress the file again",
                         field="rows_path") from None
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


def _open_bytes(p: Path) -> io.BufferedIOBase:
    f = open(p, "rb")
    if f.read(2) == b"\x1f\x8b":  # gzip magic, whatever the extension says
        f.seek(0)
        return gzip.GzipFile(fileobj=f)  # type: ignore[return-value]
    f.seek(0)
    return f


class _CountingReader:
    """Iterates lines of a binary stream, counting bytes for progress and the byte cap."""

    def __init__(self, raw: Any, *, total: int, progress: Progress | None, max_bytes: int | None, path: Path):
        self.raw, self.total, self.progress, self.max_bytes, self.path = raw, total, progress, max_bytes, path
        self.done = 0
        self._next_report = 0
        self.ended_with_newline = True

    def _count(self, n: int) -> None:
        self.done += n
        if self.max_bytes is not None and self.done > self.max_bytes:
            raise InputError(f"{self.path}: more than {self.max_bytes:,} bytes once decompressed; raise the cap "
                             f"with --max-bytes (or PICK_A_METHOD_MAX_BYTES), or split the file",
                             field="rows_path")
        if self.progress is not None and self.done >= self._next_report:
            self.progress(min(self.done, self.total) if self.total else self.done, self.total)
            self._next_report = self.done + (1 << 22)  # about every 4 MB

    def _room(self) -> int:
        """Bytes to ask for: past the cap by one at most, so that a read over the cap is seen before it is held."""
        return -1 if self.max_bytes is None else self.max_bytes - self.done + 1

    def lines(self) -> Iterator[bytes]:
        readline = self.raw.readline
        while line := readline(self._room()):  # bounded: one endless line (a gzip bomb) stops at the cap
            self._count(len(line))
            yield line

    def blocks(self, size: int = 1 << 22) -> Iterator[bytes]:
        """Blocks of whole lines, about `size` bytes each."""
        tail: list[bytes] = []  # pieces of a line still open; joined once, so a long line costs linear time
        while True:
            data = self.raw.read(size)
            if not data:
                break
            self._count(len(data))
            cut = data.rfind(b"\n") + 1
            if cut:
                yield b"".join([*tail, data[:cut]]) if tail else data[:cut]
                tail = [data[cut:]] if cut < len(data) else []
            else:
                tail.append(data)
        self.ended_with_newline = not tail
        if tail:
            yield b"".join(tail)

    def read(self) -> bytes:
        data = self.raw.read(self._room())
        self._count(len(data))
        return data

    def text_lines(self, path: Path) -> Iterator[str]:
        for n, line in enumerate(self.lines(), 1):
            try:
                yield line.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"line {n} of {path} is not UTF-8 ({e.reason} at byte {e.start}); save the "
                                 f"file as UTF-8", row=n) from None


def _read_jsonl(reader: _CountingReader, builder: _ColumnBuilder) -> None:
    """Parse each block of lines with one orjson call; on a bad block, parse line by line to name the line."""
    first_line = 1
    for block in reader.blocks():
        if first_line == 1 and block.startswith(b"\xef\xbb\xbf"):
            block = block[3:]
        lines = block.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the block ends in a newline
        stripped = list(map(bytes.strip, lines))
        if all(stripped):
            kept, numbers = stripped, range(first_line, first_line + len(lines))
        else:
            numbers = [first_line + i for i, line in enumerate(stripped) if line]
            kept = [stripped[n - first_line] for n in numbers]
        rows = _parse_lines(kept, numbers, reader, builder.source)
        for start in range(0, len(rows), CHUNK_ROWS):
            builder.add(rows[start:start + CHUNK_ROWS], lines=numbers[start:start + CHUNK_ROWS])
        first_line += len(lines)


def _parse_lines(kept: list[bytes], numbers: Sequence[int], reader: _CountingReader, source: str | None) -> list[Any]:
    """One orjson call for the block when every line is one object ({...}); else line by line, which names
    the bad line. (Joining lines with commas alone would accept an object split across two lines.)"""
    if all(map(bytes.startswith, kept, repeat(b"{"))) and all(map(bytes.endswith, kept, repeat(b"}"))):
        try:
            rows = orjson.loads(b"[" + b",".join(kept) + b"]") if kept else []
            if len(rows) == len(kept):
                return rows
        except orjson.JSONDecodeError:
            pass
    rows = []
    for line, n in zip(kept, numbers):
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError as e:
            last = n == numbers[-1] and reader.done >= reader.total and not reader.ended_with_newline
            cut = " (the last line has no newline: was the file cut off mid-write?)" if last else ""
            raise InputError(f"line {n} of {source} is not valid JSON{cut}: {e}; fix or delete that line",
                             row=n) from None
    return rows


def _read_json_array(reader: _CountingReader, builder: _ColumnBuilder, p: Path) -> None:
    data = reader.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        return
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise InputError(f"{p} is not valid JSON: {e}; a .json file must hold one array of row objects "
                         f"(or use JSONL, one object a line)") from None
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        doc = doc["rows"]
    if not isinstance(doc, list):
        raise InputError(f"{p} holds a JSON {type(doc).__name__}, not an array of rows; wrap the rows in [...] "
                         f"or write one object per line as .jsonl")
    for start in range(0, len(doc), CHUNK_ROWS):
        builder.add(doc[start:start + CHUNK_ROWS])


def _read_csv(reader: _CountingReader, builder: _ColumnBuilder, p: Path) -> None:
    rows = csv.DictReader(reader.text_lines(p))
    try:
        _read_csv_rows(rows, builder, p)
    except csv.Error as e:  # a cell over csv.field_size_limit()
        line = rows.reader.line_num  # DictReader's own line_num still points at the last good row
        raise InputError(f"line {line} of {p} is not valid CSV: {e}; fix that line or write the rows as JSONL",
                         row=line) from None


def _read_csv_rows(rows: csv.DictReader, builder: _ColumnBuilder, p: Path) -> None:
    header = rows.fieldnames or []
    if header and not any(f in header for f in TASK_FIELDS):
        raise InputError(f"{p}: the CSV header has no task column ({', '.join(TASK_FIELDS)}); columns are "
                         f"{header}{_hint(TASK_FIELDS, header)}; rename the column", field="task_id")
    chunk: list[dict[str, Any]] = []
    lines: list[int] = []
    for row in rows:
        if None in row:
            raise InputError(f"line {rows.line_num} of {p} has more cells than the header has columns; "
                             f"quote cells that contain commas", row=rows.line_num)
        chunk.append({k: (v if v != "" else None) for k, v in row.items()})
        lines.append(rows.line_num)
        if len(chunk) >= CHUNK_ROWS:
            builder.add(chunk, lines=lines)
            chunk, lines = [], []
    if chunk:
        builder.add(chunk, lines=lines)


def _read_parquet(p: Path, builder: _ColumnBuilder) -> None:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{p}: reading Parquet needs pyarrow (pip install 'pick-a-method[parquet]'), or "
                         f"convert the file to JSONL") from None
    for batch in pq.ParquetFile(p).iter_batches(batch_size=CHUNK_ROWS):
        builder.add(batch.to_pylist())


def _show(v: Any) -> str:
    """A value cut short for an error message; never raises (an int past 4,300 digits has no str())."""
    try:
        return repr(str(v)[:60])
    except (ValueError, RecursionError):
        return f"<a {type(v).__name__} too large to show>"


def _hint(wanted: Sequence[str], have: Iterable[str]) -> str:
    have = [h for h in have if isinstance(h, str)]
    close = sorted({m for w in wanted for m in difflib.get_close_matches(w, have, n=1, cutoff=0.75)})
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _column(rows: list[dict[str, Any]], key: str) -> list[Any]:
    """rows[i].get(key) for every row, looped in C."""
    return list(map(dict.get, rows, repeat(key)))


def _is_pair(row: dict[str, Any]) -> bool:
    return "chosen" in row and "rejected" in row


def _codes(keys: list[Any], index: dict[Any, int]) -> np.ndarray:
    """Integer codes for hashable keys, in first-seen order, shared across chunks through `index`."""
    for key in dict.fromkeys(keys):  # distinct keys only
        if key not in index:
            index[key] = len(index) - (None in index)
    return np.fromiter(map(index.__getitem__, keys), dtype=np.int32, count=len(keys))


class _ColumnBuilder:
    """Turns chunks of row dicts into columns, sharing the task and model codes across chunks."""

    def __init__(self, *, source: str | None, max_rows: int | None = None):
        self.source, self.max_rows = source, max_rows
        self.task_index: dict[Any, int] = {}
        self.model_index: dict[Any, int] = {None: -1}
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in ("task", "reward", "truncated", "stated",
                                                                   "model", "max_tokens", "lines")}
        self.n = 0
        self.has_pairs = False
        self.reward_seen = False
        self.n_nan = 0
        self.first_keys: list[str] = []

    def where(self, i: int, lines: Sequence[int] | None) -> str:
        if lines is not None:
            return f"line {lines[i]} of {self.source}"
        return f"row {self.n + i}" if self.source is None else f"row {self.n + i} of {self.source}"

    def add(self, rows: list[Any], *, lines: Sequence[int] | None = None) -> None:
        if self.max_rows is not None and self.n + len(rows) > self.max_rows:
            raise InputError(f"more than {self.max_rows:,} rows; raise the cap with --max-rows (or "
                             f"PICK_A_METHOD_MAX_ROWS), or pass a sample of the rows", field="rows")
        if not set(map(type, rows)) <= {dict}:
            i = next(i for i, r in enumerate(rows) if type(r) is not dict)
            raise InputError(f"{self.where(i, lines)} is a JSON {type(rows[i]).__name__}, not an object; each row "
                             f"must be an object with task_id, reward, truncated and model", row=self.n + i)
        if not rows:
            return
        if not self.first_keys:
            self.first_keys = list(rows[0])
        present = set().union(*rows)  # every key any row has; optional fields absent everywhere are skipped
        self.reward_seen = self.reward_seen or "reward" in present
        self.parts["task"].append(self._tasks(rows, lines))
        self.parts["reward"].append(self._rewards(rows, lines))
        truncated, stated = self._truncation(rows, lines, "finish_reason" in present)
        self.parts["truncated"].append(truncated)
        self.parts["stated"].append(stated)
        self.parts["model"].append(self._models(rows, lines))
        self.parts["max_tokens"].append(self._max_tokens(rows, lines) if present & {"max_tokens", "sampling"}
                                        else np.full(len(rows), np.nan))
        if lines is not None:
            self.parts["lines"].append(np.asarray(lines, dtype=np.int64))
        if not self.has_pairs and {"chosen", "rejected"} <= present:
            self.has_pairs = any(map(_is_pair, rows))
        self.n += len(rows)

    def _tasks(self, rows: list[dict[str, Any]], lines: Sequence[int] | None) -> np.ndarray:
        keys = _column(rows, "task_id")
        for i in ([i for i, k in enumerate(keys) if k is None] if None in keys else ()):
            r = rows[i]
            k = r.get("scenario_id")
            if k is None:
                k = r.get("prompt")
            if k is None:
                raise InputError(f"{self.where(i, lines)} has no task_id (nor scenario_id or prompt){_hint(TASK_FIELDS, r)}; "
                                 f"give every row the id of the task it answered", row=self.n + i, field="task_id")
            keys[i] = k
        if not set(map(type, keys)) <= {str}:
            for i, k in enumerate(keys):
                if type(k) is not str:
                    if isinstance(k, (dict, list)) or (isinstance(k, float) and not math.isfinite(k)):
                        raise InputError(f"{self.where(i, lines)}: task_id is {type(k).__name__} {_show(k)}; "
                                         f"a task id must be a string or an integer", row=self.n + i,
                                         field="task_id")
                    try:
                        keys[i] = str(k)  # ints and strings compare as strings: task 1 is task "1"
                    except ValueError:  # an int past 4,300 digits
                        raise InputError(f"{self.where(i, lines)}: task_id is an integer too large to use as an "
                                         f"id; give a string", row=self.n + i, field="task_id") from None
        return _codes(keys, self.task_index)

    def _rewards(self, rows: list[dict[str, Any]], lines: Sequence[int] | None) -> np.ndarray:
        raw = _column(rows, "reward")
        try:
            out = np.array(raw, dtype=np.float64)
            if out.ndim != 1:
                raise ValueError
        except (ValueError, TypeError, OverflowError):
            out = np.empty(len(raw), dtype=np.float64)
            for i, v in enumerate(raw):
                out[i] = self._one_reward(v, i, lines)
        if np.isnan(out).any():  # NaN (a grader failure?) as opposed to missing
            self.n_nan += sum(1 for v in raw if v != v)
        if np.isinf(out).any():
            i = int(np.flatnonzero(np.isinf(out))[0])
            raise InputError(f"{self.where(i, lines)}: reward is {out[i]}; a reward must be a finite number "
                             f"(null when the row is not graded)", row=self.n + i, field="reward")
        return out

    def _one_reward(self, v: Any, i: int, lines: Sequence[int] | None) -> float:
        if v is None:
            return math.nan
        if isinstance(v, (bool, int, float)):
            try:
                return float(v)
            except OverflowError:  # an int past 1.8e308
                return math.inf  # refused by the caller as not finite
        if isinstance(v, str):
            s = v.strip()
            if s.lower() in _BOOL_WORDS:
                return _BOOL_WORDS[s.lower()]
            try:
                return float(s)
            except ValueError:
                pass
        raise InputError(f"{self.where(i, lines)}: reward is {type(v).__name__} {_show(v)}; a reward must be "
                         f"a number (true/false count as 1/0, null means not graded)", row=self.n + i,
                         field="reward")

    def _truncation(self, rows: list[dict[str, Any]], lines: Sequence[int] | None,
                    has_finish: bool) -> tuple[np.ndarray, np.ndarray]:
        flags = _column(rows, "truncated")
        finish = _column(rows, "finish_reason") if has_finish else [None]
        kinds = set(map(type, flags))
        if kinds <= {bool}:  # the common case, at C speed
            truncated, stated = np.array(flags, dtype=bool), np.ones(len(flags), dtype=bool)
        elif kinds <= {type(None)}:
            truncated, stated = np.zeros(len(flags), dtype=bool), np.zeros(len(flags), dtype=bool)
        else:
            get = _TRUNCATED.get
            values = []
            for i, t in enumerate(flags):
                try:
                    v = get(t, "?")
                except TypeError:  # unhashable
                    v = "?"
                if v == "?":
                    raise InputError(f"{self.where(i, lines)}: truncated is {_show(t)}; use true or false "
                                     f"(or give finish_reason)", row=self.n + i, field="truncated")
                values.append(v)
            truncated = np.array([v is True for v in values], dtype=bool)
            stated = np.array([v is not None for v in values], dtype=bool)
        if not set(map(type, finish)) <= {type(None)}:
            length = np.array([f == "length" for f in finish], dtype=bool)
            truncated |= length
            stated |= np.array([f is not None for f in finish], dtype=bool)
        return truncated, stated

    def _models(self, rows: list[dict[str, Any]], lines: Sequence[int] | None) -> np.ndarray:
        names = _column(rows, "model")
        if not set(map(type, names)) <= {str, type(None)}:
            i = next(i for i, m in enumerate(names) if m is not None and type(m) is not str)
            raise InputError(f"{self.where(i, lines)}: model is {type(names[i]).__name__} {_show(names[i])}; "
                             f"name the model that sampled the row as a string", row=self.n + i, field="model")
        return _codes(names, self.model_index)

    def _max_tokens(self, rows: list[dict[str, Any]], lines: Sequence[int] | None) -> np.ndarray:
        raw = _column(rows, "max_tokens")
        sampling = _column(rows, "sampling")
        if not set(map(type, sampling)) <= {type(None)}:
            for i, block in enumerate(sampling):
                if raw[i] is None and type(block) is dict:
                    raw[i] = block.get("max_tokens")
        try:
            out = np.array(raw, dtype=np.float64)
            if out.ndim == 1:
                return out
        except (ValueError, TypeError, OverflowError):  # a string, a list, an int past 1.8e308
            pass
        for i, v in enumerate(raw):
            try:
                if v is None or (np.ndim(v) == 0 and math.isfinite(float(v))):
                    continue
            except (ValueError, TypeError, OverflowError):
                pass
            raise InputError(f"{self.where(i, lines)}: max_tokens is {_show(v)}; give the token budget "
                             f"as an integer", row=self.n + i, field="max_tokens")
        raise AssertionError("max_tokens: no bad value found")  # pragma: no cover

    def finish(self) -> GradedRows:
        def cat(key: str, dtype: Any) -> np.ndarray:
            parts = self.parts[key]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        reward = cat("reward", np.float64)
        models = [m for m in self.model_index if m is not None]
        hint = None
        if not self.reward_seen and self.first_keys:
            hint = _hint(("reward",), self.first_keys) or None
        return GradedRows(
            task=cat("task", np.int32), task_names=[str(k) for k in self.task_index],
            reward=reward, truncated=cat("truncated", bool), n_truncation_stated=int(cat("stated", bool).sum()),
            model=cat("model", np.int32), model_names=models, max_tokens=cat("max_tokens", np.float64),
            n_nan_rewards=self.n_nan, has_pairs=self.has_pairs,
            lines=cat("lines", np.int64) if self.parts["lines"] else None, source=self.source,
            missing_reward_hint=hint,
        )
