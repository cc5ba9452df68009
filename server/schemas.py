"""The tools' argument types, each strict-safe (OpenAI strict mode: every object closed, every field declared).

An open object (``dict[str, Any]``) cannot be converted to a strict schema, so each argument that used to be
one has a declared shape here: a graded row declares every field the router reads (the rest pass as JSONL
text), ``fields`` names the six canonical row fields. Conversions back to what the core takes (dicts) live beside
each type, so the tools stay a few lines. The shapes the trainers' options take too (knobs and overrides as
key=value pairs, a GPU count or its split) are common/shapes.py's, named here as well.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, WithJsonSchema

from pick_a_method.common.errors import InputError
from pick_a_method.common.jsonl import JSONLineError, array_objects, is_array, objects
# The shapes the tools and the trainers' options share (common/shapes.py), and prime-rl's run tables: named here
# too, for the tools that read them from here (rows_tools.py, explain.py).
from pick_a_method.common.shapes import (CLOSED, PAIRS_SCHEMA, TEXT, KeyValue, Nodes, Pairs, Trainer,  # noqa: F401
                                         pairs_dict, plain, split_pair)
from pick_a_method.trainers.prime_rl.options import Checkpoint, WandB  # noqa: F401

from .declare import Cli, arg


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


# --------------------------------------------------------------------------------------------------------------
# A next step's arguments as the tool lists them: knobs and overrides as "key=value" strings (common/shapes.py
# reads them back)
# --------------------------------------------------------------------------------------------------------------

def pair_text(key: str, value: Any) -> str:
    """The inverse of split_pair: a value that would read back as something else is written as JSON."""
    if isinstance(value, str) and split_pair(f"k={value}") == ("k", value):
        return f"{key}={value}"
    return f"{key}={json.dumps(value, separators=(',', ':'), ensure_ascii=False)}"


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


# Listed as "canonical=yours" strings, as knobs are (an object of eight nullable names cost ~400 characters on
# each of seven tools); an object {"reward": "correct"} is taken too, and either is checked against Fields.
FieldsArg = Annotated[Fields | None, BeforeValidator(lambda v: pairs_dict(v, nest=False, what="fields")
                                                     if isinstance(v, list) else v), WithJsonSchema(PAIRS_SCHEMA)]
