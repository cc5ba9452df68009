"""The plain formats, read carefully: JSONL (and .gz), JSON arrays, CSV and Parquet, row dicts chunk by chunk.

Slower than the columnar reader (`columnar.py`) but it names the line and field of every bad value, reads
odd files (blank lines, a byte-order mark, CRLF, gzip) and stops at the byte cap as it reads. `read_rows`
uses it where the columnar reader cannot take the file, and to name an error the columnar reader hit.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import zlib
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson

from .. import fields as F
from pick_a_method.common.errors import InputError
from .builder import ColumnBuilder

CHUNK_ROWS = 65_536
Progress = Callable[[int, int], None]  # (done, total) in bytes


def open_bytes(p: Path) -> io.BufferedIOBase:
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


def _read_jsonl(reader: _CountingReader, builder: ColumnBuilder) -> None:
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


def _read_json_array(reader: _CountingReader, builder: ColumnBuilder, p: Path) -> None:
    data = reader.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        return
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        first = data.lstrip(b"\xef\xbb\xbf \t\r\n")[1:].lstrip(b" \t\r\n")[:1]
        if data.lstrip()[:1] == b"[" and first == b"[":  # nested past orjson's depth limit: say what row 0 is
            raise InputError(f"row 0 of {p} is a JSON list, not an object; each row must be an object with "
                             f"task_id, reward, truncated and model", row=0) from None
        raise InputError(f"{p} is not valid JSON: {e}; a .json file must hold one array of row objects "
                         f"(or use JSONL, one object a line)") from None
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        doc = doc["rows"]
    if not isinstance(doc, list):
        raise InputError(not_rows(p, doc))
    for start in range(0, len(doc), CHUNK_ROWS):
        builder.add(doc[start:start + CHUNK_ROWS])


def not_rows(p: Path, doc: Any) -> str:
    """What a JSON file that is not rows is, where an eval tool or pick-a-method wrote it, and what to give."""
    if isinstance(doc, dict) and doc.get("format") == "pick-a-method/frozen-holdout":
        return (f"{p} is a frozen held-out manifest (route --freeze wrote it), not rows: give it to after as "
                f"--frozen {p.name} (frozen_path), and the arms' eval rows as BEFORE and AFTER")
    if isinstance(doc, dict) and "results" in doc and ({"configs", "versions", "n-shot"} & set(doc)):
        return (f"{p} is lm-eval's results_*.json (the run's summary, no rows): give the samples_*.jsonl beside it "
                f"(written with --log_samples), or the folder that holds them")
    if isinstance(doc, dict) and "rollouts_per_example" in doc and "avg_reward" in doc:
        return (f"{p} is vf-eval's metadata.json (the run's summary, no rows): give results.jsonl beside it (vf-eval "
                f"-s), or the run folder")
    return (f"{p} holds a JSON {type(doc).__name__}, not an array of rows; wrap the rows in [...] or write one "
            f"object per line as .jsonl")


DELIMITERS = (",", ";", "\t")  # what spreadsheets export: a comma, a semicolon (where the comma is the decimal mark), tab
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}


def csv_delimiter(header: str) -> str:
    """The delimiter a CSV header uses: the one of DELIMITERS it holds most of (outside quotes); a comma by default."""
    bare = "".join(part for i, part in enumerate(header.split('"')) if i % 2 == 0)
    counts = [bare.count(d) for d in DELIMITERS]
    return DELIMITERS[counts.index(max(counts))] if max(counts) else ","


def _read_csv(reader: _CountingReader, builder: ColumnBuilder, p: Path) -> None:
    lines = reader.text_lines(p)
    first = next(lines, None)
    if first is None:
        return
    rows = csv.DictReader(itertools.chain([first], lines), delimiter=csv_delimiter(first))
    try:
        _read_csv_rows(rows, builder, p)
    except csv.Error as e:  # a cell over csv.field_size_limit()
        line = rows.reader.line_num  # DictReader's own line_num still points at the last good row
        raise InputError(f"line {line} of {p} is not valid CSV: {e}; fix that line or write the rows as JSONL",
                         row=line) from None


def _looks_like_columns(header: list[str]) -> bool:
    """Two or more short names of letters, digits, spaces and _ . - : what a CSV header of rows holds."""
    return len(header) >= 2 and all(0 < len(h) <= 64 and all(c.isalnum() or c in " _.-" for c in h) for h in header)


def _read_csv_rows(rows: csv.DictReader, builder: ColumnBuilder, p: Path) -> None:
    header = rows.fieldnames or []
    names = builder.names["task_id"]
    if header and not any(f in header for f in names):
        if not _looks_like_columns(header):  # not rows at all (a key, a config): nothing of it is quoted back
            raise InputError(f"{p}: the first line is not a CSV header of named columns split by a "
                             f"{DELIMITER_NAMES[rows.reader.dialect.delimiter]} (not quoted here; a comma, semicolon "
                             f"or tab is told from the header); is this a rows file? Name a .jsonl, .json, .csv "
                             f"(comma, semicolon or tab) or .parquet file of graded rows", field="task_id")
        raise InputError(f"{p}: the CSV header has no task column ({', '.join(names)}); columns are "
                         f"{header}{F.hint(names, header)}; rename the column", field="task_id")
    chunk: list[dict[str, Any]] = []
    lines: list[int] = []
    for row in rows:
        if None in row:
            raise InputError(f"line {rows.line_num} of {p} has more cells than the header has columns; quote "
                             f"cells that contain a {DELIMITER_NAMES[rows.reader.dialect.delimiter]}, the file's "
                             f"delimiter", row=rows.line_num)
        chunk.append({k: (v if v != "" else None) for k, v in row.items()})
        lines.append(rows.line_num)
        if len(chunk) >= CHUNK_ROWS:
            builder.add(chunk, lines=lines)
            chunk, lines = [], []
    if chunk:
        builder.add(chunk, lines=lines)


def _read_parquet(p: Path, builder: ColumnBuilder) -> None:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{p}: reading Parquet needs pyarrow, a dependency of pick-a-method missing here "
                         f"(pip install 'pyarrow>=14.0.1,<30'), or convert the file to JSONL") from None
    for batch in pq.ParquetFile(p).iter_batches(batch_size=CHUNK_ROWS):
        builder.add(batch.to_pylist())


def read_careful(p: Path, fmt: str, builder: ColumnBuilder, *, size: int, progress: Progress | None,
                 max_bytes: int | None) -> None:
    """Read file `p` of format `fmt` into `builder`, row dicts chunk by chunk."""
    if fmt == "parquet":
        _read_parquet(p, builder)
        return
    try:
        with open_bytes(p) as raw:
            counted = _CountingReader(raw, total=size, progress=progress, max_bytes=max_bytes, path=p)
            if fmt == "jsonl":
                _read_jsonl(counted, builder)
            elif fmt == "json":
                _read_json_array(counted, builder, p)
            else:
                _read_csv(counted, builder, p)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:  # a cut-off or damaged .gz
        raise InputError(f"{p}: the gzip stream is cut off or damaged ({e}); copy or compress the file again",
                         field="rows_path") from None
