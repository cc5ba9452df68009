"""The shapes a tool's argument takes on the wire, shared by the tools' declarations (server/) and the trainers'
options models (trainers/*/options.py): key=value pairs, a count or its split, a name or a table. Each is
strict-safe (OpenAI strict mode: every object closed) and lists the shortest shape while taking the longer ones;
the conversion back to what the core takes (a dict) lives beside it. pydantic only: no MCP import.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, WithJsonSchema

from pick_a_method.common import dotted
from pick_a_method.common.errors import InputError
from pick_a_method.common.trainers import TRAINERS

CLOSED = ConfigDict(extra="forbid", protected_namespaces=(), title=None, defer_build=True)  # built on first use

Scalar = str | int | float | bool | None

# What the listing shows for text: one type or null (Gemini CLI turns ["string", "null"] into a nullable string;
# OpenAI's strict mode needs the null to let an argument be left out).
TEXT = {"type": ["string", "null"]}


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


def pairs_are_a_table(value: Any) -> Any:
    """The command line's KEY=VALUE words (and a client's pairs) -> the table, which the declared model then checks."""
    return pairs_dict(value, nest=False, what="table") if isinstance(value, list) else value


# --------------------------------------------------------------------------------------------------------------
# A count or its split; a name or a table
# --------------------------------------------------------------------------------------------------------------

class Nodes(BaseModel):
    model_config = CLOSED
    inference: int | None = None
    trainer: int | None = None


# A count, listed as one: its split is given by two more arguments (inference_gpus and trainer_gpus), so the listing
# has no ["integer", "object", "null"] (a single-`type` dialect such as Gemini's has no word for it). The
# {inference, trainer} object is still taken.
Count = Annotated[int | Nodes | None, WithJsonSchema({"type": ["integer", "null"]})]

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


# --------------------------------------------------------------------------------------------------------------
# route's: the trainer whose config tool its next step names, its GPU split's throughput, a path it writes
# --------------------------------------------------------------------------------------------------------------

Trainer = Literal[tuple(TRAINERS)]  # type: ignore[valid-type]  # "prime-rl", "trl", "verl"

# Both numbers or none, tokens per second per GPU. Listed as the object it is; taken as any value, so that route's
# own check (routing/forecasting/cost.py check_gpus) refuses a bad one with its fix.
THROUGHPUT_SCHEMA = {"type": ["object", "null"], "additionalProperties": False, "required": [
    "inference_tokens_per_s_per_gpu", "trainer_tokens_per_s_per_gpu"], "properties": {
    "inference_tokens_per_s_per_gpu": {"type": "number"}, "trainer_tokens_per_s_per_gpu": {"type": "number"}}}
ThroughputArg = Annotated[Any, WithJsonSchema(THROUGHPUT_SCHEMA)]

# A file to write: text on the wire, a str or a path from the library (the writer's own check refuses anything else).
PathArg = Annotated[Any, WithJsonSchema(TEXT)]
