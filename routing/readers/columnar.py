"""The columnar reader: JSONL, CSV and Parquet through pyarrow, one vectorised pass per column.

It reads the files people have at C speed (bench/route_bench.py times it beside polars' read_ndjson) and keeps
only the columns the router reads. JSONL is read once, in pieces that pyarrow parses on every core; each row's
line number comes from the same bytes (blank lines included). Whatever it cannot take as a table (a value of
the wrong type, a line that is not one object, a byte-order mark, gzip, a missing task id) it hands back
(`None`), and `read_rows` re-reads the file with the careful reader, which names the line and field.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import fields as F
from pick_a_method.common.errors import InputError, Unsupported
from .builder import ColumnBuilder
from .plain import Progress

if TYPE_CHECKING:  # imported inside the functions, after pyarrow has loaded
    from .arrow_columns import Columns

pa: Any = None  # pyarrow and pyarrow.compute, imported on first use (about 0.2 s: a small file does not wait)
pc: Any = None
# Under this size the careful reader is as quick as importing pyarrow: small files skip the columnar reader.
SMALL_BYTES = 1 << 20
BLOCK_BYTES = 1 << 20  # pyarrow's JSON block: the unit its threads parse a piece in, in parallel
CSV_BLOCK_BYTES = 1 << 22  # CSV streams a block at a time: large enough to infer the column types once
PIECE_BYTES = 1 << 23  # JSONL read this much at a time; two pieces are in hand at once, one parsing (peak memory)
COUNT_BYTES = 1 << 24  # CSV lines are counted this much at a time
NEWLINE, CR, OPEN, CLOSE = b"\n"[0], b"\r"[0], b"{"[0], b"}"[0]
JSON_SPACE = b" \t\r\n"  # what JSON (and pyarrow) skips between values


def _load() -> bool:
    """Import pyarrow (a core dependency); False where it is missing, and every file goes to the careful reader."""
    global pa, pc
    if pa is None:
        try:
            import pyarrow
            import pyarrow.compute
        except ImportError:
            return False
        pa, pc = pyarrow, pyarrow.compute
    return True


def read_columnar(p: Path, fmt: str, builder: ColumnBuilder, *, size: int, progress: Progress | None) -> Any:
    """GradedRows read through pyarrow, or None when the careful reader must take the file."""
    if fmt not in ("jsonl", "csv", "parquet") or (size < SMALL_BYTES and fmt != "parquet") or not _load():
        return None
    with open(p, "rb") as f:
        start = f.read(3)
    if start[:2] == b"\x1f\x8b" or start == b"\xef\xbb\xbf":
        return None  # gzip (capped as it decompresses) and byte-order marks: the careful reader
    if size == 0:
        return None
    progress = _rising(progress)
    try:
        if fmt == "parquet":
            acc, lines = _parquet(p, builder), None
        elif fmt == "jsonl":
            acc, lines = _jsonl(p, builder, size, progress)
        else:
            n_lines = _count_lines(p, size, progress)
            acc = _csv(p, builder)
            if acc.n != n_lines - 1:
                return None  # blank lines, or quoted newlines: only the careful reader knows each row's line
            lines = np.arange(2, acc.n + 2, dtype=np.int64)
        out = acc.finish(builder, lines)
    except _Cap as e:  # the careful reader would say the same, later
        raise InputError(str(e), field="rows") from None
    except (Unsupported, pa.ArrowException, ValueError, TypeError, KeyError, OverflowError):
        return None
    if progress is not None:
        progress(size, size)
    return out


def _rising(progress: Progress | None) -> Progress | None:
    """Forward only reports that move forward (the two passes over the file report in turn)."""
    if progress is None:
        return None
    last = [-1]

    def report(done: int, total: int) -> None:
        if done > last[0]:
            last[0] = done
            progress(done, total)
    return report


def _count_lines(p: Path, size: int, progress: Progress | None) -> int:
    """Lines in the file (a last line without a newline counts), reporting progress as it goes."""
    n, last = 0, b"\n"
    with open(p, "rb") as f:
        while block := f.read(COUNT_BYTES):
            n += block.count(b"\n")
            last = block[-1:]
            if progress is not None:
                progress(f.tell() // 2, size)  # counting is the cheap half of the read
    return n + (last != b"\n")


def _check_cap(builder: ColumnBuilder, n: int) -> None:
    if builder.max_rows is not None and n > builder.max_rows:
        raise _Cap(f"more than {builder.max_rows:,} rows; raise the cap with --max-rows (or "
                   f"PICK_A_METHOD_MAX_ROWS), or pass a sample of the rows")


class _Cap(Exception):
    pass


def _wanted(builder: ColumnBuilder) -> set[str]:
    """Top-level columns the router reads; everything else (messages, final text) is dropped as it is read."""
    heads = {h for names in (*builder.names.values(), builder.graders.values()) for k in names
             for h in (k, F.head(k))}
    return heads | {*F.FINISH_REASONS, *F.PROMPT, "max_tokens", "sampling", "sampling.max_tokens", "chosen", "rejected"}


def _keep(batch: Any, wanted: set[str]) -> tuple[Any, list[str]]:
    names = batch.schema.names
    keep = [n for n in names if n in wanted]
    return batch.select(keep), names


def _take(batch: Any, builder: ColumnBuilder, acc: Columns, wanted: set[str], check: Any = None) -> None:
    """One batch's columns into `acc`: the columns the router does not read are dropped first."""
    small, names = _keep(batch, wanted)
    builder.keys.update(dict.fromkeys(n for n in names if n not in builder.keys))
    acc.n += small.num_rows
    _check_cap(builder, acc.n)
    table = small if isinstance(small, pa.Table) else pa.Table.from_batches([small])
    if check is not None:
        check(table)
    acc.add(table, builder)


def _collect(batches: Any, builder: ColumnBuilder, check: Any = None) -> Columns:
    """Each batch to numpy columns as it arrives (codes shared across batches), so only one batch of arrow data
    is held at a time."""
    from .arrow_columns import Columns

    wanted = _wanted(builder)
    acc = Columns()
    for batch in batches:
        _take(batch, builder, acc, wanted, check)
        del batch
    if not acc.n:
        raise Unsupported("no rows")
    return acc


def _jsonl(p: Path, builder: ColumnBuilder, size: int, progress: Progress | None) -> tuple[Columns, np.ndarray]:
    """The file piece by piece: a worker has pyarrow parse each piece (on every core) back to back, while this
    thread reads the next piece, ties its lines to rows and takes the columns of the piece parsed last, so the
    parse never waits; a piece's arrow data is dropped once taken. The file is read once."""
    import pyarrow.json as pj

    from .arrow_columns import Columns

    schema = {}
    reward = builder.names["reward"][0]
    if "." not in reward:
        schema[reward] = pa.float64()  # ints and floats alike; a string or a bool goes to the careful reader
    parse_options = pj.ParseOptions(explicit_schema=pa.schema(schema), unexpected_field_behavior="infer",
                                    newlines_in_values=False)
    read_options = pj.ReadOptions(block_size=BLOCK_BYTES, use_threads=True)
    pool = pa.system_memory_pool()  # malloc gives a piece's memory back; the default pool keeps it (peak RSS)

    def parse(piece: memoryview) -> Any:
        return pj.read_json(pa.BufferReader(pa.py_buffer(piece)), read_options=read_options,
                            parse_options=parse_options, memory_pool=pool)

    wanted = _wanted(builder)
    acc = Columns()
    lines: list[np.ndarray] = []

    def take(parsed: Any, at: np.ndarray, read_to: int) -> None:
        table = parsed.result()
        if table.num_rows != len(at):
            raise Unsupported("rows that are not one a line")  # two objects on a line, say
        _take(table, builder, acc, wanted)
        lines.append(at)
        if progress is not None:
            progress(read_to, size)

    first_line = 1
    with open(p, "rb") as f, ThreadPoolExecutor(1, thread_name_prefix="pick-a-method-read") as worker:
        pending: list[tuple[Any, np.ndarray, int]] = []
        for piece in _pieces(f):
            at, n_lines = _line_numbers(piece)
            if len(at):  # a piece of blank lines has nothing to parse (and pyarrow would refuse it)
                pending.append((worker.submit(parse, piece), at + first_line, f.tell()))  # 1-based lines
            first_line += n_lines
            del piece
            while len(pending) > 1:  # keep one piece parsing while this one is taken
                take(*pending.pop(0))
        for item in pending:
            take(*item)
    if not acc.n:
        raise Unsupported("no rows")
    return acc, np.concatenate(lines)


def _pieces(f: Any) -> Iterator[memoryview]:
    """Whole lines, about PIECE_BYTES at a time (a line longer than that makes its piece longer)."""
    while data := f.read(PIECE_BYTES):
        cut = data.rfind(b"\n") + 1
        while not cut and (more := f.read(PIECE_BYTES)):
            data += more
            cut = data.rfind(b"\n") + 1
        if not cut:
            cut = len(data)  # the last line, with no newline after it
        if cut < len(data):
            f.seek(cut - len(data), 1)  # the rest of the last line starts the next piece
        yield memoryview(data)[:cut]


def _line_numbers(piece: memoryview) -> tuple[np.ndarray, int]:
    """The 0-based lines of `piece` that hold an object, and how many lines it has.

    pyarrow skips blank lines and would read two objects on one line as two rows, so rows are tied to lines
    here, from the bytes: every line that is not blank must be one object, `{...}` (a line that is not is the
    careful reader's to name), and the caller checks that pyarrow read one row for each of those lines."""
    a = np.frombuffer(piece, dtype=np.uint8)
    ends = np.flatnonzero(a == NEWLINE)
    open_end = bool(a[-1] != NEWLINE)  # the last line has no newline
    n_lines = len(ends) + open_end
    followed = ends if open_end else ends[:-1]  # newlines with a line after them
    # the common file: each line `{...}`, nothing before or after it (checked at the ends of lines only)
    plain = (a[0] == OPEN and (a[-1] == CLOSE or not open_end) and bool((a[ends - 1] == CLOSE).all())
             and bool((a[followed + 1] == OPEN).all()))
    return (np.arange(n_lines, dtype=np.int64) if plain else _object_lines(piece, a, ends, open_end)), n_lines


def _object_lines(piece: memoryview, a: np.ndarray, ends: np.ndarray, open_end: bool) -> np.ndarray:
    """The lines that hold an object, in a piece with blank lines, CRLF or spaces around objects."""
    if open_end:
        ends = np.append(ends, len(a))
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    last = np.maximum(ends - 1, 0)
    last = np.where((a[last] == CR) & (ends - starts > 1), last - 1, last)  # a CRLF line ends before its CR
    plain = (ends > starts) & (a[np.minimum(starts, len(a) - 1)] == OPEN) & (a[last] == CLOSE)
    view = piece.obj if isinstance(piece.obj, bytes) else bytes(piece)
    for i in np.flatnonzero(~plain).tolist():  # blank lines, or spaces around the object: judged by their bytes
        text = view[starts[i]:ends[i]].strip(JSON_SPACE)
        if text and not (text[:1] == b"{" and text[-1:] == b"}"):
            raise Unsupported("a line that is not one object")  # the careful reader names it
        plain[i] = bool(text)
    return np.flatnonzero(plain).astype(np.int64)


def _csv(p: Path, builder: ColumnBuilder) -> Any:
    import pyarrow.csv as pcsv

    from .arrow_columns import is_text

    from .plain import csv_delimiter

    with open(p, "rb") as f:
        line = f.readline().decode("utf-8", "replace").strip()
    delimiter = csv_delimiter(line)
    header = line.split(delimiter)
    if not any(n in header for n in builder.names["task_id"]):
        raise Unsupported("no task column")  # the careful reader names the columns and a close match
    types = {n: pa.string() for n in (*builder.names["task_id"], *builder.names["model"], *builder.names["arm"])
             if n in header}
    reader = pcsv.open_csv(p, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
                           parse_options=pcsv.ParseOptions(delimiter=delimiter),
                           convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                               quoted_strings_can_be_null=True))
    limit = csv.field_size_limit()  # the careful reader refuses a longer cell: both readers must agree

    def check(table: Any) -> None:
        for col in table.columns:
            if is_text(col.type) and len(col) and (pc.max(pc.binary_length(col)).as_py() or 0) > limit:
                raise Unsupported("a cell over the CSV field size limit")

    return _collect(reader, builder, check=check)


def _parquet(p: Path, builder: ColumnBuilder) -> Any:
    import pyarrow.parquet as pq

    f = pq.ParquetFile(p)
    wanted = _wanted(builder)
    names = f.schema_arrow.names
    builder.keys = dict.fromkeys(names)
    return _collect(f.iter_batches(batch_size=1 << 16, columns=[n for n in names if n in wanted]), builder)
