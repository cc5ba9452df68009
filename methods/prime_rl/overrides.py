"""The caller's overrides: dotted prime-rl paths (its own CLI paths, with list indices such as
``orchestrator.train.source.0.env.taskset.dataset_split``) set on the built config before it is checked.

A table value merges into the table there, except where it names a ``type`` the table there does
not already have (a discriminated union such as ``trainer.loss``, ``trainer.scheduler`` or
``deployment``): then it replaces the table, since the old variant's keys are not keys of the new one. ``None`` deletes a key (TOML has no null).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

def apply_overrides(config: dict[str, Any], overrides: Mapping[str, Any]) -> list[str]:
    applied = []
    for key, value in overrides.items():
        if not isinstance(key, str) or not key.strip() or any(not p for p in key.split(".")):
            raise ValueError(
                f"override keys are dotted prime-rl paths such as 'orchestrator.renderer.name' or "
                f"'orchestrator.train.source.0.env.taskset.dataset_split'; got {key!r}"
            )
        if key in ("orchestrator.algo", "orchestrator.algo.type") or key.startswith("orchestrator.algo.type"):
            raise ValueError(
                f"override {key!r} would change the algorithm under the method's name; ask for the method you "
                "want instead (method='grpo' / 'max_rl' / 'rae' / 'opd' / 'opsd')."
            )
        _set_path(config, key.split("."), _plain(value, key), key)
        applied.append(key)
    return applied


def _plain(value: Any, key: str) -> Any:
    """A JSON-like copy of an override value (TOML has no null: None deletes the key)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v, key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    raise ValueError(f"override {key!r}: values must be strings, numbers, booleans, lists or tables; got {value!r}")


def _set_path(node: Any, parts: list[str], value: Any, key: str) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, list):
        if not head.isdigit() or int(head) >= len(node):
            raise ValueError(
                f"override {key!r}: {head!r} must be an index below {len(node)} into this list of tables"
            )
        index = int(head)
        if not rest:
            if value is None:
                del node[index]
            elif _merges(node[index], value):
                _merge(node[index], value)
            else:
                node[index] = value
            return
        _set_path(node[index], rest, value, key)
        return
    if not isinstance(node, dict):
        raise ValueError(f"override {key!r}: {head!r} is inside a value that is not a table")
    if not rest:
        if value is None:
            node.pop(head, None)
        elif _merges(node.get(head), value):
            _merge(node[head], value)
        else:
            node[head] = value
        return
    if head not in node:
        if value is None:
            return
        node[head] = [] if rest[0].isdigit() else {}
    _set_path(node[head], rest, value, key)


def _merges(old: Any, new: Any) -> bool:
    """A table merges into a table, unless it switches the variant of a union (a different `type`)."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    return "type" not in new or new["type"] == old.get("type")


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    for k, v in new.items():
        if v is None:
            into.pop(k, None)
        elif _merges(into.get(k), v):
            _merge(into[k], v)
        else:
            into[k] = v
