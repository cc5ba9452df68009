"""Follow a hint as a person would: the `name=value` assignments after "Fix:" (or in a note's advice), each one
alternative, with placeholders filled the way the person would fill them. Used by test_follow_hints.py."""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

from pick_a_method.trainers.prime_rl import prime_rl_config

ARGUMENTS = frozenset(inspect.signature(prime_rl_config).parameters) - {"out", "overwrite", "allowed_roots"}

# A placeholder in a hint -> what a person following it would put there.
FILL = {
    "<another taskset>": "gsm8k", "<machines>": 2, "<its split key>": "split", "<held-out split>": "test",
    "<the new table>": {"name": "second", "env": {"taskset": {"id": "gsm8k"}}},
    "<taskset>": "someone/their-taskset@0.1.2", "<teacher>": "Qwen/Qwen3-32B",
}
_OPEN, _CLOSE = "{[(<", "}])>"  # a <placeholder> may hold spaces


def _literal_end(text: str, start: int) -> int:
    """Where the Python literal that starts at `start` ends (brackets and quotes balanced)."""
    depth, quote, i = 0, None, start
    while i < len(text):
        c = text[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and (c in ",;" or c.isspace()):
            return i
        i += 1
    return i


def _fill(literal: str) -> str:
    for hole, value in FILL.items():
        literal = literal.replace(f"'{hole}'", repr(value)).replace(hole, repr(value))
    return literal


def assignments(hint: str) -> list[tuple[str, Any]]:
    """Every `name=literal` in the hint whose name is an argument of prime_rl_config, its placeholders filled."""
    found = []
    for m in re.finditer(r"(?<![\w.'\"])([a-z_]+)=", hint):
        if m[1] not in ARGUMENTS:
            continue
        end = _literal_end(hint, m.end())
        text = hint[m.end():end].rstrip(".")
        try:
            found.append((m[1], ast.literal_eval(_fill(text))))
        except (ValueError, SyntaxError):
            raise AssertionError(f"hint {hint!r}: {m[1]}={text!r} is not a value a person can type") from None
    return found


def fix_of(message: str) -> str:
    return message.split("Fix:", 1)[1] if "Fix:" in message else ""


def follow(kwargs: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """The call's arguments with one assignment applied (an `overrides` mapping merges into the call's own)."""
    out = dict(kwargs)
    if name == "overrides":
        out["overrides"] = {**(kwargs.get("overrides") or {}), **value}
    else:
        out[name] = value
    return out
