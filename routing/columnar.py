"""The columnar reader: JSONL, CSV and Parquet through pyarrow, one vectorised pass per column.

It reads the files people have at C speed (bench/route_bench.py times it beside polars' read_ndjson) and keeps
only the columns the router reads. JSONL is read once, in pieces that pyarrow parses on every core; each row's
line number comes from the same bytes (blank lines included). Whatever it cannot take as a table (a value of
the wrong type, a line that is not one object, a byte-order mark, gzip, a missing task id) it hands back
(`None`), and `read_rows` re-reads the file with the careful reader, which names the line and field.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from . import fields as F
from .builder import ColumnBuilder
from .careful import Progress
from .errors import InputError

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


class _Unsupported(Exception):
    """The file is valid JSON/CSV for all we know, but not a table this reader takes: use the careful one."""


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
    except (_Unsupported, pa.ArrowException, ValueError, TypeError, KeyError, OverflowError):
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
    heads = {h for names in builder.names.values() for k in names for h in (k, F.head(k))}
    return heads | {F.FINISH_REASON, "max_tokens", "sampling", "sampling.max_tokens", "chosen", "rejected"}


def _keep(batch: Any, wanted: set[str]) -> tuple[Any, list[str]]:
    names = batch.schema.names
    keep = [n for n in names if n in wanted]
    return batch.select(keep), names


def _take(batch: Any, builder: ColumnBuilder, acc: _Columns, wanted: set[str], check: Any = None) -> None:
    """One batch's columns into `acc`: the columns the router does not read are dropped first."""
    small, names = _keep(batch, wanted)
    builder.keys.update(dict.fromkeys(n for n in names if n not in builder.keys))
    acc.n += small.num_rows
    _check_cap(builder, acc.n)
    table = small if isinstance(small, pa.Table) else pa.Table.from_batches([small])
    if check is not None:
        check(table)
    acc.add(table, builder)


def _collect(batches: Any, builder: ColumnBuilder, check: Any = None) -> _Columns:
    """Each batch to numpy columns as it arrives (codes shared across batches), so only one batch of arrow data
    is held at a time."""
    wanted = _wanted(builder)
    acc = _Columns()
    for batch in batches:
        _take(batch, builder, acc, wanted, check)
        del batch
    if not acc.n:
        raise _Unsupported("no rows")
    return acc


def _jsonl(p: Path, builder: ColumnBuilder, size: int, progress: Progress | None) -> tuple[_Columns, np.ndarray]:
    """The file piece by piece: a worker has pyarrow parse each piece (on every core) back to back, while this
    thread reads the next piece, ties its lines to rows and takes the columns of the piece parsed last, so the
    parse never waits; a piece's arrow data is dropped once taken. The file is read once."""
    import pyarrow.json as pj

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
    acc = _Columns()
    lines: list[np.ndarray] = []

    def take(parsed: Any, at: np.ndarray, read_to: int) -> None:
        table = parsed.result()
        if table.num_rows != len(at):
            raise _Unsupported("rows that are not one a line")  # two objects on a line, say
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
        raise _Unsupported("no rows")
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
            raise _Unsupported("a line that is not one object")  # the careful reader names it
        plain[i] = bool(text)
    return np.flatnonzero(plain).astype(np.int64)


def _csv(p: Path, builder: ColumnBuilder) -> Any:
    import pyarrow.csv as pcsv

    with open(p, "rb") as f:
        header = f.readline().decode("utf-8", "replace").strip().split(",")
    if not any(n in header for n in builder.names["task_id"]):
        raise _Unsupported("no task column")  # the careful reader names the columns and a close match
    types = {n: pa.string() for n in (*builder.names["task_id"], *builder.names["model"], *builder.names["arm"])
             if n in header}
    reader = pcsv.open_csv(p, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
                           convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                               quoted_strings_can_be_null=True))
    limit = csv.field_size_limit()  # the careful reader refuses a longer cell: both readers must agree

    def check(table: Any) -> None:
        for col in table.columns:
            if _is_text(col.type) and len(col) and (pc.max(pc.binary_length(col)).as_py() or 0) > limit:
                raise _Unsupported("a cell over the CSV field size limit")

    return _collect(reader, builder, check=check)


def _parquet(p: Path, builder: ColumnBuilder) -> Any:
    import pyarrow.parquet as pq

    f = pq.ParquetFile(p)
    wanted = _wanted(builder)
    names = f.schema_arrow.names
    builder.keys = dict.fromkeys(names)
    return _collect(f.iter_batches(batch_size=1 << 16, columns=[n for n in names if n in wanted]), builder)


# ---------------------------------------------------------------------------------------------------------
# Columns


def _get(table: Any, path: str) -> Any:
    """The column at `path` (a top-level name first, then a dotted path into struct columns), or None."""
    if path in table.column_names:
        return table.column(path)  # chunked as parsed: every use below takes chunks, so nothing is copied
    if "." not in path:
        return None
    col = None
    for i, part in enumerate(path.split(".")):
        if i == 0:
            if part not in table.column_names:
                return None
            col = table.column(part)
            continue
        if not pa.types.is_struct(col.type) or col.type.get_field_index(part) < 0:
            return None
        col = pc.struct_field(col, part)
    return col


def _is_text(t: Any) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _as_text(col: Any) -> Any:
    """Strings for ids and names (ints as their digits); anything else is the careful reader's to judge."""
    if pa.types.is_null(col.type) or _is_text(col.type):
        return col.cast(pa.string())
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
        if pa.types.is_boolean(col.type):
            raise _Unsupported("a boolean id")
        return col.cast(pa.string())
    raise _Unsupported(f"a {col.type} id")


def _coalesce_text(table: Any, names: tuple[str, ...]) -> Any:
    cols = [c for c in (_get(table, n) for n in names) if c is not None]
    if not cols:
        return None
    cols = [_as_text(c) for c in cols]
    return cols[0] if len(cols) == 1 else pc.coalesce(*cols)


def _runs(col: Any) -> tuple[Any, np.ndarray]:
    """A text column as its runs: the first value of each run of equal values, and each run's length.

    Rows usually come grouped (a task's rollouts in a row, one model for thousands of rows), so the hashing that
    encodes the column sees one value per run instead of one per row."""
    n = len(col)
    if n < 2 or col.null_count == n:
        return col[:1], np.array([n] if n else [], dtype=np.int64)
    changed = pc.fill_null(pc.not_equal(col.slice(1), col.slice(0, n - 1)), True)  # a null starts its own run
    starts = np.flatnonzero(np.concatenate(([True], changed.to_numpy(zero_copy_only=False))))
    return col.take(starts), np.diff(starts, append=n)


def _encode(heads: list[Any], lengths: list[np.ndarray]) -> tuple[np.ndarray, list[str]]:
    """Codes in first-seen order (-1 for null) and the distinct values, from every batch's runs at once."""
    chunks = [c for h in heads for c in (h.chunks if isinstance(h, pa.ChunkedArray) else [h])]
    enc = pc.dictionary_encode(pa.chunked_array(chunks, type=pa.string()).combine_chunks())
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int32)
    return np.repeat(codes, np.concatenate(lengths)), enc.dictionary.to_pylist()


def _numbers(col: Any) -> np.ndarray:
    """float64 with NaN for null; a non-number (or inf) goes to the careful reader, which names the row."""
    if pa.types.is_null(col.type):
        return np.full(len(col), np.nan)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise _Unsupported(f"a {col.type} number")
    out = pc.fill_null(col.cast(pa.float64()), math.nan).to_numpy(zero_copy_only=False)
    if np.isinf(out).any():
        raise _Unsupported("an infinite number")
    return out


class _Columns:
    """numpy columns, batch by batch, with the task, model and arm codes shared across batches."""

    KEYS = ("task", "reward", "nan", "truncated", "stated", "model", "arm", "tokens", "max_tokens")

    def __init__(self) -> None:
        self.n = 0
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.KEYS}
        self.has_pairs = False
        self.sizes: list[int] = []

    def add(self, table: Any, builder: ColumnBuilder) -> None:
        n = table.num_rows
        names = builder.names
        put = lambda key, value: self.parts[key].append(value)  # noqa: E731
        self.sizes.append(n)
        task = _coalesce_text(table, names["task_id"])
        if task is None or task.null_count:
            raise _Unsupported("a row with no task id")  # the careful reader names it
        put("task", _runs(task))  # text as runs, encoded once at the end (in C, in first-seen order)
        reward_col = _get(table, names["reward"][0])
        if reward_col is None or reward_col.null_count == n:
            # the explicit schema adds the column to every JSONL file, so whether any row has the field is the
            # careful reader's to tell (its notes differ): such files carry no grade to read fast anyway
            raise _Unsupported("no reward read")
        if pa.types.is_boolean(reward_col.type):
            reward_col = reward_col.cast(pa.float64())
        reward = _numbers(reward_col)
        put("reward", reward)
        put("nan", np.isnan(reward) & reward_col.is_valid().to_numpy(zero_copy_only=False))
        truncated, stated = _truncation(table, names["truncated"][0], n)
        put("truncated", truncated)
        put("stated", stated)
        model_cols = [c for c in (_get(table, m) for m in names["model"]) if c is not None]
        if not all(_is_text(c.type) or pa.types.is_null(c.type) for c in model_cols):
            raise _Unsupported("a model that is not text")  # the careful reader refuses it by name
        model = _coalesce_text(table, names["model"])
        put("model", None if model is None else _runs(model))
        arm = _coalesce_text(table, names["arm"])
        put("arm", None if arm is None else _runs(arm))
        put("tokens", _first_number(table, names["tokens"], n))
        put("max_tokens", _first_number(table, ("max_tokens", "sampling.max_tokens"), n))
        if not self.has_pairs and {"chosen", "rejected"} <= set(table.column_names):
            both = pc.and_(table.column("chosen").is_valid(), table.column("rejected").is_valid())
            self.has_pairs = bool(pc.any(both).as_py())

    def finish(self, builder: ColumnBuilder, lines: np.ndarray | None) -> Any:
        from .rows import make_rows

        text = {k: self.parts.pop(k) for k in ("task", "model", "arm")}
        cat = {}
        for k in list(self.parts):  # each column's batches freed as soon as it is joined (peak memory)
            v = self.parts.pop(k)
            cat[k] = (np.concatenate([np.full(self.sizes[i], np.nan) if a is None else a for i, a in enumerate(v)])
                      if any(a is not None for a in v) else np.full(self.n, np.nan))
            del v
        codes, names = {}, {}
        for k, chunks in text.items():
            if all(c is None for c in chunks):
                codes[k], names[k] = np.full(self.n, -1, dtype=np.int32), []
                continue
            runs = [(pa.nulls(1, pa.string()), np.array([self.sizes[i]])) if c is None else c
                    for i, c in enumerate(chunks)]
            codes[k], names[k] = _encode([h for h, _ in runs], [n for _, n in runs])
        return make_rows(task=codes["task"], task_names=names["task"], reward=cat["reward"],
                         truncated=cat["truncated"], stated=cat["stated"], model=codes["model"],
                         model_names=names["model"], arm=codes["arm"], arm_names=names["arm"],
                         tokens=cat["tokens"], max_tokens=cat["max_tokens"], nan_reward=cat["nan"],
                         has_pairs=self.has_pairs, lines=lines, source=builder.source, fields=builder.fields,
                         keys=list(builder.keys), reward_read=True)


def _truncation(table: Any, name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    col = _get(table, name)
    truncated, stated = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if col is not None and not pa.types.is_null(col.type):
        if pa.types.is_integer(col.type):
            values = pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
            if not np.isin(values, (0, 1)).all():
                raise _Unsupported("a truncated flag that is not 0/1")
            col = col.cast(pa.bool_())
        if not pa.types.is_boolean(col.type):
            raise _Unsupported(f"a {col.type} truncated flag")
        truncated = pc.fill_null(col, False).to_numpy(zero_copy_only=False)
        stated = col.is_valid().to_numpy(zero_copy_only=False)
    finish = _get(table, F.FINISH_REASON)
    if finish is not None and not pa.types.is_null(finish.type):
        if not _is_text(finish.type):
            raise _Unsupported("a finish_reason that is not text")
        truncated = truncated | pc.fill_null(pc.equal(finish, "length"), False).to_numpy(zero_copy_only=False)
        stated = stated | finish.is_valid().to_numpy(zero_copy_only=False)
    return truncated, stated


def _first_number(table: Any, names: tuple[str, ...], n: int) -> np.ndarray | None:
    """The first of `names` that holds a number, per row (NaN where none does); None when no column is there."""
    out = None
    for name in reversed(names):  # fill from the last, overwrite by the first
        col = _get(table, name)
        if col is not None:
            values = _numbers(col)
            out = values if out is None else np.where(np.isnan(values), out, values)
    return out
