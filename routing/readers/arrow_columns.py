"""Arrow tables -> the builder's numpy columns: the fields the router reads, found by name or dotted path,
task/sampler/arm ids encoded once, numbers and truncation flags checked. Anything this cannot take raises
`Unsupported`, and the file goes to the careful reader, which names the line and field.

Imported by the columnar reader only after pyarrow has loaded (a small file never pays for it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import fields as F
from pick_a_method.common.dotted import is_index
from pick_a_method.common.errors import Unsupported
from ..rows import make_rows
from .builder import ColumnBuilder
from .prompts import prompt_key
from .replies import NO_REPLY, arrow_replies


def _get(table: Any, path: str) -> Any:
    """The column at `path` (a top-level name first, then a dotted path into struct columns; a numeric part
    indexes a list column, -1 the last item), or None."""
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
        if pa.types.is_struct(col.type):
            if col.type.get_field_index(part) < 0:
                return None
            col = pc.struct_field(col, part)
        elif (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)) and is_index(part):
            col = _list_item(col, int(part))
        else:
            return None
    return col


def _list_item(col: Any, index: int) -> Any:
    """Item `index` of each list (null where a list is null or too short); a negative index counts from the end."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for chunk in chunks:
        lengths = pc.fill_null(pc.list_value_length(chunk), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        starts = chunk.offsets.to_numpy()[:-1].astype(np.int64)  # into chunk.values, the unsliced items
        at = starts + (index if index >= 0 else lengths + index)
        ok = (lengths > (index if index >= 0 else -index - 1)) & chunk.is_valid().to_numpy(zero_copy_only=False)
        values = chunk.values
        picked = values.take(pa.array(np.where(ok, at, 0), mask=~ok)) if len(values) else pa.nulls(len(chunk),
                                                                                                   chunk.type.value_type)
        out.append(picked)
    return pa.chunked_array(out, type=col.type.value_type)


def is_text(t: Any) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _as_text(col: Any) -> Any:
    """Strings for ids and names (ints as their digits); anything else is the careful reader's to judge."""
    if pa.types.is_null(col.type) or is_text(col.type):
        return col.cast(pa.string())
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
        if pa.types.is_boolean(col.type):
            raise Unsupported("a boolean id")
        return col.cast(pa.string())
    raise Unsupported(f"a {col.type} id")


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
        raise Unsupported(f"a {col.type} number")
    out = pc.fill_null(col.cast(pa.float64()), math.nan).to_numpy(zero_copy_only=False)
    if np.isinf(out).any():
        raise Unsupported("an infinite number")
    return out


class Columns:
    """numpy columns, batch by batch, with the task, model and arm codes shared across batches."""

    KEYS = ("task", "reward", "nan", "truncated", "stated", "model", "arm", "tokens", "max_tokens", "reply_hash",
            "reply_len")

    def __init__(self) -> None:
        self.n = 0
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.KEYS}
        self.graders: dict[str, list[np.ndarray]] = {}
        self.has_pairs = False
        self.sizes: list[int] = []
        self.prompts: dict[str, str] = {}  # task id -> its prompt's key (readers/prompts.py), from its first row

    def add(self, table: Any, builder: ColumnBuilder) -> None:
        n = table.num_rows
        names = builder.names
        put = lambda key, value: self.parts[key].append(value)  # noqa: E731
        self.sizes.append(n)
        task = _coalesce_text(table, names["task_id"])
        if task is None or task.null_count:
            raise Unsupported("a row with no task id")  # the careful reader names it
        runs = _runs(task)
        put("task", runs)  # text as runs, encoded once at the end (in C, in first-seen order)
        self._prompts(table, F.PROMPT, runs)
        reward_col = _get(table, names["reward"][0])
        if reward_col is None or reward_col.null_count == n:
            # the explicit schema adds the column to every JSONL file, so whether any row has the field is the
            # careful reader's to tell (its notes differ): such files carry no grade to read fast anyway
            raise Unsupported("no reward read")
        if pa.types.is_boolean(reward_col.type):
            reward_col = reward_col.cast(pa.float64())
        reward = _numbers(reward_col)
        put("reward", reward)
        put("nan", np.isnan(reward) & reward_col.is_valid().to_numpy(zero_copy_only=False))
        truncated, stated = _truncation(table, names["truncated"], n, builder.cut_words)
        put("truncated", truncated)
        put("stated", stated)
        model_cols = [c for c in (_get(table, m) for m in names["model"]) if c is not None]
        if not all(is_text(c.type) or pa.types.is_null(c.type) for c in model_cols):
            raise Unsupported("a model that is not text")  # the careful reader refuses it by name
        model = _coalesce_text(table, names["model"])
        put("model", None if model is None else _runs(model))
        arm = _coalesce_text(table, names["arm"])
        put("arm", None if arm is None else _runs(arm))
        put("tokens", _first_number(table, names["tokens"], n))
        put("max_tokens", _first_number(table, ("max_tokens", "sampling.max_tokens"), n))
        reply_hash, reply_len = _replies(table, names["completion"])
        put("reply_hash", reply_hash)
        put("reply_len", reply_len)
        for name, path in builder.graders.items():
            col = _get(table, path)
            self.graders.setdefault(name, []).append(np.full(n, np.nan) if col is None else _grades(col))
        if not self.has_pairs and {"chosen", "rejected"} <= set(table.column_names):
            both = pc.and_(table.column("chosen").is_valid(), table.column("rejected").is_valid())
            self.has_pairs = bool(pc.any(both).as_py())

    def _prompts(self, table: Any, names: tuple[str, ...], runs: tuple[Any, np.ndarray]) -> None:
        """The prompt key of each task first seen in this batch, read from its first row only (in Python: one
        prompt a new task, never a column of them)."""
        cols = [c for c in (_get(table, n) for n in names) if c is not None and not pa.types.is_null(c.type)]
        if not cols:
            return
        values, lengths = runs
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        new: dict[str, int] = {}
        for name, at in zip(values.to_pylist(), starts.tolist()):
            if name is not None and name not in self.prompts and name not in new:
                new[name] = at
        if not new:
            return
        picked = [c.take(pa.array(list(new.values()))).to_pylist() for c in cols]
        for j, name in enumerate(new):
            key = next((k for k in (prompt_key(p[j]) for p in picked) if k is not None), None)
            if key is not None:
                self.prompts[name] = key

    def finish(self, builder: ColumnBuilder, lines: np.ndarray | None) -> Any:

        text = {k: self.parts.pop(k) for k in ("task", "model", "arm")}
        graders = {name: np.concatenate(parts) for name, parts in self.graders.items()}
        hashes, lengths = self.parts.pop("reply_hash"), self.parts.pop("reply_len")
        reply_hash = reply_len = None
        if any(a is not None for a in lengths):  # a batch with no reply column holds none (-1)
            reply_hash = np.concatenate([np.zeros(self.sizes[i], np.int64) if a is None else a
                                         for i, a in enumerate(hashes)])
            reply_len = np.concatenate([np.full(self.sizes[i], NO_REPLY, np.int32) if a is None else a
                                        for i, a in enumerate(lengths)])
        del hashes, lengths
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
                         keys=list(builder.keys), reward_read=True, reply_hash=reply_hash, reply_len=reply_len,
                         graders=graders, task_prompts=[self.prompts.get(str(n)) for n in names["task"]]
                         if self.prompts else None)


def _replies(table: Any, names: tuple[str, ...]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(hash, length) of each row's reply: the first of `names` that holds one (readers/replies.py); (None, None)
    where no column of `names` is there."""
    hashes = lengths = None
    for name in reversed(names):  # fill from the last, overwrite by the first present
        col = _get(table, name)
        if col is None:
            continue
        h, length = arrow_replies(col)
        if lengths is None:
            hashes, lengths = h, length
        else:
            have = length != NO_REPLY
            hashes, lengths = np.where(have, h, hashes), np.where(have, length, lengths)
    return hashes, lengths


def _grades(col: Any) -> np.ndarray:
    """Another grader's grades: numbers or true/false (the careful reader reads the rest, NaN where not a grade)."""
    if pa.types.is_boolean(col.type):
        col = col.cast(pa.float64())
    return _numbers(col)


def _truncation(table: Any, names: tuple[str, ...], n: int, cut_words: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    truncated, stated = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    for name in reversed(names):  # fill from the last, overwrite by the first present
        col = _get(table, name)
        if col is None or pa.types.is_null(col.type):
            continue
        if name not in F.NATIVE["truncated"] and is_text(col.type):
            cut, said = _reasons(col, cut_words)  # a mapped field holding finish reasons
        else:
            if pa.types.is_integer(col.type):
                values = pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
                if not np.isin(values, (0, 1)).all():
                    raise Unsupported("a truncated flag that is not 0/1")
                col = col.cast(pa.bool_())
            if not pa.types.is_boolean(col.type):
                raise Unsupported(f"a {col.type} truncated flag")
            cut = pc.fill_null(col, False).to_numpy(zero_copy_only=False)
            said = col.is_valid().to_numpy(zero_copy_only=False)
        truncated, stated = np.where(said, cut, truncated), stated | said
    for name in F.FINISH_REASONS:
        finish = _get(table, name)
        if finish is None or pa.types.is_null(finish.type):
            continue
        if not is_text(finish.type):
            raise Unsupported("a finish_reason that is not text")
        cut, said = _reasons(finish, cut_words)
        truncated, stated = truncated | cut, stated | said
    return truncated, stated


def _reasons(col: Any, cut_words: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """(cut off, stated) from finish-reason words; a word not known is the careful reader's to count and name."""
    words = pc.utf8_lower(pc.utf8_trim_whitespace(col))
    known = pa.array(sorted(cut_words | F.ENDED_WORDS | F.UNSTATED_WORDS))
    if not pc.all(pc.or_kleene(pc.is_in(words, value_set=known), pc.is_null(words))).as_py() in (True, None):
        raise Unsupported("a finish reason not known")
    cut = pc.fill_null(pc.is_in(words, value_set=pa.array(sorted(cut_words))), False).to_numpy(zero_copy_only=False)
    ended = pc.fill_null(pc.is_in(words, value_set=pa.array(sorted(F.ENDED_WORDS))), False)
    return cut, cut | ended.to_numpy(zero_copy_only=False)


def _first_number(table: Any, names: tuple[str, ...], n: int) -> np.ndarray | None:
    """The first of `names` that holds a number, per row (NaN where none does); None when no column is there."""
    out = None
    for name in reversed(names):  # fill from the last, overwrite by the first
        col = _get(table, name)
        if col is not None:
            values = _numbers(col)
            out = values if out is None else np.where(np.isnan(values), out, values)
    return out
