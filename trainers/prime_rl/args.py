"""Checks of ``prime_rl_config``'s arguments: each bad value is a ``ValueError`` that names the argument
and the fix. Nothing here builds config tables."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pick_a_method.common.next_step import is_placeholder
from pick_a_method.common import methods as M
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.common.write import show
from pick_a_method.trainers.config_result import as_int
from pick_a_method.trainers.prime_rl.constants import TASKSET_ID


def check_model(model: Any) -> str:
    if not isinstance(model, str) or not model.strip():
        raise ValueError(
            "model is required: the Hugging Face id or local folder of the model to train, e.g. "
            "model='Qwen/Qwen3-8B' (prime-rl's [model] name)."
        )
    model = model.strip()
    if is_placeholder(model):
        raise ValueError(
            f"model {model!r} is a placeholder: replace it with the Hugging Face id or local folder of the model "
            "to train, e.g. 'Qwen/Qwen3-8B'."
        )
    if any(ord(c) < 32 or c == "\x7f" for c in model):
        raise ValueError(f"model must be one line of text (a Hugging Face id or a folder); got {model!r}")
    return model


def check_taskset(taskset: Any) -> str:
    if not isinstance(taskset, str) or not taskset.strip():
        raise ValueError(
            "taskset must be a verifiers taskset id such as 'reverse-text' or 'owner/name@version' "
            f"(prime-rl's env.taskset.id); got {taskset!r}"
        )
    text = taskset.strip()
    if is_placeholder(text):
        raise ValueError(
            f"taskset {text!r} is a placeholder: replace it with the id of the installed verifiers taskset to train "
            "on (prime-rl's env.taskset.id), e.g. 'reverse-text'."
        )
    if not TASKSET_ID.match(text):
        looks_like_path = "/" in text and (text.startswith((".", "/", "~")) or text.count("/") > 1)
        hint = (
            " prime-rl addresses tasksets by the id of an installed taskset package, not by a folder: install "
            "the package (uv pip install -e <folder>) and pass its id."
            if looks_like_path
            else " Use letters, digits, '.', '_' and '-' (optionally 'owner/name' and '@version')."
        )
        raise ValueError(f"taskset {text!r} is not a taskset id.{hint}")
    name = text.rsplit("/", 1)[-1].split("@", 1)[0]
    if "." in name:
        # verifiers a60a606 imports the name part as a module ('-' as '_'): a '.' makes it a submodule path it cannot
        # find (verifiers/v1/utils/loaders.py, _import_plugin; checked with prime-rl 559b44772's own loader).
        owner, slash, rest = text.rpartition("/")
        fixed = owner + slash + rest.replace(name, name.replace(".", "-"), 1)  # the name part only, not the owner
        raise ValueError(
            f"taskset {text!r}: the name part {name!r} holds a '.', and verifiers (the commit prime-rl pins) imports a "
            f"taskset as the module its name part names ({name.replace('-', '_').lower()!r}, a submodule path it "
            f"cannot import). Dots belong in the owner or the version. Fix: the id of the installed package, e.g. "
            f"{fixed!r}."
        )
    return text


def split_gpus(gpus: Any) -> tuple[int, int]:
    fix = (
        "prime-rl's `rl` runs vLLM inference and the trainer on separate GPUs, so it needs at least 2 "
        "(one each); pass gpus=2 or more, or gpus={'inference': n, 'trainer': m}."
    )
    if isinstance(gpus, Mapping):
        if set(gpus) - {"inference", "trainer"}:
            raise ValueError(f"gpus as a mapping takes exactly 'inference' and 'trainer'; got {dict(gpus)!r}. {fix}")
        missing = [side for side in ("inference", "trainer") if gpus.get(side) is None]
        if missing:
            given = {side: gpus[side] for side in ("inference", "trainer") if side not in missing}
            split = ", ".join(f"'{side}': {given.get(side, '<n>')}" for side in ("inference", "trainer"))
            raise ValueError(f"gpus: the {' and '.join(missing)} GPUs are missing; a split names both. Fix: "
                             f"gpus={{{split}}}, or gpus=<total> for an even split.")
        n_inf = as_int("gpus['inference']", gpus["inference"], 1, fix)
        n_tr = as_int("gpus['trainer']", gpus["trainer"], 1, fix)
        return n_inf, n_tr
    total = as_int("gpus", gpus, TRAINERS[M.PRIME_RL].gpus, fix)
    return total // 2, total - total // 2


def is_local_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def as_float(name: str, value: Any, *, gt: float, le: float, fix: str) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and value == value
    if not ok or not (gt < value <= le):
        raise ValueError(f"{name} must be a number in ({gt:g}, {le:g}]; got {show(value)}. {fix}")
    return float(value)


def check_mapping(name: str, value: Any, keys: tuple[str, ...], example: str) -> dict[str, Any]:
    """A JSON object argument with only the listed keys."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping with keys among {', '.join(keys)}, e.g. {example}; got {show(value)}")
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise ValueError(f"{name}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(keys)}, e.g. {example}")
    return dict(value)


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_name(name: str, value: Any, what: str) -> str:
    """A name that becomes a folder (run.name) or a label (a W&B project): letters, digits, . _ -."""
    if not isinstance(value, str) or not _NAME.match(value.strip()):
        raise ValueError(
            f"{name} must be a name of letters, digits, '.', '_' and '-' (it becomes {what}); got {show(value)}"
        )
    return value.strip()


def check_text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 or c == "\x7f" for c in value):
        raise ValueError(f"{name} must be one line of non-empty text; got {show(value)}")
    return value.strip()


def split_nodes(nodes: Any) -> tuple[int, int] | None:
    """(inference nodes, trainer nodes), or None for one node."""
    fix = ("nodes is the number of machines: an int (half run vLLM, the rest the trainer) or "
           "{'inference': n, 'trainer': m}; leave it out for one node.")
    if nodes is None:
        return None
    if isinstance(nodes, Mapping):
        if set(nodes) - {"inference", "trainer"}:
            raise ValueError(f"nodes as a mapping takes exactly 'inference' and 'trainer'; got {dict(nodes)!r}. {fix}")
        given = {k: v for k, v in nodes.items() if v is not None}
        if len(given) < 2:
            side = next(iter(given), None)
            other = "trainer" if side == "inference" else "inference"
            raise ValueError(
                f"nodes: the {other}'s machines are missing; a multi-node run names both. Fix: "
                + (f"nodes={{'inference': {given[side]}, 'trainer': <machines>}}" if side == "inference" else
                   f"nodes={{'inference': <machines>, 'trainer': {given[side]}}}" if side else "nodes=<machines>")
                + ", or leave nodes out for one node."
            )
        n_inf = as_int("nodes['inference']", nodes["inference"], 1, fix)
        n_tr = as_int("nodes['trainer']", nodes["trainer"], 1, fix)
        return n_inf, n_tr
    total = as_int("nodes", nodes, 1, fix)
    if total == 1:
        return None
    return total // 2, total - total // 2
