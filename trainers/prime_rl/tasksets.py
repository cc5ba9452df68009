"""What the writer knows about a taskset id, and the source tables it writes for one.

verifiers a60a606 (the commit prime-rl 559b44772 pins) imports a taskset by the name part of its id,
'-' read as '_' and lower-cased (verifiers/v1/utils/loaders.py, ``_import_plugin``:
``plugin_id.rsplit("/", 1)[-1].split("@", 1)[0]``): ``owner/name@version`` and ``name`` import the
same module, so the bundled tasksets' tables are looked up by that module.

prime-rl writes one env-server file per source, named after the source's ``name``, else its id
(``write_subconfigs``: ``env_dir / f"{source.resolved_name}.json"``, src/prime_rl/entrypoints/rl.py
line 110, under ``configs/envs/<train|eval>/`` from line 102; ``resolved_name`` is ``name or env_id``,
packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py line 146). A ``/`` in that name is a
folder that does not exist (``FileNotFoundError``), so every source gets a name that is one plain file
name: the id's name part, de-duplicated within its list; the id itself stays in ``env.taskset.id``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from pick_a_method.trainers.prime_rl.constants import (
    AGENT_HARNESS_ID,
    AGENT_RUNTIME_TYPE,
    MULTI_AGENT_SEATS,
    TASKSET_KEYS,
    TASKSET_SPLITS,
)

# One path component on Linux filesystems (NAME_MAX, bytes); the env-server file adds ".json".
FILE_NAME_MAX = 255
ENV_FILE_SUFFIX = ".json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
HOLD_OUT_DROP = "or drop the eval with overrides={'orchestrator.eval': None}"


def name_part(taskset: str) -> str:
    """The id without owner and version: what verifiers imports, and the source's file name."""
    return taskset.rsplit("/", 1)[-1].split("@", 1)[0]


def module_name(taskset: str) -> str:
    return name_part(taskset).replace("-", "_").lower()


def bundled(taskset: str) -> str | None:
    """The bundled taskset (constants.TASKSET_KEYS) that verifiers imports for this id, if any."""
    module = module_name(taskset)
    return next((name for name in TASKSET_KEYS if module_name(name) == module), None)


def split_table(taskset: str) -> tuple[str, tuple[str, ...] | None, str] | None:
    """(split key, the splits it accepts or None for any, its default) of a bundled taskset with a split key."""
    return TASKSET_SPLITS.get(bundled(taskset) or "")


def taskset_keys(taskset: str) -> dict[str, tuple[str, ...] | None] | None:
    return TASKSET_KEYS.get(bundled(taskset) or "")


def seats(taskset: str) -> tuple[str, ...] | None:
    """The seats of a bundled multi-agent taskset (env.player0, ...), else None (one env.agent seat)."""
    return MULTI_AGENT_SEATS.get(bundled(taskset) or "")


def label(text: Any) -> str:
    """A value as part of a file name: runs of other characters become '-'."""
    return _UNSAFE.sub("-", str(text)).strip("-.") or "split"


def source(taskset: str, suffix: str | None = None) -> dict[str, Any]:
    """A fresh source table, seats included (an override of one source must not change another), named after the
    id's name part (plus `suffix`, e.g. the eval split) so that prime-rl can write its env-server file."""
    name = name_part(taskset)
    name = "agg-taskset" if name == "agg" else name  # "agg" is reserved (configs/orchestrator.py, validate_env)
    if suffix:
        name = f"{name}-{label(suffix)}"
    env = {"taskset": {"id": taskset},
           **{seat: {"harness": {"id": AGENT_HARNESS_ID}, "runtime": {"type": AGENT_RUNTIME_TYPE}}
              for seat in seats(taskset) or ("agent",)}}
    return {"name": name, "env": copy.deepcopy(env)}


def file_name_problem(name: Any) -> str | None:
    """Why prime-rl's write_subconfigs cannot write `<name>.json` as one file in its envs folder (None: it can)."""
    if not isinstance(name, str) or not name:
        return "is empty"
    if "/" in name or "\\" in name or "\0" in name:
        return "holds a '/' (or '\\' or NUL), which makes it a path, not a file name"
    if name in (".", ".."):
        return "is '.' or '..'"
    if len((name + ENV_FILE_SUFFIX).encode()) > FILE_NAME_MAX:
        return f"is longer than a file name may be ({FILE_NAME_MAX} bytes with {ENV_FILE_SUFFIX!r})"
    return None


def resolved_name(src: dict[str, Any]) -> Any:
    """prime-rl's EnvConfig.resolved_name: the name, else env_id (verifiers configs/env.py: `<env id>+<taskset id>`)."""
    env = src.get("env", {}) if isinstance(src.get("env"), dict) else {}
    taskset = env.get("taskset", {}) if isinstance(env.get("taskset"), dict) else {}
    env_id = "+".join(x for x in (env.get("id"), taskset.get("id")) if isinstance(x, str) and x)
    return src.get("name") or env_id


def name_sources(config: dict[str, Any]) -> list[str]:
    """Give every source without a name (one an override added) its id's name part, unique within its list; returns
    a note for each name given."""
    notes = []
    orch = config.get("orchestrator", {})
    for part in ("train", "eval"):
        sources = orch.get(part, {}).get("source") if isinstance(orch.get(part), dict) else None
        if not isinstance(sources, list):
            continue
        taken = {s.get("name") for s in sources if isinstance(s, dict) and s.get("name")}
        for i, src in enumerate(sources):
            if not isinstance(src, dict) or src.get("name") or file_name_problem(resolved_name(src)) is None:
                continue
            env_id = resolved_name(src)
            if not env_id:
                continue
            base = label(name_part(str(env_id)))
            name, n = base, 2
            while name in taken:
                name, n = f"{base}-{n}", n + 1
            src["name"] = name
            taken.add(name)
            notes.append(f"orchestrator.{part}.source.{i} is named {name!r}: prime-rl writes each source's env-server "
                         f"file under its name, and its id {env_id!r} is not a file name.")
    return notes


def file_name_problems(config: dict[str, Any]) -> list[str]:
    """The write_subconfigs rule: each source's resolved name is one file name (see the module docstring)."""
    problems = []
    for part in ("train", "eval"):
        part_table = config.get("orchestrator", {}).get(part)
        for i, src in enumerate(part_table.get("source", []) if isinstance(part_table, dict) else []):
            if not isinstance(src, dict):
                continue
            why = file_name_problem(resolved_name(src))
            if why is not None:
                problems.append(
                    f"orchestrator.{part}.source.{i}.name: {resolved_name(src)!r} {why}; prime-rl's write_subconfigs "
                    f"(run by `rl`, also with --dry-run) writes configs/envs/{part}/<name>.json and fails. Fix: set "
                    f"orchestrator.{part}.source.{i}.name = {label(name_part(str(resolved_name(src)))[:200])!r}"
                )
    return problems


def eval_split_advice(taskset: str) -> str:
    """How to make the eval held out for this taskset, from the writer's own tables (so following it loads)."""
    name, split, keys = name_part(taskset), split_table(taskset), taskset_keys(taskset)
    if split is not None:
        key, allowed, default = split
        held_out = [s for s in (allowed or ("test",)) if s != "train"]
        if held_out:
            return (f"pass eval_split={held_out[0]!r} ({name}'s split key is {key!r}"
                    + (", any split its dataset has" if allowed is None else "") + f") and/or eval_taskset, "
                    f"{HOLD_OUT_DROP}")
        return (f"pass eval_taskset=<another taskset> ({name} has only the {', '.join(allowed or (default,))} "
                f"split), {HOLD_OUT_DROP}")
    if keys is not None:
        return (f"pass eval_taskset=<another taskset> ({name} has no split key: its tasks are not read from a "
                f"dataset split), {HOLD_OUT_DROP}")
    return (f"pass eval_split={{'<its split key>': '<held-out split>'}} (the taskset names its own split key) "
            f"and/or eval_taskset, {HOLD_OUT_DROP}")
