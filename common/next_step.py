"""The next step every verdict and every config writer ends with: the call to make now, ready to send."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, field_validator


class Tool(StrEnum):
    """The tools, by name: what a next step calls and what the server serves (each tool's class in server/ is
    declared with its name from here), so the core names a tool without writing the server's words."""

    ROUTE = "route"
    TRUNCATED_PASSES = "truncated_passes"
    BAND = "band"
    PASS_AT = "pass_at"
    TEACHER_CLEARS = "teacher_clears"
    HOLDOUT_SIZE = "holdout_size"
    AFTER = "after"
    TRACK = "track"
    PREVIEW_UPDATE = "preview_update"
    PRIME_RL_CONFIG = "prime_rl_config"
    TRL_CONFIG = "trl_config"
    VERL_CONFIG = "verl_config"


class NextStep(BaseModel):
    """What to do now. Where it is a tool call, `tool` and `arguments` are ready to send."""

    tool: str | None = Field(None, description="The MCP tool to call next, or null when the step is not a call.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments for that tool, as it accepts them.")
    needs: list[str] = Field(default_factory=list,
                             description="Arguments the caller must fill in before calling (placeholders in `arguments`).")
    command: str | None = Field(None, description="A shell command to run, when the next step is one.")
    why: str = Field(description="Why this is the next step, in one sentence.")

    @field_validator("tool", mode="before")
    @classmethod
    def _plain(cls, tool: object) -> object:
        return str(tool) if isinstance(tool, Tool) else tool  # the name itself, as JSON and repr show it


# What an argument the caller must still fill in holds, the same word in every tool and command: the argument's
# own name in angle brackets (`taskset='<taskset>'`), listed in the step's `needs` by that name. The writers refuse
# a placeholder left in place, naming the argument.
def placeholder(argument: str) -> str:
    return f"<{argument}>"


def is_placeholder(text: object) -> bool:
    return isinstance(text, str) and text.startswith("<") and text.endswith(">")
