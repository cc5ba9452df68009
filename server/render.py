"""A verdict as a person reads it on the command line: the answer, the summary, warnings, the next step, then
the evidence (`pick-a-method route FILE ...`; `--json` prints the whole verdict instead).

Nothing is cut: a note, a need, a reason is printed whole, one to a line; a table is printed key by key, a list of
flat tables (after's arms and guards) one table a line; what only a program reads (tables inside a table: the
prediction at each k, a fitted prior) is named and left to --json."""

from __future__ import annotations

import json
from typing import Any

def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _word(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(_rounded(value))


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _readable(value: Any) -> bool:
    """A value a person reads on a line or a few: a scalar, a list of scalars, a table of those."""
    if isinstance(value, list):
        return all(_scalar(v) for v in value)
    if isinstance(value, dict):
        return all(_scalar(v) or (isinstance(v, list) and all(_scalar(w) for w in v)) for v in value.values())
    return _scalar(value)


def _entry(table: dict[str, Any]) -> str:
    """A flat table on one line: `name before, pass_at_1 0.5, ci95 [0.3, 0.7]` (empty values left out)."""
    first = {"name": table["name"]} if "name" in table else {}  # what the line is about, first
    return ", ".join(f"{k} {_word(v)}" for k, v in {**first, **table}.items() if v not in (None, [], {}))


def _lines(key: str, value: Any, indent: str = "  ") -> list[str]:
    """`key: value` in words and in full: a list of texts one item a line, a table one key a line."""
    if value in (None, [], {}):
        return []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [f"{indent}{key}:", *(f"{indent}  - {v}" for v in value)]
    if isinstance(value, list) and _readable(value):
        return [f"{indent}{key}: {', '.join(_word(v) for v in value)}"]
    if isinstance(value, list) and all(isinstance(v, dict) and _readable(v) for v in value):  # after's arms, guards
        return [f"{indent}{key}:", *(f"{indent}  - {_entry(v)}" for v in value)]
    if isinstance(value, dict):
        lines = [f"{indent}{key}:"]
        kept = {k: v for k, v in value.items() if _readable(v)}
        for k, v in kept.items():
            lines += _lines(k, v, indent + "  ")
        left = [k for k, v in value.items() if k not in kept and v not in (None, [], {})]
        if left:
            lines.append(f"{indent}  ({', '.join(left)}: see --json)")
        return lines if len(lines) > 1 else []
    if isinstance(value, list):
        return [f"{indent}{key}: {len(value)} entries (see --json)"]
    return [f"{indent}{key}: {_word(value)}"]


def _step(label: str, step: dict[str, Any], command_line: Any) -> list[str]:
    """A next step (or an alternative) as the command that does it where there is one, else the call."""
    shell = command_line(step["tool"], step.get("arguments") or {}) if step.get("tool") and command_line else None
    if shell:
        lines = [f"{label}: {shell}", f"      {step.get('why', '')}"]
    elif step.get("tool"):
        lines = [f"{label}: {step['tool']}({json.dumps(step.get('arguments') or {})})  {step.get('why', '')}"]
    elif step.get("command"):
        lines = [f"{label}: run `{step['command']}`  {step.get('why', '')}"]
    elif step.get("why"):
        lines = [f"{label}: {step['why']}"]
    else:
        lines = []
    if step.get("needs"):
        lines.append(f"      fill in: {', '.join(step['needs'])}")
    return lines


def render(verdict: Any, command_line: Any = None) -> str:
    """A verdict as a person reads it: the answer, the summary, warnings, the next step, then the evidence.
    `command_line(tool, arguments)` gives the next step as a shell command where one says it (else the call)."""
    data = verdict.model_dump(mode="json")
    head = data.get("route") or data.get("verdict")
    lines = [f"{head}: {data.get('summary', '')}"]
    if data.get("methods"):
        lines.append(f"methods: {', '.join(data['methods'])}")
    for w in data.get("warnings") or []:
        lines.append(f"warning: {w}")
    lines += _step("next", data.get("next_step") or {}, command_line)
    for alternative in data.get("alternatives") or []:  # each one as the command too, not as a tool call's JSON
        lines += _step("or", alternative, command_line)
    for t in data.get("trace") or []:
        mark = "*" if t["decided"] else " "
        lines.append(f" {mark} Q{t['question']} {t['name']}: {t['answer']}  {json.dumps(_rounded(t['evidence']))}")
    for check in data.get("before_gpu") or []:
        lines.append(f"before the GPU: {check}")
    skip = {"verdict", "summary", "warnings", "next_step", "trace", "before_gpu", "methods", "route", "text",
            "config", "alternatives"}
    for key, value in data.items():
        if key not in skip:
            lines += _lines(key, value)
    if data.get("text") and not data.get("path"):  # a written config is on disk: the summary names the file
        lines.append(data["text"])
    return "\n".join(lines)
