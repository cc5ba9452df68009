"""Argument-error wording: pure functions (no MCP import), shared by the server and the CLI."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .schemas import Checkpoint, Fields, KeyValue, Nodes, Row, Sampling, Trajectory, Usage, WandB

# --------------------------------------------------------------------------------------------------------------
# Argument errors
# --------------------------------------------------------------------------------------------------------------

_EXPECTED = {
    "string_type": "a string", "int_type": "a whole number", "int_parsing": "a whole number",
    "int_from_float": "a whole number", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "a list", "dict_type": "an object",
    "model_type": "an object", "model_attributes_type": "an object", "none_required": "null",
}
_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<=",
           "too_short": "at least", "too_long": "at most"}
_TAG = re.compile(r"[a-z_][a-z0-9_]*")
_TYPE_TAGS = {"str", "int", "float", "bool", "none", "list", "dict"}
_ITEM = {"rows": "row", "trajectories": "trajectory"}
_MODELS = {"rows": Row, "trajectories": Trajectory, "fields": Fields, "knobs": KeyValue, "overrides": KeyValue,
           "sampling": Sampling, "usage": Usage, "wandb": WandB, "checkpoint": Checkpoint, "gpus": Nodes,
           "nodes": Nodes}


def _path(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The argument path without pydantic's union-branch tags ('list[Row]', 'str', 'function-before[...]')."""
    return tuple(p for p in loc if isinstance(p, int) or (_TAG.fullmatch(p) and p not in _TYPE_TAGS))


def _where(path: tuple[Any, ...], names: Mapping[str, str]) -> str:
    arg, rest = names.get(str(path[0]), str(path[0])), path[1:]
    if rest and isinstance(rest[0], int):
        item = next((w for k, w in _ITEM.items() if arg.endswith(k)), "item")
        head, rest = f"{arg} {item} {rest[0]}", rest[1:]
        return f"{head}: {'.'.join(map(str, rest))}" if rest else head
    return ".".join(map(str, (arg, *rest)))


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int past 4,300 digits has no repr
        text = f"<an integer of {value.bit_length():,} bits>"
    text = text if len(text) <= 60 else text[:59] + "…"
    kind = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{text} ({kind})" if value is not None else "null"


def _expected(err: dict[str, Any]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _BOUNDS:
        bound = next((ctx[k] for k in ("gt", "ge", "lt", "le", "min_length", "max_length") if k in ctx), "?")
        return f"{_BOUNDS[kind]} {bound}" + (" items" if kind.startswith("too_") else "")
    if kind == "literal_error":
        return f"one of {ctx.get('expected', '?')}"
    return _EXPECTED.get(kind, err["msg"].lower())


def _either(options: Any) -> str:
    """"a, b or c", once each; a whole number is a number too; true or false reads as true/false."""
    seen = list(dict.fromkeys(o.replace("true or false", "true/false") for o in options))
    if "a number" in seen and "a whole number" in seen:
        seen.remove("a whole number")
    return seen[0] if len(seen) == 1 else ", ".join(seen[:-1]) + " or " + seen[-1]


def explain(error: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """One clause per wrong value: where, what was given, what is expected (no pydantic dump, no links). An
    argument model (`RouteArguments`) reads "bad argument: ..."; another model (a method's knobs) is named.
    `names`: what to call an argument instead of its name (the command line's flags)."""
    try:
        return _explain(error, names or {})
    except Exception:  # an error shape not foreseen: still a readable line, never a crash
        return f"{error.title}: " + "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}"
                                              for e in error.errors(include_url=False))


def _explain(error: ValidationError, names: Mapping[str, str]) -> str:
    errors = error.errors(include_url=False)
    by_path: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for err in errors:
        by_path.setdefault(_path(err["loc"]), []).append(err)
    # A union's other branches fail at the argument itself; when a deeper path failed, that is the real cause.
    paths = [p for p in by_path if not any(q != p and q[:len(p)] == p for q in by_path)]
    lines = []
    for path in paths[:5]:
        errs = by_path[path]
        if errs[0]["type"] == "extra_forbidden":
            arg, field = str(path[0]), str(path[-1])
            model = _MODELS.get(path[-2] if len(path) > 2 and isinstance(path[-2], str) else arg.rsplit("_", 1)[-1])
            said = unknown("field", field, list(model.model_fields)) if model else f"unknown field {field!r}"
            tail = ("; drop it, or send them as JSONL text (keeps every field) and map names with `fields`"
                    if arg.endswith(("rows", "trajectories")) else "")
            lines.append(f"{_where(path[:-1], names)}: {said}{tail}" if len(path) > 1 else said)
            continue
        if errs[0]["type"] == "missing":
            lines.append(f"{_where(path, names)} is required")
            continue
        if errs[0]["type"] in ("value_error", "assertion_error"):  # the model's own check: its message says it
            lines.append(f"{_where(path, names)}: {errs[0]['msg'].split(', ', 1)[-1]}")
            continue
        wanted = _either(_expected(e) for e in errs)
        lines.append(f"{_where(path, names)} is {_shown(errs[0]['input'])}; expected {wanted}")
    more = f" (and {len(paths) - 5} more)" if len(paths) > 5 else ""
    title = str(error.title)
    lead = f"bad argument{'s' if len(lines) > 1 else ''}" if title.endswith("Arguments") else title
    return f"{lead}: " + "; ".join(lines) + more


def unknown(kind: str, name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}"
