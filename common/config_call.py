"""The call a route ends with when it names a method: the config writer of the trainer the caller named, or of one
that runs the method where that trainer does not (common/methods.py says which trainers run what), filled in with
what the route knows and a file to write, so that making exactly this call writes the config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pick_a_method.common.methods import METHODS, method_info
from pick_a_method.common.next_step import NextStep, placeholder
from pick_a_method.common.trainers import TRAINERS, Trainer


def config_call(trainer: Trainer, method: str, *, taskset: str | None, model: str | None, why: str,
                knobs: dict[str, Any] | None = None, needs: list[str] | None = None,
                batch: int | None = None) -> NextStep:
    """The config writer's call for `method` (a table name; Async's inner in `knobs["method"]`). A trainer that does
    not run the method hands it to the first that does, and a correction the trainer lacks becomes its own default,
    each said in `why`."""
    info = METHODS[method]
    if trainer.name not in info.trainers:
        other = TRAINERS[info.trainers[0]]
        why = f"{trainer.label} has no {info.label}: {other.label} writes it. {why}"
        trainer = other
    knobs = dict(knobs) if knobs else None
    wanted = (knobs or {}).get("correction")
    if wanted is not None and wanted not in trainer.corrections:
        knobs["correction"] = trainer.corrections[0]
        why += (f" ({trainer.name} has no {wanted}; {trainer.corrections[0]}, its own default, truncates the "
                f"importance ratio.)")
    needs = list(needs or [])
    args: dict[str, Any] = {"method": method}
    data = trainer.data if info.rule else trainer.supervised_data
    if "taskset" in data:  # prime-rl: the taskset is the first argument; TRL and verl take data files later
        args = {"taskset": taskset or placeholder("taskset"), **args}
        needs += [] if taskset else ["taskset"]
    else:
        needs += list(data)
    args["model"] = model or placeholder("model")
    needs += [] if model else ["model"]
    if knobs:
        args["knobs"] = knobs
    if batch:  # rollouts per step, the same argument for every trainer's writer
        args["batch"] = batch
    args["out"] = trainer.out_name(_full_name(method, knobs))
    return NextStep(tool=trainer.tool, arguments=args, needs=needs, why=why)


def _full_name(method: str, knobs: Mapping[str, Any] | None) -> str:
    """"async grpo" for Async around GRPO (its inner given by name or as a table), else the method's name."""
    inner = (knobs or {}).get("method")
    inner = inner.get("name") if isinstance(inner, Mapping) else inner
    return f"{method} {method_info(inner)[0].name}" if isinstance(inner, str) else method
