"""Dotted paths into nested data, one way everywhere: a row's `traces.0.rewards.correct.score`, a config's
`orchestrator.algo.type`, a knob's `method.name`. A part that is a whole number indexes a list (-1 the last)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pick_a_method.common.errors import InputError

MISSING = object()


def is_index(part: str) -> bool:
    """A path part that indexes a list: 0, 1, ... or -1 for the last."""
    return part.lstrip("-").isdigit() and part.count("-") <= 1 and not part.endswith("-")


def get_path(node: Any, dotted: str, default: Any = None) -> Any:
    """The value at `dotted` in `node`, or `default` where a part is missing."""
    for part in dotted.split("."):
        if type(node) is dict or isinstance(node, Mapping):
            node = node.get(part, MISSING)
            if node is MISSING:
                return default
        elif type(node) is list and is_index(part) and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return default
    return node


def set_path(node: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `dotted` in `node` to `value`, making tables on the way; None deletes the key."""
    *parents, leaf = dotted.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is None:
                return
            child = node[part] = {}
        node = child
    if value is None:
        node.pop(leaf, None)
    else:
        node[leaf] = value


def nest(items: Iterable[tuple[str, Any]], *, dotted: bool = True) -> dict[str, Any]:
    """("method.name", "opd") pairs -> {"method": {"name": "opd"}}; with dotted=False the keys stay flat (a
    trainer's own dotted keys). A key given twice, or a table set to a value, is an InputError naming it."""
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            raise InputError(f"key {key!r} is given twice; give each key once", field=key)
        if not dotted or "." not in key:
            out[key] = value
            continue
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise InputError(f"key {key!r}: {part!r} is already set to a value, not a table", field=key)
        node[leaf] = value
    return out
