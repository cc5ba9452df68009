"""``trl_config``: the YAML that ``trl <grpo|dpo|sft|distillation> --config FILE`` reads, built for a method.

It checks the arguments, turns the method into TRL's terms (``plan.py``), sets the batch and launch keys,
applies the caller's overrides, renders the YAML, writes it when asked (the shared atomic, no-clobber write)
and returns it with which knobs TRL honors and where, which it ignores and why, warnings, what to fill in and
the launch command.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from pick_a_method.methods import defaults as D
from pick_a_method.trainers.config_result import (Target, TrainerConfig, apply_overrides, as_bool, check_text,
                                                   checked_run, next_step_why, to_yaml)
from pick_a_method.common.methods import GROUPWISE_GRADING, TRL
from pick_a_method.common.next_step import NextStep, is_placeholder, placeholder
from pick_a_method.trainers.trl import constants as C
from pick_a_method.trainers.options import options_of, takes
from pick_a_method.trainers.trl.options import TrlOptions
from pick_a_method.trainers.trl.plan import method_plan

# Keys whose override would change what the method is (the answer then is: ask for another method).
_SUFFIXES, _WHY = (".yaml", ".yml"), "the `trl` CLI reads a YAML file"
_METHOD_KEYS = ("loss_type", "scale_rewards", "num_generations", "beta", "teacher_model_name_or_path",
                "vllm_importance_sampling_mode")

# What each number of the run is to TRL: the fix its error names.
_MEANING = {"gpus": "gpus is the number of GPUs on each node.",
            "nodes": "nodes is the number of machines (each with `gpus` GPUs).",
            "steps": "steps is TRL's max_steps, the number of optimizer steps.",
            "batch": "batch is the number of completions (or examples) per optimizer step."}


@takes(TrlOptions)
def trl_config(method: Any, *, allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
               tokenizers_match: Any = None, **options: Any) -> TrainerConfig:
    """Write the YAML that ``trl <command> --config FILE`` reads (TRL 1.16.0's config classes).

    ``method`` and ``options`` are TrlOptions' fields (trainers/trl/options.py: the model, the dataset and reward
    functions, the GPUs a node and the nodes, steps, batch, LoRA, vLLM, knobs, overrides, out); a misspelt option is
    refused with the closest name. ``allowed_roots``: the folders ``out`` must resolve into. ``tokenizers_match``
    (opd): True/False, or check_tokenizers(teacher, model)'s result.

    Raises ``ValueError`` with the reason and the fix for a method TRL cannot run.
    """
    o = options_of(TrlOptions, "trl_config", {"method": method, **options})
    model, gpus, nodes, steps, batch, lora, overwrite, pairs, obj = checked_run(o, _MEANING)
    dataset = check_text("dataset", o.dataset, "a Hugging Face dataset id or a local dataset folder", required=False)
    vllm, funcs = as_bool("vllm", o.vllm), _reward_funcs(o.reward_funcs)
    plan, command, lr = method_plan(obj, model=model, lora=lora, vllm=vllm, tokenizers_match=tokenizers_match)

    processes = gpus * nodes
    per_device, accumulation = _split_batch(batch, processes, plan.keys.get("num_generations"),
                                            whole_groups_per_process=plan.whole_groups_per_process)
    # An argument still to fill in is written as <its name> and listed in `needs` under that name (what TRL's key
    # is, said once: `dataset` becomes dataset_name).
    config: dict[str, Any] = {"model_name_or_path": model, "dtype": "bfloat16",
                              "dataset_name": dataset or placeholder("dataset")}
    if dataset is None:
        plan.needs.insert(0, "dataset: the training dataset, a Hugging Face id or a local folder (TRL's dataset_name)")
    if command == C.GRPO_COMMAND:
        config["reward_funcs"] = funcs or [placeholder("reward_funcs")]
        if not funcs and not any(n.startswith("reward_funcs") for n in plan.needs):
            plan.needs.append("reward_funcs: your reward function as a dotted import path (it gets prompts, "
                              "completions and the dataset's columns, and returns one float per completion), or a "
                              "TRL reward name such as accuracy_reward")
    elif funcs:
        plan.warnings.append(f"reward_funcs apply to grpo only; trl {command} does not read them, so they were not used.")
    config.update(plan.keys)
    config.update(output_dir=f"outputs/{_slug(plan.label)}", max_steps=steps, learning_rate=lr,
                  per_device_train_batch_size=per_device, gradient_accumulation_steps=accumulation)
    if command in (C.GRPO_COMMAND, C.DISTILLATION_COMMAND) and vllm:
        config.update(use_vllm=True, vllm_mode="colocate")
        if "vllm_importance_sampling_correction" not in config and command == C.GRPO_COMMAND:
            # GRPOConfig turns a sequence-mask IS correction on with vLLM by default; the project's GRPO has none.
            config["vllm_importance_sampling_correction"] = False
            plan.notes.append("vllm_importance_sampling_correction false: TRL's default (a sequence mask at ratio 3) "
                              "is not part of the project's GRPO; use Async with icepop or tis for a correction.")
    elif command in (C.GRPO_COMMAND, C.DISTILLATION_COMMAND):
        plan.warnings.append("vllm=False: completions come from transformers' generate, several times slower than vLLM.")
    if lora:
        config.update(use_peft=True, lora_r=D.TRAINING_LORA_RANK, lora_alpha=D.TRAINING_LORA_ALPHA)
        plan.notes.append("LoRA targets PEFT's default modules for the architecture; set lora_target_modules to change them.")

    honored = dict(plan.honored)
    apply_overrides(config, pairs, _METHOD_KEYS, plan, honored)

    if command == C.GRPO_COMMAND:
        _generation_batch(config, processes, dict(pairs), plan.notes,
                          whole_groups_per_process=plan.whole_groups_per_process)
    plan.needs.extend(_imports_and_columns(command, config))
    target = Target.of(o.out, TRL, plan.label, suffixes=_SUFFIXES, why=_WHY, overwrite=overwrite,
                       allowed_roots=allowed_roots)
    file_name = target.file_name
    launch = _command(command, file_name, processes, nodes, gpus)
    if nodes > 1:
        plan.needs.append("MACHINE_RANK (0 on the main node, 1.. on the others) and MAIN_PROCESS_IP (the main node's "
                          "address) in the environment of every node, which all run the command")
    header = (f"# TRL `trl {command}` config: {_one_line(plan.label)} for {_one_line(model)}.\n"
              f"# Written by pick-a-method for TRL {C.TRL_VERSION}. Launch: {_one_line(launch)}\n")
    text = header + to_yaml(config)
    path = target.write(text)
    shape = (f"{steps} steps x {batch} completions ({batch // plan.keys['num_generations']} prompts x "
             f"{plan.keys['num_generations']})" if "num_generations" in plan.keys else f"{steps} steps x {batch} examples")
    where = f"Wrote {path}" if path else f"Built {file_name} (not written)"
    summary = (f"{where}: TRL {command} ({plan.label}) for {model}, {shape}, {'LoRA' if lora else 'full weights'}, "
               f"{processes} process(es) on {nodes} node(s).")
    # `needs` holds what to fill in (an argument still a placeholder), what to install and what to check; the next
    # step names the arguments to fill in only, and says which of the three there are.
    to_fill = [arg for arg, key in (("dataset", "dataset_name"), ("reward_funcs", "reward_funcs"))
               if any(map(is_placeholder, _values(config.get(key))))]
    why = next_step_why("trl_config", to_fill, file_name=file_name, written=bool(path),
                        check_columns=any(n.startswith("dataset columns:") for n in plan.needs),
                        run=f"run the command on the GPU machine with TRL {C.TRL_VERSION}")
    return TrainerConfig(
        verdict="written" if path else "ready", trainer="trl", trainer_version=C.TRL_VERSION, summary=summary,
        next_step=NextStep(command=launch, needs=to_fill, why=why),
        warnings=plan.warnings, path=path, text=text, config=config, method=plan.label, model=model,
        honored=honored, ignored=dict(plan.ignored), needs=plan.needs, command=launch, notes=plan.notes,
    )


def _values(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _reward_funcs(value: Any) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise ValueError(f"reward_funcs must be a name or a list of names (TRL rewards or dotted import paths); got {value!r}")
    out = []
    for item in items:
        text = check_text("reward_funcs", item, "a TRL reward name (accuracy_reward) or a dotted import path (my_module.my_reward)")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", text):
            raise ValueError(f"reward_funcs entry {text!r} is not a Python name or dotted import path")
        out.append(text)
    return out


def _generation_batch(config: dict[str, Any], processes: int, overrides: dict[str, Any], notes: list[str], *,
                      whole_groups_per_process: bool) -> None:
    """Write GRPO's generation batch from the final config, and check it there (after the overrides). The `trl`
    launcher parses the config once at world size 1 before `accelerate launch`, each process again at the real one;
    GRPOConfig derives the generation batch from the world size unless it is given, and the launcher's (per device
    x 1 x accumulation) need not hold whole groups. Given, it holds in both. Overrides that set it (or
    steps_per_generation, which TRL refuses beside it) win. ``whole_groups_per_process``: each process's slice of
    it (generation_batch_size / processes, GRPOConfig.__post_init__) must hold whole groups too."""
    per_device, accumulation = config["per_device_train_batch_size"], config.get("gradient_accumulation_steps", 1)
    group = config["num_generations"]
    given = [k for k in ("generation_batch_size", "steps_per_generation") if k in overrides]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
               for v in (per_device, accumulation, group, *(config.get(k) for k in given))):
        return  # an override of another type (or a deletion): TRL's own parse names it
    if "generation_batch_size" in given:
        generation = config["generation_batch_size"]
    else:
        steps = config["steps_per_generation"] if given else accumulation
        generation = per_device * processes * steps
    if generation % group:
        raise ValueError(f"overrides make a generation {per_device} per device x {processes} process(es) x "
                         f"{accumulation} accumulation = {generation} completions, not whole groups of {group}: TRL "
                         f"refuses it. Fix: per_device_train_batch_size and gradient_accumulation_steps whose product "
                         f"x {processes} is a multiple of {group}, or set generation_batch_size in overrides")
    if whole_groups_per_process and generation % (processes * group):
        _refuse_split_groups(generation, processes, group, per_device, given)
    if given:
        return
    config["generation_batch_size"] = generation
    notes.append(f"generation_batch_size {generation}: {per_device} per device x {processes} process(es) x "
                 f"{accumulation} accumulation, written out so that TRL's launcher (world size 1) and every process "
                 f"(world size {processes}) read the same whole groups.")


def _refuse_split_groups(generation: int, processes: int, group: int, per_device: int, given: list[str]) -> None:
    """groupwise_grading with a final config whose processes get part of a group: the run stops at its first step
    (GroupwiseGrading.shape gets a slice that does not split into groups). The fix names overrides that hold."""
    if "generation_batch_size" in given:  # a multiple of processes x group, and of the global batch (TRL's own rule)
        unit = math.lcm(processes * group, per_device * processes)
        low = generation // unit * unit
        fix = " or ".join(f"overrides={{'generation_batch_size': {n}}}" for n in (low, low + unit) if n)
    else:  # the slice is per_device x steps (accumulation, or steps_per_generation where given)
        steps = group // math.gcd(per_device, group)
        key = given[0] if given else "gradient_accumulation_steps"
        fix = (f"overrides={{'per_device_train_batch_size': {per_device}, {key!r}: {steps}}} ({per_device} x {steps} "
               f"= {per_device * steps} completions a process), or leave per_device_train_batch_size to the writer")
    raise ValueError(
        f"{GROUPWISE_GRADING}'s reward function sees one process's slice of each generation batch, and the overrides "
        f"make it {generation} completions / {processes} processes = {generation / processes:g}, not whole groups of "
        f"{group}: the run stops at its first step (GroupwiseGrading.shape cannot split the rewards into groups). "
        f"Fix: {fix}.")


def _imports_and_columns(command: str, config: Mapping[str, Any]) -> list[str]:
    """The `packages` need (TRL's extras for what the final config imports) and, for the RL commands, the
    `dataset columns` need (the prompt column and each named reward's own columns)."""
    extras = []
    if config.get("use_vllm"):
        extras.append(C.EXTRA_VLLM)
    if config.get("use_peft"):
        extras.append(C.EXTRA_PEFT)
    rewards = [r for r in config.get("reward_funcs") or [] if r in C.TRL_REWARDS] if command == C.GRPO_COMMAND else []
    for name in rewards:
        extras += [e for e in C.TRL_REWARDS[name][0] if e not in extras]
    spec = f"trl[{','.join(extras)}]=={C.TRL_VERSION}" if extras else f"trl=={C.TRL_VERSION}"
    why = "; ".join(filter(None, [
        "use_vllm: vLLM, a GPU install" if C.EXTRA_VLLM in extras else "",
        "use_peft imports peft" if C.EXTRA_PEFT in extras else "",
        f"{', '.join(r for r in rewards if C.TRL_REWARDS[r][0])} imports math_verify" if C.EXTRA_MATH_VERIFY in extras else "",
    ]))
    needs = [f"packages: pip install {shlex.quote(spec)} on every node" + (f" ({why})" if why else "")]
    if command in (C.GRPO_COMMAND, C.DISTILLATION_COMMAND):
        columns = [f"{C.PROMPT_COLUMN} (the prompts the {'GRPOTrainer' if command == C.GRPO_COMMAND else 'DistillationTrainer'} "
                   "samples from)"]
        for name in rewards:
            columns += [f"{col} (read by {name}" + (f": {C.COLUMN_HOLDS[col]})" if col in C.COLUMN_HOLDS else ")")
                        for col in C.TRL_REWARDS[name][1] if not any(c.startswith(col + " ") for c in columns)]
        needs.append(f"dataset columns: {', '.join(columns)}; a dataset with other names (openai/gsm8k has question "
                     "and answer) needs them renamed or mapped first")
    return needs


def _split_batch(batch: int, processes: int, group: int | None, *, whole_groups_per_process: bool) -> tuple[int, int]:
    """(per-device batch, gradient accumulation) with per_device x processes x accumulation == batch.

    ``whole_groups_per_process``: each process's share of the generation batch (a contiguous slice, TRL's
    RepeatSampler and the per-process dataloader) holds whole groups, for a reward function that sees groups."""
    if group is not None and batch % group:
        raise ValueError(f"batch ({batch}) must be a multiple of the group size ({group}): TRL's generation batch "
                         f"holds whole groups. Fix: {_nearest(batch, group)}.")
    if group is not None and whole_groups_per_process and batch % (group * processes):
        unit = group * processes
        fits = max(p for p in range(1, processes + 1) if (batch // group) % p == 0)
        raise ValueError(
            f"{GROUPWISE_GRADING}'s reward function sees one process's share of each generation batch ({batch} / "
            f"{processes} processes = {batch / processes:g} completions), which must hold whole groups of {group}: "
            f"batch must be a multiple of {processes} x {group} = {unit}. Fix: {_nearest(batch, unit)}, "
            f"or {fits} process(es) in all (gpus x nodes), or a smaller group_size.")
    if batch % processes:
        raise ValueError(f"batch ({batch}) must be divisible by the {processes} training processes (gpus x nodes): "
                         f"each process takes the same share. Fix: {_nearest(batch, processes)}.")
    share = batch // processes
    per_device = max(d for d in range(1, min(share, C.PER_DEVICE_BATCH_MAX) + 1) if share % d == 0)
    return per_device, share // per_device


def _nearest(batch: int, unit: int) -> str:
    """The multiples of ``unit`` nearest ``batch``, as the fix to print."""
    low = batch // unit * unit
    return f"batch={low} or batch={low + unit}" if low else f"batch={unit}"


def _command(command: str, file_name: str, processes: int, nodes: int, gpus: int) -> str:
    parts = ["trl", command, "--config", file_name]
    if processes > 1:
        parts += ["--accelerate_config", C.MULTI_GPU_ACCELERATE, "--num_processes", str(processes)]
    if nodes > 1:
        parts += ["--num_machines", str(nodes)]
    text = " ".join(shlex.quote(p) for p in parts)
    if nodes > 1:  # the environment variables must expand on each node
        text += f' --machine_rank "$MACHINE_RANK" --main_process_ip "$MAIN_PROCESS_IP" --main_process_port {C.MAIN_PROCESS_PORT}'
    return text


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "config"


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)
