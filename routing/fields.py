"""Which row field means what: the row-field contract (README.md, "The rows, as they come").

Every reader resolves the same canonical names through this module: `task_id`, `reward`, `truncated`,
`model`, `arm`, `tokens`, `completion` (the reply, which question 0 reads as a hash and a length). A caller's `fields` mapping (canonical name -> the user's field name, a dotted
path such as `sampling.model` reaching into nested objects) replaces the native names for that field.
Grades and samplers under names the router does not read are named in `field_notes`, never ignored in
silence.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pick_a_method.common import dotted
from pick_a_method.common.errors import InputError

# Native names, first present wins (a null counts as absent). The anchor SDK writes the sampler as
# `model_version` or `sampling.model`; eval exports often write `checkpoint`.
NATIVE: dict[str, tuple[str, ...]] = {
    "task_id": ("task_id", "scenario_id", "prompt"),
    "reward": ("reward",),
    "truncated": ("truncated", "is_truncated"),  # and a cut-off finish reason (FINISH_REASONS), read beside it
    "model": ("model", "model_version", "sampling.model", "checkpoint"),
    "arm": ("arm",),
    "tokens": ("completion_tokens", "usage.completion_tokens", "num_tokens", "response_length"),
    # the reply: a string, or a list of chat messages (its last assistant message; readers/replies.py)
    "completion": ("completion", "response", "output"),
}
# The task's prompt (readers/prompts.py), read from a task's first row only: `after` pairs runs on it where their
# task ids do not meet. Not a mapped field: lm-eval's reader puts the logged prompt under `_prompt`, inspect-ai's
# samples carry `input`, verifiers' rows and plain rows `prompt`.
PROMPT = ("prompt", "input", "_prompt")
CANONICAL = tuple(NATIVE)
# Where rows say why the reply ended; a mapped `truncated` field may hold these words too.
FINISH_REASONS = ("finish_reason", "stop_reason")
FINISH_REASON = FINISH_REASONS[0]
# What each API calls a reply cut at the token cap (compared casefolded): OpenAI and vLLM `length`, Anthropic and
# inspect-ai `max_tokens`, inspect-ai `model_length`, Gemini `MAX_TOKENS`, OpenAI's Responses API
# `max_output_tokens`. And the words for a reply that ended by itself (or was stopped for another reason).
CUT_OFF_WORDS = frozenset({"length", "max_tokens", "model_length", "max_output_tokens"})
ENDED_WORDS = frozenset({"stop", "eos", "end_turn", "stop_sequence", "tool_calls", "tool_use", "function_call",
                         "content_filter", "safety", "recitation", "refusal", "pause_turn", "abort", "finish_reason_stop"})
UNSTATED_WORDS = frozenset({"unknown", "none", "null", ""})  # the tool says it does not know
# `fields` keys that are options rather than field names: `cut_off` lists finish reasons (comma-separated) that
# mean the reply was cut off, for a tool whose word is not in CUT_OFF_WORDS; `other_rewards` lists fields
# (comma-separated) where other graders graded the same rollouts, which question 0 compares with the reward.
OPTIONS = ("cut_off", "other_rewards")
# Fields that say a model graded the row (a judge's name or its raw verdict): verifiers' JudgeRubric keeps its
# answers in the rollout state as `judge_response` (saved with vf-eval's state columns).
JUDGE_NAMES = ("judge", "judge_model", "grader_model", "judge_response", "judge_name")

# Grades graders write under other names: boolean verdicts and scores. Read only when mapped (a score in
# [0, 1] passes only at reward >= pass_threshold, so reading one silently would change what "pass" means).
GRADE_NAMES = ("correct", "is_correct", "passed", "pass", "success", "solved", "score", "accuracy", "acc")
# Fields that may name the sampler but are not read without a mapping (a step number, a version tag).
SAMPLER_NAMES = ("model_name", "model_id", "model_path", "policy_version", "policy", "sampler", "generator",
                 "checkpoint_step")

Fields = Mapping[str, str] | None


def check_fields(fields: Fields) -> dict[str, str]:
    """The caller's mapping, checked: known canonical names, non-empty string values."""
    if fields is None:
        return {}
    if not isinstance(fields, Mapping):
        raise InputError(f"fields is a {type(fields).__name__}; give an object mapping a canonical name to your "
                         f"field, e.g. {{\"reward\": \"correct\"}}", field="fields")
    out = {}
    for key, value in fields.items():
        if key not in NATIVE and key not in OPTIONS:
            raise InputError(f"fields names {key!r}; the names it maps are {', '.join(CANONICAL)} (and cut_off: "
                             f"finish reasons that mean a cut-off; other_rewards: other graders' fields)",
                             field="fields")
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"fields[{key!r}] is {value!r}; give the name of your field as a string (a dotted "
                             f"path such as 'sampling.model' reaches into nested objects)", field="fields")
        out[key] = value.strip()
    return out


def candidates(name: str, fields: Mapping[str, str]) -> tuple[str, ...]:
    """The field names read for canonical `name`, first present wins."""
    return (fields[name],) if name in fields else NATIVE[name]


def cut_off_words(fields: Mapping[str, str]) -> frozenset[str]:
    """CUT_OFF_WORDS plus the caller's own (`fields={"cut_off": "word, other"}`), casefolded."""
    extra = fields.get("cut_off", "")
    return CUT_OFF_WORDS | {w.strip().casefold() for w in extra.split(",") if w.strip()}


def other_rewards(fields: Mapping[str, str]) -> list[str]:
    """The fields other graders graded the same rollouts in (`fields={"other_rewards": "judge, rubric.pass"}`)."""
    return [p.strip() for p in fields.get("other_rewards", "").split(",") if p.strip()]


def used_heads(fields: Mapping[str, str]) -> set[str]:
    """The top-level keys the caller's mapping reads (each of other_rewards' fields too; cut_off names no field)."""
    return {head(v) for k, v in fields.items() if k not in OPTIONS} | {head(p) for p in other_rewards(fields)}


def reason_kind(word: str, cut: frozenset[str]) -> bool | None | str:
    """True: cut off; False: ended by itself; None: the tool does not know; the word itself: a word not known."""
    w = word.strip().casefold()
    if w in cut:
        return True
    if w in ENDED_WORDS:
        return False
    if w in UNSTATED_WORDS:
        return None
    return word


def get_path(row: dict[str, Any], path: str) -> Any:
    """row[path], or the nested value along a dotted path when no top-level key has that name (CSV and
    flattened Parquet keep 'sampling.model' as one column name). A numeric part indexes a list
    (`traces.0.rewards.correct.score`; -1 is the last item)."""
    if path in row:
        return row[path]
    return dotted.get_path(row, path) if "." in path else None


def head(path: str) -> str:
    """The top-level key a path starts at."""
    return path.split(".", 1)[0]


def close_to(wanted: Sequence[str], have: Iterable[str]) -> list[str]:
    have = [h for h in have if isinstance(h, str)]
    return sorted({m for w in wanted for m in difflib.get_close_matches(w, have, n=1, cutoff=0.75)})


def hint(wanted: Sequence[str], have: Iterable[str]) -> str:
    close = close_to(wanted, have)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def argument(name: str, value: str, fields: Mapping[str, str]) -> str:
    """The exact `fields` argument that reads `value` as canonical `name`, keeping the caller's other keys."""
    mapping = {**fields, name: value}
    inner = ", ".join(f'"{k}": "{v}"' for k, v in mapping.items())
    return f"fields={{{inner}}}"


def field_notes(keys: Iterable[str], fields: Mapping[str, str], *, reward_read: bool, model_read: bool) -> list[str]:
    """Warnings about grades and samplers the rows carry under names that were not read."""
    keys = [k for k in keys if isinstance(k, str)]
    used = used_heads(fields)
    notes = []
    grades = [k for k in keys if k.casefold() in GRADE_NAMES and k not in used]
    if not reward_read:
        reward = fields.get("reward", "reward")
        if grades:
            for g in grades:
                notes.append(f"no row has a `{reward}` field, but rows carry `{g}` (a grade?): pass "
                             f"{argument('reward', g, fields)} to read it (true/false count as 1/0; a score passes "
                             f"at reward >= pass_threshold)")
        else:
            near = close_to((reward,), keys)
            if near:
                notes.append(f"no row has a `{reward}` field (did you mean {', '.join(repr(c) for c in near)}?): pass "
                             f"{argument('reward', near[0], fields)} to read it")
            else:
                notes.append(f"no row has a `{reward}` field (fields seen: {', '.join(keys[:12]) or 'none'}); "
                             f"pass fields={{\"reward\": \"<your grade field>\"}} to read yours")
    else:
        for g in grades:
            notes.append(f"rows also carry `{g}`, which is not read (the router reads "
                         f"`{fields.get('reward', 'reward')}`); pass {argument('reward', g, fields)} to read it instead")
    if not model_read:
        for s in (k for k in keys if k in SAMPLER_NAMES and k not in used):
            notes.append(f"no row names its sampler in {' / '.join(candidates('model', fields))}, but rows carry "
                         f"`{s}`: pass {argument('model', s, fields)} if it names the model that sampled each row")
    return notes


def suggest(keys: Iterable[str], fields: Mapping[str, str], *, reward_read: bool) -> dict[str, str]:
    """The `fields` argument to try when no reward was read but a grade-like field is there ({} otherwise)."""
    if reward_read:
        return {}
    used = used_heads(fields)
    grades = [k for k in keys if isinstance(k, str) and k.casefold() in GRADE_NAMES and k not in used]
    return {**fields, "reward": grades[0]} if grades else {}


def reason_notes(unknown: Mapping[str, int], fields: Mapping[str, str]) -> list[str]:
    """A warning naming finish reasons that are not known words: those rows count as not saying whether they were
    cut off (never as 'not cut off'), and the argument that reads a word as a cut-off."""
    if not unknown:
        return []
    shown = ", ".join(f"{w!r} ({n} rows)" for w, n in sorted(unknown.items(), key=lambda kv: -kv[1])[:6])
    word = max(unknown, key=unknown.get)
    mapping = {**fields, "cut_off": ", ".join(filter(None, [fields.get("cut_off", ""), word]))}
    inner = ", ".join(f'"{k}": "{v}"' for k, v in mapping.items())
    return [f"finish reasons not known as a cut-off or a stop: {shown}; those rows count as not saying whether they "
            f"were cut off. If {word!r} means the reply hit the token cap, pass fields={{{inner}}}"]
