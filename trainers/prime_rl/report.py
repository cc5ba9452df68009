"""What ``prime_rl_config`` reports besides the config: the TOML text (checked to read back), the summary,
the next step, the version notes and what must exist where `rl` runs (``needs``)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any

import tomli_w

from pick_a_method.common.dotted import get_path
from pick_a_method.common.methods import OPSD, MethodInfo
from pick_a_method.common.next_step import NextStep
from pick_a_method.trainers.prime_rl import tasksets as T
from pick_a_method.trainers.prime_rl.constants import LAUNCH_ONLY_CHECKS, PRIME_RL_TAG, PRIME_RL_VERSION
from pick_a_method.trainers.prime_rl.renderers import RENDERERS_VERSION
from pick_a_method.trainers.prime_rl.schema import VERSION_NOTES


def needs(config: dict[str, Any], taskset: str, method: MethodInfo) -> list[str]:
    """What must exist where `rl` runs before the config can start: what the config names but does not hold (the
    taskset packages prime-rl imports, an OPD teacher's server, which `rl` never starts)."""
    ids = {get_path(s, "env.taskset.id") for part in ("train", "eval")
           for s in get_path(config, f"orchestrator.{part}.source", []) or []}
    needs = [f"the taskset package {i!r} installed where `rl` runs (prime-rl imports it to resolve env.taskset.id)"
             for i in sorted(x for x in ids if x)]
    if method.teacher:
        needs.append(f"the OPD teacher served at {get_path(config, 'orchestrator.algo.teacher.base_url')} "
                     "(`rl` does not start it)")
    return needs


def version_notes(config: dict[str, Any], taskset: str, method: MethodInfo) -> list[str]:
    """The version notes for the keys the config carries, and what to check on the GPU machine."""
    notes = [note for prefix, note in VERSION_NOTES if _has_prefix(config, prefix)]
    if re.search(r"-v1(@|$)", taskset):
        notes.append(
            f"{taskset!r} ends in '-v1', the naming prime-rl used before #3226: if it is a bundled taskset's old id, "
            "drop the suffix; a taskset package of your own with that id is fine."
        )
    if "renderer" not in config["orchestrator"]:
        notes.append(
            f"[orchestrator.renderer] is left at name='auto', which prime-rl resolves from the model name at config "
            f"time (#2540): {get_path(config, 'model.name')} is in the MODEL_RENDERER_MAP of renderers {RENDERERS_VERSION}."
        )
    notes.append(
        f"Checked against this package's copy of prime-rl's schema at {PRIME_RL_VERSION}; a TOML for this commit is "
        "rejected by v0.7.x and earlier, and later commits may rename keys. Validate on the GPU machine with "
        "`uv run rl @ <file> --dry-run --output-dir <scratch> --run.name check`."
    )
    if "inference" in config and get_path(config, "inference.vllm.max_model_len") is None:
        notes.append(
            f"inference.vllm.max_model_len is unset, so vLLM serves the model's full context while the trainer cuts "
            f"samples at seq_len {get_path(config, 'seq_len')}; pass max_model_len (and gpu_memory_utilization) to "
            "bound what vLLM holds."
        )
    if method is OPSD:
        notes.append(
            f"prime-rl looks up demo_key {config['orchestrator']['algo'].get('demo_key')!r} in each row's `info`, "
            "then as a top-level field; the taskset's rows must carry it."
        )
    return notes


def eval_not_held_out(config: dict[str, Any], taskset: str) -> str | None:
    """A warning when an eval source reads the tasks a train source trains on (the same env: taskset and split):
    its scores then measure training tasks, not the held-out ones route's advice says to freeze."""
    def tasks(source: Any) -> Any:  # the env with the split its taskset reads by default written out
        env = source.get("env") if isinstance(source, dict) else None
        if not isinstance(env, dict) or not isinstance(env.get("taskset"), dict):
            return env
        split = T.split_table(str(env["taskset"].get("id", "")))
        return env if split is None else {**env, "taskset": {split[0]: split[2], **env["taskset"]}}

    train = [tasks(s) for s in get_path(config, "orchestrator.train.source", []) or []]
    same = [tasks(s) for s in get_path(config, "orchestrator.eval.source", []) or [] if tasks(s) in train]
    if not same:
        return None
    split = T.split_table(taskset)
    where = f"{taskset}'s {same[0]['taskset'][split[0]]!r} split" if split else f"the {taskset} tasks"
    return (f"The eval block reads the tasks the run trains on ({where}): its scores are not held out, and route's "
            f"advice is to freeze held-out tasks. For a held-out eval, {T.eval_split_advice(taskset)}.")


_BOUND = re.compile(r"^([\w.]+): must (?:be (>=|>|<=|<) |not be (empty))")


def refusal(problems: list[str], overrides: bool) -> str:
    """The refusal of a config with problems, each said as what fails: prime-rl's loader, or (a value its classes
    take, constants.LAUNCH_ONLY_CHECKS) the tool that fails on it at launch."""
    later = {}
    for p in problems:
        m = _BOUND.match(p)
        tool = m and LAUNCH_ONLY_CHECKS.get(f"{m[1]} {m[2] or m[3]}")
        if tool:
            later[p] = tool
    parts = []
    loader = [p for p in problems if p not in later]
    if loader:
        parts.append(f"the config would not load in prime-rl {PRIME_RL_TAG}: " + "; ".join(loader))
    for tool in sorted(set(later.values())):
        mine = [p for p, t in later.items() if t == tool]
        parts.append(f"prime-rl {PRIME_RL_TAG} would load the config, but {tool} would fail on it at launch: "
                     + "; ".join(mine))
    return ". ".join(parts) + (". Fix the overrides or arguments named above." if overrides else ".")


def render(config: dict[str, Any], label: str, taskset: str, model: str, *, command: str) -> str:
    """The TOML text, under a two-line header, checked to read back as ``config``."""
    header = (
        f"# prime-rl `rl` config: {_one_line(label)} on taskset {_one_line(taskset)}, model {_one_line(model)}.\n"
        f"# Written by pick-a-method for prime-rl {PRIME_RL_VERSION}. Launch: {_one_line(command)}\n"
    )
    text = header + tomli_w.dumps(config)
    if tomllib.loads(text) != config:  # pragma: no cover - a TOML library bug would land here
        raise RuntimeError("the TOML written does not read back as the config built; refusing to use it")
    return text


def summary(
    config: dict[str, Any], label: str, taskset: str, model: str, *, steps: int, lora: bool, gpus: tuple[int, int],
    path: str | None, nodes: tuple[int, int] | None, file_name: str,
) -> str:
    """One sentence on what was built; batch and group are read from the final config, so overrides show."""
    group = get_path(config, "orchestrator.group_size", 1)
    batch = get_path(config, "orchestrator.batch_size")
    prompts = batch // group if isinstance(batch, int) and group else None
    shape = f"{steps} steps x {batch} rollouts ({prompts} prompts x {group})" if prompts else f"{steps} steps"
    where = f"Wrote {path}" if path else f"Built {file_name} (not written)"
    n_infer, n_train = gpus
    hardware = f"{n_infer} inference + {n_train} trainer GPU(s)"
    if nodes is not None:
        hardware += f" on {nodes[0]} + {nodes[1]} node(s) under SLURM"
    return f"{where}: prime-rl {label} on {taskset} for {model}, {shape}, {'LoRA' if lora else 'full weights'}, {hardware}."


def next_step(config: dict[str, Any], method: MethodInfo, command: str, *, path: str | None, file_name: str) -> NextStep:
    if path:
        why = "Run it from a prime-rl checkout at the targeted commit on the GPU machine."
    else:
        why = (
            f"Save `text` as {file_name} (or call prime_rl_config again with out=<path>), then run the command from "
            "a prime-rl checkout at the targeted commit on the GPU machine."
        )
    if method.teacher:
        why += f" Start the teacher server ({get_path(config, 'orchestrator.algo.teacher.base_url')}) first; `rl` does not."
    return NextStep(why=why, command=command)


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _has_prefix(config: Mapping[str, Any], dotted: str) -> bool:
    return get_path(config, dotted) is not None


