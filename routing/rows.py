"""Graded rows: one numpy column per field the router reads (task, reward, truncation, sampler, arm, tokens, and the
reply as a hash and a length; other graders' grades of the same rollouts beside the reward).

Built once at the edge by the readers (`readers/`: a list of dicts, a file, a run folder of an eval tool), with
the field names resolved by the row-field contract (`fields.py`); every question reads the table built from
them (`table.py`). Nothing here reads a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pick_a_method.common.errors import InputError

from . import fields as F

__all__ = ["GradedRows", "RowsLike", "display_name", "make_rows", "concat", "with_model", "NAME_LIMIT"]


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
    read_from: str | list[str] | None = None  # the rows_path that reads these rows again (a file, folder or list)
    formats: list[str] = field(default_factory=list)  # the formats the rows were read as ("verifiers 0.3", ...)
    # The reply (readers/replies.py): a hash of its text (salted per process: compared within one read, never kept)
    # and its length in characters, whitespace stripped (0: blank; -1: no reply; -2: a tool-using trajectory, whose
    # last message is not read). None: no row carries a reply.
    reply_hash: np.ndarray | None = None  # int64
    reply_len: np.ndarray | None = None  # int32
    graders: dict[str, np.ndarray] = field(default_factory=dict)  # other graders' grades, float64 (NaN: not graded)
    # Each task's prompt as a stable key (readers/prompts.py: a hash of its text, whitespace folded), aligned to
    # task_names (None: the task's rows carry no prompt); None: no row carries one. `after` pairs arms on it where
    # their task ids do not meet (two tools name the same task their own way).
    task_prompts: list[str | None] | None = None
    suites: list[str] = field(default_factory=list)  # the environments / tasks the rows say they came from
    # Rows joined from several files (concat): each row's file (a code into origin_files: its name, and whether
    # origin_at holds its line numbers or its 0-based row in that file), so an example names its file
    origin: np.ndarray | None = None  # int32
    origin_at: np.ndarray | None = None  # int64
    origin_files: list[tuple[str, bool]] = field(default_factory=list)
    # what says a model graded a grade: "reward" (the grade read) or another grader's name -> the record that says so
    judged_by: dict[str, str] = field(default_factory=dict)
    # A per-task summary's counts (counts.py), one entry per summary row; None for rows of rollouts. Where set, the
    # columns above hold one entry per summary row: its task, model, arm and max_tokens (the rest left empty).
    counts: Any = None
    _tables: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)  # table.py's cache

    def __len__(self) -> int:
        return int(self.task.shape[0])

    @property
    def n_tasks(self) -> int:
        return len(self.task_names)

    @property
    def n_truncation_stated(self) -> int:
        return int(self.stated.sum()) if self.counts is None else int(self.counts.truncation_stated.sum())

    @property
    def n_nan_rewards(self) -> int:
        return int(self.nan_reward.sum()) if self.counts is None else int(self.counts.nan_rewards.sum())

    @property
    def n_rollouts(self) -> int:
        """Rollouts: the rows, or what a summary's rows count."""
        return len(self) if self.counts is None else int(self.counts.rollouts.sum())

    @property
    def weights(self) -> np.ndarray | None:
        """Rollouts per entry where the entries are a summary's rows; None where each entry is one rollout."""
        return None if self.counts is None else self.counts.rollouts

    def reward_range(self) -> tuple[float, float] | None:
        """(lowest, highest) graded reward, or None when nothing is graded."""
        if self.counts is not None:
            low, high = self.counts.reward_min, self.counts.reward_max
            return None if np.isnan(low).all() else (float(np.nanmin(low)), float(np.nanmax(high)))
        graded = self.reward[~np.isnan(self.reward)]
        return (float(graded.min()), float(graded.max())) if len(graded) else None

    @property
    def arms(self) -> np.ndarray:
        return self.arm if self.arm is not None else np.full(len(self), -1, dtype=np.int32)

    def where(self, i: int) -> str:
        """How to point a person at row i."""
        if self.origin is not None and self.origin_at is not None:
            name, lines = self.origin_files[int(self.origin[i])]
            return f"{'line' if lines else 'row'} {int(self.origin_at[i])} of {name}"
        if self.lines is not None:
            return f"line {int(self.lines[i])} of {self.source}"
        return f"row {i} of {self.source}" if self.source else f"row {i}"

    def refs(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """Evidence entries for rows: where they are and which task they answered."""
        return [{"row": int(i), **({"line": int(self.lines[i])} if self.lines is not None else {}),
                 **({"file": self.origin_files[int(self.origin[i])][0]} if self.origin is not None else
                    {"file": self.source} if self.source and self.lines is None else {}),
                 "task_id": display_name(self.task_names[int(self.task[i])])} for i in indices]

    def subset(self, mask: np.ndarray) -> GradedRows:
        """The rows where `mask` is true, sharing names and codes (so tasks compare across subsets)."""
        mask = np.asarray(mask)
        if mask.dtype == bool:  # positions, found once: each column then takes them (many times faster than a mask)
            mask = np.flatnonzero(mask)
        pick = lambda a: None if a is None else a[mask]  # noqa: E731
        return GradedRows(
            task=self.task[mask], task_names=self.task_names, reward=self.reward[mask],
            truncated=self.truncated[mask], stated=self.stated[mask], model=self.model[mask],
            model_names=self.model_names, max_tokens=self.max_tokens[mask], nan_reward=self.nan_reward[mask],
            has_pairs=self.has_pairs, lines=pick(self.lines), source=self.source, arm=pick(self.arm),
            arm_names=self.arm_names, tokens=pick(self.tokens), fields=self.fields, notes=self.notes,
            read_from=self.read_from, formats=self.formats, reply_hash=pick(self.reply_hash),
            reply_len=pick(self.reply_len), graders={k: v[mask] for k, v in self.graders.items()},
            judged_by=self.judged_by, task_prompts=self.task_prompts, suites=self.suites, origin=pick(self.origin),
            origin_at=pick(self.origin_at), origin_files=self.origin_files,
            counts=None if self.counts is None else self.counts.subset(mask))

    @property
    def n_replies(self) -> int:
        """Rows whose reply was read (blank ones included)."""
        return 0 if self.reply_len is None else int((self.reply_len >= 0).sum())


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
              reward_read: bool, unknown_reasons: Mapping[str, int] | None = None,
              reply_hash: np.ndarray | None = None, reply_len: np.ndarray | None = None,
              graders: Mapping[str, np.ndarray] | None = None,
              task_prompts: list[str | None] | None = None) -> GradedRows:
    """GradedRows from finished columns (both readers end here), with the notes on fields not read."""
    notes = F.field_notes(keys, fields, reward_read=reward_read, model_read=bool((model >= 0).any())) if keys else []
    notes += F.reason_notes(unknown_reasons or {}, fields)
    replies = reply_len is not None and bool((reply_len != -1).any())
    judges = [k for k in keys if isinstance(k, str) and k in F.JUDGE_NAMES]
    return GradedRows(
        task=task, task_names=task_names, reward=reward, truncated=truncated, stated=stated,
        model=model, model_names=model_names, max_tokens=max_tokens, nan_reward=nan_reward,
        has_pairs=has_pairs, lines=lines, source=source, arm=arm if arm_names else None, arm_names=arm_names,
        tokens=tokens if len(tokens) and not np.isnan(tokens).all() else None, fields=dict(fields), notes=notes,
        suggested_fields=F.suggest(keys, fields, reward_read=reward_read),
        reply_hash=reply_hash if replies else None, reply_len=reply_len if replies else None,
        graders={k: v for k, v in (graders or {}).items() if not np.isnan(v).all()},
        judged_by={"reward": f"rows carry `{judges[0]}` (a judge's field)"} if judges else {},
        task_prompts=task_prompts if task_prompts and any(p is not None for p in task_prompts) else None)


def _recode(codes: np.ndarray, names: list[str], index: dict[str, int]) -> np.ndarray:
    """Codes into `names` -> codes into the shared `index` (grown as new names appear); -1 stays -1."""
    remap = np.array([index.setdefault(n, len(index)) for n in names] + [-1], dtype=np.int32)
    return remap[codes]  # code -1 picks the appended -1


def concat(parts: Sequence[GradedRows], *, source: str, read_from: str | list[str]) -> GradedRows:
    """Rows read from several files as one set: tasks, models and arms with the same name are the same (lm-eval's
    seeded runs of one task are rollouts of the same docs). Line numbers are dropped: they would name no file."""
    if len(parts) == 1:
        return replace(parts[0], read_from=read_from, _tables={})
    summaries = sum(p.counts is not None for p in parts)
    if summaries:  # a summary's entries are not rollouts: never pooled with rows of rollouts
        if summaries < len(parts):
            raise InputError(f"{source}: per-task summaries and rows of rollouts in one read; summarize the rows too "
                             f"(pick-a-method summarize), or pass them apart", field="rows")
        from .counts import concat_counts

        counts = concat_counts([p.counts for p in parts], source)
    tasks: dict[str, int] = {}
    models: dict[str, int] = {}
    arms: dict[str, int] = {}
    cols = [(_recode(p.task, p.task_names, tasks), _recode(p.model, p.model_names, models),
             _recode(p.arms, p.arm_names, arms)) for p in parts]
    cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    tokens = [p.tokens if p.tokens is not None else np.full(len(p), np.nan) for p in parts]
    any_tokens = any(p.tokens is not None for p in parts)
    replies = any(p.reply_len is not None for p in parts)
    graders = list(dict.fromkeys(name for p in parts for name in p.graders))
    column = lambda p, name, fill, dtype: (getattr(p, name) if getattr(p, name) is not None  # noqa: E731
                                           else np.full(len(p), fill, dtype=dtype))
    return GradedRows(
        task=np.concatenate([c[0] for c in cols]), task_names=list(tasks), reward=cat("reward"),
        truncated=cat("truncated"), stated=cat("stated"), model=np.concatenate([c[1] for c in cols]),
        model_names=list(models), max_tokens=cat("max_tokens"), nan_reward=cat("nan_reward"),
        has_pairs=any(p.has_pairs for p in parts), lines=None, source=source,
        arm=np.concatenate([c[2] for c in cols]) if arms else None, arm_names=list(arms),
        tokens=np.concatenate(tokens) if any_tokens else None, fields=parts[0].fields,
        notes=list(dict.fromkeys(n for p in parts for n in p.notes)),
        suggested_fields=parts[0].suggested_fields, read_from=read_from,
        formats=list(dict.fromkeys(f for p in parts for f in p.formats)),
        reply_hash=np.concatenate([column(p, "reply_hash", 0, np.int64) for p in parts]) if replies else None,
        reply_len=np.concatenate([column(p, "reply_len", -1, np.int32) for p in parts]) if replies else None,
        graders={g: np.concatenate([p.graders.get(g, np.full(len(p), np.nan)) for p in parts]) for g in graders},
        judged_by={k: v for p in parts for k, v in p.judged_by.items()},
        task_prompts=_prompts(parts, tasks), suites=list(dict.fromkeys(s for p in parts for s in p.suites)),
        origin=np.repeat(np.arange(len(parts), dtype=np.int32), [len(p) for p in parts]),
        origin_at=np.concatenate([p.lines if p.lines is not None else np.arange(len(p), dtype=np.int64)
                                  for p in parts]),
        origin_files=[(str(p.source), p.lines is not None) for p in parts], counts=counts if summaries else None)


def _prompts(parts: Sequence[GradedRows], tasks: dict[str, int]) -> list[str | None] | None:
    """The joined parts' task prompts, by task name (the first part that says one wins)."""
    if all(p.task_prompts is None for p in parts):
        return None
    out: list[str | None] = [None] * len(tasks)
    for p in parts:
        for name, key in zip(p.task_names, p.task_prompts or ()):
            if key is not None and out[tasks[name]] is None:
                out[tasks[name]] = key
    return out


def with_model(rows: GradedRows, name: str) -> GradedRows:
    """The rows, with `name` as the sampler of every row that names none (an eval tool's sidecar names the model
    once for the whole run)."""
    unnamed = rows.model < 0
    if not unnamed.any():
        return rows
    names = list(rows.model_names)
    code = names.index(name) if name in names else len(names)
    if code == len(names):
        names.append(name)
    return replace(rows, model=np.where(unnamed, np.int32(code), rows.model).astype(np.int32), model_names=names,
                   notes=[n for n in rows.notes if "names its sampler" not in n], _tables={})
