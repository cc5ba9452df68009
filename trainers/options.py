"""What the config writers take, declared once: `WriterOptions` holds the options every writer shares, and each
writer's own model (trainers/<trainer>/options.py) adds its own. From each model come the library call
(`prime_rl_config(taskset, method, **options)`: `options_of` takes the keyword arguments through it), the MCP
tool's schema and the command's flags (server/writer_tools.py derives each tool's arguments from the model and adds
only the command line's spelling and the server's own arguments).

Per field: its type, default and bounds; its `description` is what an agent reads in the tools' listing (kept
short: the listing has a budget, tests/server/test_agent_fit.py; a name that says it all has none); the docstring
under it is what a person reads. The defaults are common/trainers.py's (steps, batch, LoRA, each trainer's GPUs)
or the trainer's own, from its constants. pydantic and common/ only: the listing and `--help` import this, never a
writer.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from pick_a_method.common.errors import InputError
from pick_a_method.common.methods import run_by
from pick_a_method.common.shapes import Pairs
from pick_a_method.common.trainers import BATCH, LORA, STEPS, TRAINERS

# extra="forbid": a misspelt option is refused; defer_build: `--help` reads the fields and never validates.
OPTIONS = ConfigDict(extra="forbid", frozen=True, protected_namespaces=(), defer_build=True)

O = TypeVar("O", bound="WriterOptions")
F = TypeVar("F", bound=Callable[..., Any])


def methods_of(trainer: str) -> str:
    """The methods `trainer`'s writer writes, from the one table: "grpo, max_rl, rae, opd, opsd or async"."""
    names = [m.name for m in run_by(trainer)]
    corrections = TRAINERS[trainer].corrections
    names = [f"async ({' or '.join(corrections)})" if n == "async" and len(corrections) > 1 else n for n in names]
    return ", ".join(names[:-1]) + " or " + names[-1]


class WriterOptions(BaseModel):
    """What every config writer takes: the model, the method's knobs, the run's length and batch, LoRA, the caller's
    overrides and a safe `out`. Each writer's model adds `method` (its description names the methods it runs)."""

    model_config = OPTIONS

    model: str
    """The Hugging Face id or folder of the model to train (required)."""
    knobs: Pairs = None
    """The method's knobs when `method` is a name, e.g. {"group_size": 8} (key=value strings are taken too; a
    dotted key nests: "method.name=opd"); a method object carries its own."""
    out: str | None = None
    """Where to write the config (atomically; never over an existing file unless `overwrite`); a str or a path.
    Left out, nothing is written and the text comes back."""
    overwrite: bool = False
    steps: int = Field(STEPS, ge=1)
    """Optimizer steps: the trainer's max_steps (prime-rl, TRL) or total_training_steps (verl)."""
    batch: int = Field(BATCH, ge=1, description="Rollouts or examples a step")
    """Rollouts a step (prompts x group size), or examples a step for TRL's sft and dpo; a multiple of the group."""
    lora: bool = LORA
    """Train a LoRA adapter (rank and alpha from methods/defaults.py) instead of the full weights."""
    overrides: Pairs = None
    """The trainer's own keys, set after the config is built (dotted for prime-rl and verl), e.g.
    {"trainer.optim.weight_decay": 0.0}; a None value deletes the key. A mapping, or key=value strings."""


def options_of(options: type[O], writer: str, given: dict[str, Any]) -> O:
    """`writer`'s options from its keyword arguments. A name the model does not declare is refused with the closest
    one, as route refuses a misspelt option. The values are the writer's to check, each refusal with its fix (a
    whole number >= 1, a model id on one line, a GPU split that adds up), so they are kept as given; a required one
    left out is None, which the writer refuses by name."""
    unknown = [name for name in given if name not in options.model_fields]
    if unknown:
        close = difflib.get_close_matches(unknown[0], options.model_fields, n=1)
        raise InputError(f"{writer} takes no option {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; its options: {', '.join(options.model_fields)}", field=unknown[0])
    required = {name: None for name, field in options.model_fields.items() if field.is_required()}
    return options.model_construct(**{**required, **given})


def takes(options: type[WriterOptions]) -> Callable[[F], F]:
    """A writer's signature as help() and inspect show it: its `**options` spelt out as the options model's fields,
    each a keyword with its default (a required one None: the writer names it), between its positional parameters
    and its own keywords. The function itself is returned unchanged."""
    def mark(writer: F) -> F:
        signature = inspect.signature(writer)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        spelt = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=field.annotation,
                                   default=None if field.is_required() else field.default)
                 for name, field in options.model_fields.items() if name not in signature.parameters]
        positional = [p for p in own if p.kind is not p.KEYWORD_ONLY]
        writer.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=positional + spelt + [p for p in own if p.kind is p.KEYWORD_ONLY])
        return writer
    return mark
