"""Row dicts -> columns, chunk by chunk: the careful path, which names the row and field of every bad value.

Every reader that yields row dicts ends here (rows passed inline, JSON arrays, .gz files, the eval tools' logs,
and whatever the columnar reader (`columnar.py`) cannot take as a table); both end in `rows.make_rows`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from .. import fields as F
from pick_a_method.common.errors import InputError
from ..rows import make_rows
from .prompts import prompt_key
from .replies import python_replies

# Values a `truncated` cell may hold; CSV gives strings.
TRUNCATED_WORDS = {True: True, False: False, None: None, "": None, "true": True, "false": False, "True": True,
                   "False": False, "TRUE": True, "FALSE": False, "1": True, "0": False, "yes": True, "no": False}
BOOL_WORDS = {"true": 1.0, "false": 0.0}
# inspect-ai's grade letters (CORRECT, INCORRECT, PARTIAL, NOANSWER), as its own value_to_float reads them.
GRADE_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def show(v: Any) -> str:
    """A value cut short for an error message; never raises (an int past 4,300 digits has no str())."""
    try:
        return repr(str(v)[:60])
    except (ValueError, RecursionError):
        return f"<a {type(v).__name__} too large to show>"


def column(rows: list[dict[str, Any]], key: str) -> list[Any]:
    """rows[i].get(key) for every row, looped in C; a dotted key reaches into nested objects."""
    values = list(map(dict.get, rows, repeat(key)))
    if "." in key and values.count(None) == len(values):
        values = [F.get_path(r, key) for r in rows]
    return values


def coalesce(rows: list[dict[str, Any]], keys: Sequence[str], present: set[str]) -> tuple[list[Any], list[int]]:
    """The first non-null value among `keys` per row, and the index of the key it came from (-1: none)."""
    out: list[Any] = [None] * len(rows)
    source = [-1] * len(rows)
    first = True
    for j, key in enumerate(keys):
        if F.head(key) not in present:
            continue
        values = column(rows, key)
        if first:
            out, source, first = values, [-1 if v is None else j for v in values], False
        else:
            for i in [i for i, v in enumerate(out) if v is None]:
                if values[i] is not None:
                    out[i], source[i] = values[i], j
        if None not in out:
            break
    return out, source


def to_number(v: Any) -> float | None:
    """A finite number from a JSON or CSV cell (None for a missing one); raises ValueError otherwise."""
    if v is None:
        return math.nan
    if type(v) is bool:
        raise ValueError(v)
    x = float(v.strip()) if isinstance(v, str) else float(v)  # TypeError for lists and objects
    if not math.isfinite(x):
        raise ValueError(v)
    return x


def _codes(keys: list[Any], index: dict[Any, int]) -> np.ndarray:
    """Integer codes for hashable keys, in first-seen order, shared across chunks through `index`."""
    for key in dict.fromkeys(keys):  # distinct keys only
        if key not in index:
            index[key] = len(index) - (None in index)
    return np.fromiter(map(index.__getitem__, keys), dtype=np.int32, count=len(keys))


class ColumnBuilder:
    """Turns chunks of row dicts into columns, sharing the task, model and arm codes across chunks."""

    def __init__(self, *, source: str | None, max_rows: int | None = None, fields: Mapping[str, str] | None = None,
                 graders: Mapping[str, str] | None = None):
        self.source, self.max_rows = source, max_rows
        self.fields = F.check_fields(fields)
        self.names = {name: F.candidates(name, self.fields) for name in F.CANONICAL}
        # other graders of the same rollouts: name -> field (a reader's own, then the caller's other_rewards)
        self.graders = {**(graders or {}), **{p: p for p in F.other_rewards(self.fields)}}
        self.task_index: dict[Any, int] = {}
        self.model_index: dict[Any, int] = {None: -1}
        self.arm_index: dict[Any, int] = {None: -1}
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in ("task", "reward", "truncated", "stated", "model",
                                                                   "arm", "tokens", "max_tokens", "nan", "lines",
                                                                   "reply_hash", "reply_len",
                                                                   *(f"grader:{g}" for g in self.graders))}
        self.n = 0
        self.has_pairs = False
        self.reward_read = False
        self.keys: dict[str, None] = {}  # every top-level key seen, in first-seen order
        self.cut_words = F.cut_off_words(self.fields)
        self.reasons_cache: dict[str, Any] = {}
        self.unknown_reasons: dict[str, int] = {}  # finish reasons not known, and how many rows gave each
        self.prompts: dict[int, str] = {}  # task code -> its prompt's key (readers/prompts.py), from its first row

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
        present = set().union(*rows)  # every key any row has; optional fields absent everywhere are skipped
        self.keys.update(dict.fromkeys(k for k in present if k not in self.keys))
        codes = self._tasks(rows, lines, present)
        self.parts["task"].append(codes)
        self._prompts(rows, codes, present)
        self.parts["reward"].append(self._rewards(rows, lines, present))
        truncated, stated = self._truncation(rows, lines, present)
        self.parts["truncated"].append(truncated)
        self.parts["stated"].append(stated)
        self.parts["model"].append(self._models(rows, lines, present))
        self.parts["arm"].append(self._arms(rows, lines, present))
        self.parts["tokens"].append(self._numbers(rows, lines, present, "tokens", "a token count"))
        self.parts["max_tokens"].append(self._max_tokens(rows, lines) if present & {"max_tokens", "sampling"}
                                        else np.full(len(rows), np.nan))
        replies, _ = coalesce(rows, self.names["completion"], present)
        reply_hash, reply_len = python_replies(replies)
        self.parts["reply_hash"].append(reply_hash)
        self.parts["reply_len"].append(reply_len)
        for name, path in self.graders.items():
            self.parts[f"grader:{name}"].append(grades(column(rows, path)) if F.head(path) in present
                                                 else np.full(len(rows), np.nan))
        if lines is not None:
            self.parts["lines"].append(np.asarray(lines, dtype=np.int64))
        if not self.has_pairs and {"chosen", "rejected"} <= present:
            self.has_pairs = any("chosen" in r and "rejected" in r for r in rows)
        self.n += len(rows)

    def _tasks(self, rows: list[dict[str, Any]], lines: Sequence[int] | None, present: set[str]) -> np.ndarray:
        names = self.names["task_id"]
        keys, _ = coalesce(rows, names, present | {names[0]})
        if None in keys:
            i = keys.index(None)
            also = f" (nor {' or '.join(names[1:])})" if len(names) > 1 else ""
            raise InputError(f"{self.where(i, lines)} has no {names[0]}{also}{F.hint(names, rows[i])}; give every "
                             f"row the id of the task it answered (or map yours with fields={{\"task_id\": ...}})",
                             row=self.n + i, field=names[0])
        if not set(map(type, keys)) <= {str}:
            for i, k in enumerate(keys):
                if type(k) is not str:
                    if isinstance(k, (dict, list)) or (isinstance(k, float) and not math.isfinite(k)):
                        raise InputError(f"{self.where(i, lines)}: task_id is {type(k).__name__} {show(k)}; "
                                         f"a task id must be a string or an integer", row=self.n + i,
                                         field=names[0])
                    try:
                        keys[i] = str(k)  # ints and strings compare as strings: task 1 is task "1"
                    except ValueError:  # an int past 4,300 digits
                        raise InputError(f"{self.where(i, lines)}: task_id is an integer too large to use as an "
                                         f"id; give a string", row=self.n + i, field=names[0]) from None
        return _codes(keys, self.task_index)

    def _prompts(self, rows: list[dict[str, Any]], codes: np.ndarray, present: set[str]) -> None:
        """The prompt key of each task first seen in this chunk (its first row's; its rollouts share it)."""
        names = F.PROMPT
        if not any(F.head(k) in present for k in names):
            return
        firsts, at = np.unique(codes, return_index=True)
        new = [(int(c), int(i)) for c, i in zip(firsts.tolist(), at.tolist()) if int(c) not in self.prompts]
        if not new:
            return
        values, _ = coalesce([rows[i] for _, i in new], names, present)
        for (code, _), value in zip(new, values):
            key = prompt_key(value)
            if key is not None:
                self.prompts[code] = key

    def _rewards(self, rows: list[dict[str, Any]], lines: Sequence[int] | None, present: set[str]) -> np.ndarray:
        key = self.names["reward"][0]
        if F.head(key) not in present:
            self.parts["nan"].append(np.zeros(len(rows), dtype=bool))
            return np.full(len(rows), np.nan)
        raw = column(rows, key)
        self.reward_read = self.reward_read or raw.count(None) < len(raw) or key in present
        try:
            out = np.array(raw, dtype=np.float64)
            if out.ndim != 1:
                raise ValueError
        except (ValueError, TypeError, OverflowError):
            out = np.empty(len(raw), dtype=np.float64)
            for i, v in enumerate(raw):
                out[i] = self._one_reward(v, i, lines, key)
        self.parts["nan"].append(np.array([v != v for v in raw], dtype=bool) if np.isnan(out).any()
                                 else np.zeros(len(raw), dtype=bool))  # NaN (a grader failure?), not missing
        if np.isinf(out).any():
            i = int(np.flatnonzero(np.isinf(out))[0])
            raise InputError(f"{self.where(i, lines)}: {key} is {out[i]}; a reward must be a finite number "
                             f"(null when the row is not graded)", row=self.n + i, field=key)
        return out

    def _one_reward(self, v: Any, i: int, lines: Sequence[int] | None, key: str) -> float:
        if v is None:
            return math.nan
        if isinstance(v, (bool, int, float)):
            try:
                return float(v)
            except OverflowError:  # an int past 1.8e308
                return math.inf  # refused by the caller as not finite
        if isinstance(v, str):
            s = v.strip()
            if s.lower() in BOOL_WORDS:
                return BOOL_WORDS[s.lower()]
            if s in GRADE_LETTERS:
                return GRADE_LETTERS[s]
            try:
                return float(s)
            except ValueError:
                pass
        raise InputError(f"{self.where(i, lines)}: {key} is {type(v).__name__} {show(v)}; a reward must be "
                         f"a number (true/false count as 1/0, C/I/P/N as 1/0/0.5/0, null means not graded)", row=self.n + i, field=key)

    def _truncation(self, rows: list[dict[str, Any]], lines: Sequence[int] | None,
                    present: set[str]) -> tuple[np.ndarray, np.ndarray]:
        """Cut off or not, from a `truncated` flag and from the finish reason, in every API's words (fields.py)."""
        keys = self.names["truncated"]
        flags, source = coalesce(rows, keys, present)
        finish, _ = coalesce(rows, F.FINISH_REASONS, present)
        kinds = set(map(type, flags))
        if kinds <= {bool}:  # the common case, at C speed
            truncated, stated = np.array(flags, dtype=bool), np.ones(len(flags), dtype=bool)
        elif kinds <= {type(None)}:
            truncated, stated = np.zeros(len(flags), dtype=bool), np.zeros(len(flags), dtype=bool)
        else:
            get = TRUNCATED_WORDS.get
            values = []
            for i, t in enumerate(flags):
                try:
                    v = get(t, "?")
                except TypeError:  # unhashable
                    v = "?"
                key = keys[source[i]] if source[i] >= 0 else keys[0]
                if v == "?" and key not in F.NATIVE["truncated"] and isinstance(t, str):
                    v = self._reason(t)  # a mapped field that holds finish reasons
                if v == "?":
                    raise InputError(f"{self.where(i, lines)}: {key} is {show(t)}; use true or false "
                                     f"(or give finish_reason)", row=self.n + i, field=key)
                values.append(v)
            truncated = np.array([v is True for v in values], dtype=bool)
            stated = np.array([v is True or v is False for v in values], dtype=bool)
        if not set(map(type, finish)) <= {type(None)}:
            reasons = [self._reason(f) if isinstance(f, str) else None for f in finish]
            truncated |= np.array([r is True for r in reasons], dtype=bool)
            stated |= np.array([r is True or r is False for r in reasons], dtype=bool)
        return truncated, stated

    def _reason(self, word: str) -> bool | None:
        """A finish reason read: True cut off, False not, None unknown (a word not known is counted, never read as
        'not cut off')."""
        kind = self.reasons_cache.get(word, "?")
        if kind == "?":
            kind = self.reasons_cache[word] = F.reason_kind(word, self.cut_words)
        if isinstance(kind, str):
            self.unknown_reasons[kind] = self.unknown_reasons.get(kind, 0) + 1
            return None
        return kind

    def _models(self, rows: list[dict[str, Any]], lines: Sequence[int] | None, present: set[str]) -> np.ndarray:
        keys = self.names["model"]
        names, source = coalesce(rows, keys, present)
        if not set(map(type, names)) <= {str, type(None)}:
            i = next(i for i, m in enumerate(names) if m is not None and type(m) is not str)
            key = keys[source[i]]
            raise InputError(f"{self.where(i, lines)}: {key} is {type(names[i]).__name__} {show(names[i])}; "
                             f"name the model that sampled the row as a string", row=self.n + i, field=key)
        return _codes(names, self.model_index)

    def _arms(self, rows: list[dict[str, Any]], lines: Sequence[int] | None, present: set[str]) -> np.ndarray:
        key = self.names["arm"][0]
        if F.head(key) not in present:
            return np.full(len(rows), -1, dtype=np.int32)
        arms = column(rows, key)
        for i, a in enumerate(arms):
            if a is not None and type(a) is not str:
                if not isinstance(a, (int, float)) or (isinstance(a, float) and not math.isfinite(a)):
                    raise InputError(f"{self.where(i, lines)}: {key} is {type(a).__name__} {show(a)}; name the "
                                     f"experiment arm as a string", row=self.n + i, field=key)
                arms[i] = str(a)
        return _codes(arms, self.arm_index)

    def _numbers(self, rows: list[dict[str, Any]], lines: Sequence[int] | None, present: set[str], name: str,
                 what: str) -> np.ndarray:
        keys = self.names[name]
        if not any(F.head(k) in present for k in keys):
            return np.full(len(rows), np.nan)
        raw, source = coalesce(rows, keys, present)
        try:
            out = np.array(raw, dtype=np.float64)
            if out.ndim == 1 and np.isfinite(out[~np.isnan(out)]).all():
                return out
        except (ValueError, TypeError, OverflowError):
            pass
        return self._each_number(raw, lines, lambda i: keys[source[i]], what)

    def _each_number(self, raw: list[Any], lines: Sequence[int] | None, key: Any, what: str) -> np.ndarray:
        out = np.empty(len(raw))
        for i, v in enumerate(raw):
            try:
                out[i] = to_number(v)
            except (ValueError, TypeError, OverflowError):
                raise InputError(f"{self.where(i, lines)}: {key(i)} is {show(v)}; give {what} as a number",
                                 row=self.n + i, field=key(i)) from None
        return out

    def _max_tokens(self, rows: list[dict[str, Any]], lines: Sequence[int] | None) -> np.ndarray:
        raw = column(rows, "max_tokens")
        sampling = column(rows, "sampling")
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
        return self._each_number(raw, lines, lambda i: "max_tokens", "the token budget")

    def finish(self) -> Any:

        def cat(key: str, dtype: Any) -> np.ndarray:
            parts = self.parts[key]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        model = cat("model", np.int32)
        return make_rows(
            task=cat("task", np.int32), task_names=[str(k) for k in self.task_index], reward=cat("reward", np.float64),
            truncated=cat("truncated", bool), stated=cat("stated", bool),
            model=model, model_names=[m for m in self.model_index if m is not None],
            arm=cat("arm", np.int32), arm_names=[a for a in self.arm_index if a is not None],
            tokens=cat("tokens", np.float64), max_tokens=cat("max_tokens", np.float64), nan_reward=cat("nan", bool),
            has_pairs=self.has_pairs, lines=cat("lines", np.int64) if self.parts["lines"] else None,
            source=self.source, fields=self.fields, keys=list(self.keys), reward_read=self.reward_read,
            unknown_reasons=self.unknown_reasons, reply_hash=cat("reply_hash", np.int64),
            reply_len=cat("reply_len", np.int32),
            graders={g: cat(f"grader:{g}", np.float64) for g in self.graders},
            task_prompts=[self.prompts.get(i) for i in range(len(self.task_index))] if self.prompts else None)


def grades(raw: list[Any]) -> np.ndarray:
    """Another grader's grades, read as the reward is (numbers, true/false, C/I/P/N) but never refused: a value that
    is not a grade (an object of several metrics, say) is NaN, since the reward read does not rest on it."""
    try:
        out = np.array(raw, dtype=np.float64)
        if out.ndim == 1 and not np.isinf(out).any():
            return out
    except (ValueError, TypeError, OverflowError):
        pass
    out = np.full(len(raw), np.nan)
    for i, v in enumerate(raw):
        if type(v) is str and (v.strip().lower() in BOOL_WORDS or v.strip() in GRADE_LETTERS):
            s = v.strip()
            out[i] = BOOL_WORDS[s.lower()] if s.lower() in BOOL_WORDS else GRADE_LETTERS[s]
        elif type(v) in (bool, int, float, str):
            try:
                x = float(v)
            except (ValueError, OverflowError):
                continue
            out[i] = x if math.isfinite(x) else math.nan
    return out
