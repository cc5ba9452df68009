"""The caller's overrides: dotted prime-rl paths (its own CLI paths, with list indices such as
``orchestrator.train.source.0.env.taskset.dataset_split``) set on the built config before it is checked.

A table value merges into the table there, except where it names a ``type`` the table there does
not already have (a discriminated union such as ``trainer.loss``, ``trainer.scheduler`` or
``deployment``): then it replaces the table, since the old variant's keys are not keys of the new one. ``None`` deletes a key (TOML has no null).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from pick_a_method.common.dotted import get_path
from pick_a_method.common.methods import PRIME_RL, run_by

_MISSING = object()


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
                f"want instead (method={' / '.join(repr(m.name) for m in run_by(PRIME_RL))})."
            )
        _set_path(config, key.split("."), _plain(value, key), key)
        applied.append(key)
    return applied


def custom_loss(overrides: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The custom [trainer.loss] the overrides set (a table, or its dotted keys), else None: it carries an Async
    correction prime-rl has no loss for (plan.method_plan)."""
    if not isinstance(overrides, Mapping):
        return None
    table = overrides.get("trainer.loss")
    if isinstance(table, Mapping) and table.get("type") == "custom":
        return dict(table)
    if overrides.get("trainer.loss.type") == "custom":
        prefix = "trainer.loss."
        return {k[len(prefix):]: v for k, v in overrides.items() if isinstance(k, str) and k.startswith(prefix)}
    return None


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
            where = key[: len(key) - len(".".join(parts))].rstrip(".")  # the list's own dotted path
            raise ValueError(
                f"override {key!r}: {head!r} must be an index below {len(node)} into this list of tables. An override "
                f"changes the tables that are there; to add one, give the whole list. Fix: overrides={{{where!r}: "
                f"[{', '.join(map(repr, node))}, {{<the new table>}}]}}"
            )
        index = int(head)
        if rest:
            _set_path(node[index], rest, value, key)
        else:
            _put(node, index, value)
        return
    if not isinstance(node, dict):
        raise ValueError(f"override {key!r}: {head!r} is inside a value that is not a table")
    if not rest:
        _put(node, head, value)
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


def _put(node: dict[str, Any] | list[Any], key: Any, value: Any) -> None:
    """node[key] set as an override sets it (a list's index is checked already): None deletes it, a table merges
    into the table there, key by key alike, anything else replaces it."""
    old = node[key] if isinstance(node, list) else node.get(key)
    if value is None:
        if isinstance(node, list) or key in node:
            del node[key]
    elif _merges(old, value):
        for k, v in value.items():
            _put(old, k, v)
    else:
        node[key] = value


def knob_paths(honored: Mapping[str, str]) -> dict[str, list[str]]:
    """knob -> the dotted keys its `honored` entry names ('a.b, c.d (note)' -> ['a.b', 'c.d'])."""
    out = {}
    for knob, where in honored.items():
        head = where.split(" (", 1)[0]
        out[knob] = [p for p in re.split(r",\s*|\s+/\s+", head) if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)*", p)]
    return out


def snapshot(config: Mapping[str, Any], honored: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The value at each key a knob was written to, before the overrides (absent keys: a default, not checked)."""
    return {knob: {p: copy.deepcopy(v) for p in paths if (v := get_path(config, p, _MISSING)) is not _MISSING}
            for knob, paths in knob_paths(honored).items()}


def reconcile(config: Mapping[str, Any], before: Mapping[str, Mapping[str, Any]], overrides: Mapping[str, Any],
              honored: dict[str, str], ignored: dict[str, str], warnings: list[str]) -> None:
    """A knob whose key an override removed or changed is not honored: it moves to `ignored` with a warning, so
    `honored` is true to the file written."""
    for knob, values in before.items():
        if knob in overrides:  # the override's own entry ("(override, as given)"): honored by being the override
            continue
        for path, old in values.items():
            new = get_path(config, path, _MISSING)
            if new == old:
                continue
            key = next((k for k in overrides if k == path or path.startswith(k + ".") or k.startswith(path + ".")),
                       None)
            if key is None:
                continue
            gone = new is _MISSING
            how = (f"removed by overrides[{key!r}] = None" if gone and overrides[key] is None
                   else f"replaced by the override of {key}")
            honored.pop(knob, None)
            ignored[knob] = f"{how}: the file " + (f"has no {path}." if gone else f"holds {path} = {new!r}.")
            warnings.append(f"{knob} is not in the file: {ignored[knob]} Drop {knob} or the override.")
            break
