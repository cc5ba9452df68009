"""The tools' argument types, each strict-safe (OpenAI strict mode: every object closed, every field declared).

An open object (``dict[str, Any]``) cannot be converted to a strict schema, so each argument that used to be
one has a declared shape here: a graded row declares every field the router reads (the rest pass as JSONL
text), knobs and overrides are lists of ``{key, value}`` pairs, ``fields`` names the six canonical row
fields. Conversions back to what the core takes (dicts) live beside each type, so the tools stay a few lines.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, WithJsonSchema

from pick_a_method.common import dotted
from pick_a_method.common.errors import InputError
from pick_a_method.common.jsonl import JSONLineError, array_objects, is_array, objects
from pick_a_method.common.trainers import TRAINERS

from .declare import Cli, arg

CLOSED = ConfigDict(extra="forbid", protected_namespaces=(), title=None, defer_build=True)  # built on first use

Scalar = str | int | float | bool | None


# --------------------------------------------------------------------------------------------------------------
# Graded rows
# --------------------------------------------------------------------------------------------------------------

# Nested blocks declare what the router reads; their other keys (temperature, prompt_tokens, ...) are dropped.
NESTED = ConfigDict(extra="ignore", protected_namespaces=(), title=None, defer_build=True)


class Sampling(BaseModel):
    model_config = NESTED
    model: str | None = None
    max_tokens: int | None = None


class Usage(BaseModel):
    model_config = NESTED
    completion_tokens: int | None = None


Grade = float | bool | None


class Row(BaseModel):
    """One rollout; reward null = ungraded. Other fields: send JSONL text."""

    model_config = CLOSED
    task_id: str | int | None = None
    scenario_id: str | int | None = None
    prompt: str | None = None
    reward: Grade = None
    truncated: bool | None = None
    finish_reason: str | None = None
    model: str | None = None
    model_version: str | None = None
    sampling: Sampling | None = None
    checkpoint: str | None = None
    arm: str | None = None
    completion_tokens: int | None = None
    usage: Usage | None = None
    num_tokens: int | None = None
    response_length: int | None = None
    max_tokens: int | None = None
    chosen: str | None = None
    rejected: str | None = None
    preference_pairs: bool | None = None
    correct: Grade = None
    passed: Grade = None
    is_correct: Grade = None
    success: Grade = None
    score: float | None = None
    accuracy: float | None = None


def _one_object_is_one_line(value: Any) -> Any:
    # The SDK JSON-parses a string argument before validation: one line of JSONL arrives as an object.
    return json.dumps(value) if isinstance(value, Mapping) else value  # stdlib json: any integer


# What the listing shows for text: one type or null (Gemini CLI turns ["string", "null"] into a nullable string;
# OpenAI's strict mode needs the null to let an argument be left out).
TEXT = {"type": ["string", "null"]}
# Inline rows are listed as JSONL text, which keeps every field (a declared row object costs ~1.3k characters of
# listing); a list of row objects is still taken. route checks its row objects against the declared Row, so a
# misspelt field is named; the other tools take any object.
RowObjects = Annotated[list[Row] | str | None, BeforeValidator(_one_object_is_one_line), WithJsonSchema(TEXT)]
RowsText = Annotated[list[dict[str, Any]] | str | None, BeforeValidator(_one_object_is_one_line), WithJsonSchema(TEXT)]
# A file, a run folder or log, a glob; a list of them is taken too (the listing shows the one text a path is).
Paths = Annotated[str | list[str] | None, WithJsonSchema(TEXT)]


_FILE_ENDINGS = (".jsonl", ".jsonl.gz", ".ndjson", ".json", ".csv", ".parquet", ".pq", ".gz")


def parse_jsonl(text: str, what: str) -> list[dict[str, Any]]:
    """JSONL text (or a JSON array) -> row dicts (common/jsonl.py parses); a bad line is named like a bad row in a
    file, and a lone file name is pointed at the _path argument."""
    try:
        return [r for _, r in (array_objects(text) if is_array(text) else objects(text.splitlines()))]
    except JSONLineError as e:
        first = text.strip().splitlines()[0] if text.strip() else ""
        path = e.line == 1 and "{" not in first and first.endswith(_FILE_ENDINGS)
        hint = f"; for a file, pass it as {what}_path" if path else "; give one row object per line, or a list of them"
        raise InputError(f"{what} line {e.line}: {e.reason}{hint}", row=e.line - 1, field=what) from None


def row_dicts(rows: list[Row] | list[dict[str, Any]] | str, what: str) -> list[dict[str, Any]]:
    """What the router reads: a declared row's unset fields dropped (a null field reads as an absent one)."""
    if isinstance(rows, str):
        return parse_jsonl(rows, what)
    return [r.model_dump(exclude_none=True) if isinstance(r, Row) else r for r in rows]


# --------------------------------------------------------------------------------------------------------------
# Preview trajectories
# --------------------------------------------------------------------------------------------------------------

Floats = list[float] | None


class Trajectory(BaseModel):
    """One logged rollout; per-token lists as long as logprobs. For other fields send JSONL text."""

    model_config = CLOSED
    reward: float | bool
    logprobs: list[float]
    behavior_logprobs: Floats = None
    values: Floats = None
    teacher_logprobs: Floats = None
    action_mask: list[bool | int] | None = None
    group_id: str | int | None = None
    task_id: str | int | None = None
    agent: str | None = None
    staleness: int | None = None


# Listed as JSONL text (a declared trajectory is ~700 characters of listing); objects are still taken, and checked.
Trajectories = Annotated[list[Trajectory] | str | None, BeforeValidator(_one_object_is_one_line),
                         WithJsonSchema({"type": ["string", "null"]})]


def trajectory_dicts(trajectories: list[Trajectory] | str | None) -> list[dict[str, Any]] | None:
    if trajectories is None or not isinstance(trajectories, str):
        return None if trajectories is None else [t.model_dump(exclude_none=True) for t in trajectories]
    return parse_jsonl(trajectories, "trajectories")


# --------------------------------------------------------------------------------------------------------------
# fields, trainer
# --------------------------------------------------------------------------------------------------------------

def _field(flag: str, holds: str) -> Any:
    return arg(None, cli=Cli(flag=flag, metavar="NAME", help=f"the field that holds {holds}"))


class Fields(BaseModel):
    """Your field name for a canonical one, e.g. {"reward": "correct"}; a dotted path reaches into objects. On the
    command line each is its own flag (--reward-field correct)."""

    model_config = CLOSED
    task_id: str | None = _field("--task-field", "the task id")
    reward: str | None = _field("--reward-field", "the grade (a number or true/false)")
    truncated: str | None = _field("--truncated-field", "whether the reply was cut off")
    model: str | None = _field("--model-field", "the model that sampled the row")
    arm: str | None = _field("--arm-field", "the experiment arm")
    tokens: str | None = _field("--tokens-field", "the completion's token count")
    completion: str | None = _field("--completion-field", "the reply (the grader check reads it)")
    # not a field: finish reasons (comma-separated) that mean the reply was cut off
    cut_off: str | None = arg(None, cli=Cli(flag="--cut-off", metavar="WORDS", help=(
        "finish reasons (comma-separated) that mean the reply hit the token cap, beside length, max_tokens, "
        "model_length")))
    # not one field: other graders' fields (comma-separated), compared with the reward by question 0
    other_rewards: str | None = arg(None, cli=Cli(flag="--other-rewards", metavar="NAMES", help=(
        "other graders' fields of the same rollouts (comma-separated): question 0 measures their agreement")))


def field_map(fields: Fields | None) -> dict[str, str] | None:
    """The mapping the core takes (canonical -> the user's name), or None."""
    return fields.model_dump(exclude_none=True) or None if fields is not None else None


Trainer = Literal[tuple(TRAINERS)]  # type: ignore[valid-type]  # "prime-rl", "trl", "verl"


# --------------------------------------------------------------------------------------------------------------
# knobs and overrides: "key=value" strings (or {key, value} pairs, or an object)
# --------------------------------------------------------------------------------------------------------------

class KeyValue(BaseModel):
    model_config = CLOSED
    key: str
    value: Scalar | list[str | int | float | bool]


# The listing shows the shortest strict-safe shape, the one the command line's --knob takes: a list of
# "key=value" strings, the value read as JSON when it parses ("group_size=8", "ratio=[0.8, 2.0]", "x=null"),
# else as text ("teacher=Qwen/Qwen3-32B"). {key, value} pairs and an object {key: value} are taken as well.
PAIRS_SCHEMA = {"type": ["array", "null"], "items": {"type": "string"}}


def _one_string_is_one_pair(value: Any) -> Any:
    return [value] if isinstance(value, str) else value  # "group_size=8" for ["group_size=8"]


Pairs = Annotated[list[KeyValue | str] | dict[str, Any] | None, BeforeValidator(_one_string_is_one_pair),
                  WithJsonSchema(PAIRS_SCHEMA)]


def split_pair(text: str) -> tuple[str, Any] | None:
    """ "key=value" -> (key, value), the value read as JSON when it parses, else kept as text; None if no key."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        return None
    try:
        return key.strip(), json.loads(value)
    except (ValueError, RecursionError):
        return key.strip(), value


def pair_text(key: str, value: Any) -> str:
    """The inverse of split_pair: a value that would read back as something else is written as JSON."""
    if isinstance(value, str) and split_pair(f"k={value}") == ("k", value):
        return f"{key}={value}"
    return f"{key}={json.dumps(value, separators=(',', ':'), ensure_ascii=False)}"


def pairs_dict(pairs: list[KeyValue | str] | Mapping[str, Any] | None, *, nest: bool,
               what: str = "knobs") -> dict[str, Any] | None:
    """Pairs -> the dict the core takes. With `nest`, a dotted key sets a nested table (knobs:
    method.name=opd -> {"method": {"name": "opd"}}); without, dotted keys stay as they are (prime-rl paths)."""
    if pairs is None:
        return None
    if isinstance(pairs, Mapping):
        return dict(pairs)
    items = []
    for n, p in enumerate(pairs):
        item = (p.key, p.value) if isinstance(p, KeyValue) else split_pair(p)
        if item is None:
            raise InputError(f"{what} item {n}: {str(p)[:60]!r} is not key=value; write e.g. \"group_size=8\"",
                             field=what)
        items.append(item)
    return dotted.nest(items, dotted=nest)


def as_pairs(mapping: Mapping[str, Any], prefix: str = "") -> list[str]:
    """A dict -> the "key=value" strings a tool takes, a nested table flattened to dotted keys (the inverse of
    pairs_dict)."""
    out: list[str] = []
    for key, value in mapping.items():
        if isinstance(value, Mapping) and value:
            out.extend(as_pairs(value, f"{prefix}{key}."))
        else:
            out.append(pair_text(f"{prefix}{key}", list(value) if isinstance(value, tuple) else value))
    return out


def ready_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """A next_step's arguments in the shape the named tool's schema lists: knobs/overrides/fields as "key=value", a GPU
    split as its two arguments, and a method given as a table ({"name": "async", ...}) split into its name and
    knobs."""
    args = dict(arguments)
    method = args.get("method")
    if isinstance(method, Mapping) and isinstance(method.get("name"), str):
        knobs = {k: v for k, v in method.items() if k != "name"}
        args["method"] = method["name"]
        if knobs:
            args["knobs"] = {**knobs, **(args.get("knobs") or {})}
    for key in ("knobs", "overrides", "fields"):
        if isinstance(args.get(key), Mapping):
            args[key] = as_pairs(args[key])
    for key in ("gpus", "nodes"):  # a split: its two arguments (inference_gpus, trainer_gpus)
        if isinstance(args.get(key), Mapping):
            args.update({f"{side}_{key}": n for side, n in args.pop(key).items()})
    return args


# --------------------------------------------------------------------------------------------------------------
# prime_rl_config's run knobs: the tables it reads, declared
# --------------------------------------------------------------------------------------------------------------

class WandB(BaseModel):
    model_config = CLOSED
    project: str | None = None
    name: str | None = None
    entity: str | None = None
    offline: bool | None = None


class Checkpoint(BaseModel):
    model_config = CLOSED
    interval: int | None = None
    keep_last: int | None = None
    resume: bool | int | str | None = None


# Listed as "canonical=yours" strings, as knobs are (an object of eight nullable names cost ~400 characters on
# each of seven tools); an object {"reward": "correct"} is taken too, and either is checked against Fields.
FieldsArg = Annotated[Fields | None, BeforeValidator(lambda v: pairs_dict(v, nest=False, what="fields")
                                                     if isinstance(v, list) else v), WithJsonSchema(PAIRS_SCHEMA)]


def _pairs_are_a_table(value: Any) -> Any:
    # The command line's --wandb/--checkpoint KEY=VALUE words (and a client's pairs) -> the table, then checked.
    return pairs_dict(value, nest=False, what="table") if isinstance(value, list) else value


def _false_is_none(value: Any) -> Any:
    return False if value in (["false"], "false") else _pairs_are_a_table(value)  # ["false"]: no checkpoint


# Listed as "key=value" strings, as knobs are; an object is taken too.
WandBArg = Annotated[WandB | None, BeforeValidator(_pairs_are_a_table), WithJsonSchema(PAIRS_SCHEMA)]
CheckpointArg = Annotated[Checkpoint | Literal[False] | None, BeforeValidator(_false_is_none),
                          WithJsonSchema(PAIRS_SCHEMA)]


class Nodes(BaseModel):
    model_config = CLOSED
    inference: int | None = None
    trainer: int | None = None


# A count, listed as one: its split is given by two more arguments (inference_gpus and trainer_gpus), so the listing
# has no ["integer", "object", "null"] (a single-`type` dialect such as Gemini's has no word for it). The
# {inference, trainer} object is still taken.
Count = Annotated[int | Nodes | None, WithJsonSchema({"type": ["integer", "null"]})]


class Throughput(BaseModel):  # route's GPU split: both numbers, tokens per second per GPU
    model_config = CLOSED
    inference_tokens_per_s_per_gpu: float
    trainer_tokens_per_s_per_gpu: float


# A name ("cosine", "test"), or "key=value" for a table of one key; a list of pairs or an object is taken too.
# "key=value" alone is a table of one key (the command line's --eval-split split=test).
NameOrPairs = Annotated[str | list[KeyValue | str] | dict[str, Any] | None, WithJsonSchema(TEXT),
                        BeforeValidator(lambda v: [v] if isinstance(v, str) and "=" in v else v)]


def takes_pairs(field: Any) -> bool:
    """Whether a declared field takes KEY=VALUE pairs (Pairs, NameOrPairs): its list is the core's dict."""
    return any(KeyValue in typing.get_args(typing.get_args(arm)[0]) for arm in typing.get_args(field.annotation)
               if typing.get_origin(arm) is list)  # list[KeyValue | str]


def plain(value: Any, what: str = "value") -> Any:
    """A declared table -> the dict the core takes (unset keys left out); pairs -> a dict; anything else as is."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return pairs_dict(value, nest=False, what=what)
    return value
