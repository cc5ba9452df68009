"""SKILL.md as shipped in the package: read by the server's resource and prompt, and by `--print-skill`
(which must not import the MCP SDK)."""

from __future__ import annotations

import importlib.resources


def skill_text() -> str:
    return importlib.resources.files("pick_a_method.skill").joinpath("SKILL.md").read_text(encoding="utf-8")


def skill_description() -> str:
    for line in skill_text().splitlines()[1:]:
        if line.startswith("description:"):
            return line.split(":", 1)[1].strip()
    return "How to pick a post-training method from graded rows."
