"""The next step every verdict and every config writer ends with: the call to make now, ready to send."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class NextStep(BaseModel):
    """What to do now. Where it is a tool call, `tool` and `arguments` are ready to send."""

    tool: str | None = Field(None, description="The MCP tool to call next, or null when the step is not a call.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments for that tool, as it accepts them.")
    needs: list[str] = Field(default_factory=list,
                             description="Arguments the caller must fill in before calling (placeholders in `arguments`).")
    command: str | None = Field(None, description="A shell command to run, when the next step is one.")
    why: str = Field(description="Why this is the next step, in one sentence.")
