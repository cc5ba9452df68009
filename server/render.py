"""A verdict as a person reads it on the command line: the answer, the summary, warnings, the next step, then
the evidence (`pick-a-method route FILE ...`; `--json` prints the whole verdict instead)."""

from __future__ import annotations

import json
from typing import Any

VALUE_CHARS = 400  # an evidence value longer than this is cut, with an ellipsis (--json prints it whole)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _cut(text: str, limit: int = VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        if key not in skip and value not in (None, [], {}):
            shown = value if isinstance(value, str) else json.dumps(_rounded(value))
            lines.append(f"  {key}: {shown if key == 'command' else _cut(str(shown))}")  # a command is run whole
    if data.get("text") and not data.get("path"):  # a written config is on disk: the summary names the file
        lines.append(data["text"])
    return "\n".join(lines)
