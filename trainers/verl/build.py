"""``verl_config``: the Hydra overrides (and the same as a YAML file) for ``python -m verl.trainer.main_ppo``.

It checks the arguments, turns the method into verl's keys (``plan.py``), sets data, batch, model, LoRA and
cluster keys (``trainer.nnodes`` / ``n_gpus_per_node``; verl runs on Ray, one command on the head node),
applies the caller's overrides, and returns the overrides, the YAML (a primary config whose defaults are verl's
packaged ``ppo_trainer``), what verl honors and ignores, what to fill in and the launch command.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pick_a_method.methods import defaults as D
from pick_a_method.trainers.config_result import (Target, TrainerConfig, apply_overrides, as_int, check_text,
                                                   checked_run, next_step_why, to_yaml, yaml_scalar)
from pick_a_method.common.next_step import is_placeholder, placeholder
from pick_a_method.common.methods import VERL
from pick_a_method.trainers.options import options_of, takes
from pick_a_method.trainers.verl.constants import (ACTOR, DISTILL, ROLLOUT, TEACHER_INFERENCE, TEACHER_REPLICA_SIZES,
                                                  VERL_VERSION)
from pick_a_method.trainers.verl.options import VerlOptions
from pick_a_method.trainers.verl.plan import method_plan
from pick_a_method.common.dotted import set_path
from pick_a_method.common.next_step import NextStep

# Per-GPU micro-batches (memory knobs, not method knobs; verl requires one for the actor, rollout and ref).
MICRO_BATCH_PER_GPU = 4
# The primary config the YAML form extends: verl's packaged trainer config.
SEARCHPATH = "pkg://verl.trainer.config"
ENTRY = "python -m verl.trainer.main_ppo"
_SUFFIXES, _WHY = (".yaml",), "Hydra reads <name>.yaml from --config-path"
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_/.-]*")  # Hydra reads these unquoted as the same string
_METHOD_KEYS = ("algorithm.adv_estimator", f"{ACTOR}.loss_agg_mode", f"{ACTOR}.policy_loss.loss_mode",
                "algorithm.norm_adv_by_std_in_grpo", f"{ROLLOUT}.n")

# What each number of the run is to verl: the fix its error names.
_MEANING = {"gpus": "gpus is trainer.n_gpus_per_node.", "nodes": "nodes is trainer.nnodes (Ray nodes).",
            "steps": "steps is trainer.total_training_steps.",
            "batch": "batch is the number of rollouts per step (prompts x group size)."}


@takes(VerlOptions)
def verl_config(method: Any, *, allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
                tokenizers_match: Any = None, **options: Any) -> TrainerConfig:
    """The overrides and YAML for verl 0.9.1's ``main_ppo``, for grpo, async grpo (tis or icepop) and opd.

    ``method`` and ``options`` are VerlOptions' fields (trainers/verl/options.py: the model, the parquet files, the
    reward function, the GPUs a node, the nodes and opd's teacher GPUs, steps, batch, LoRA, knobs, overrides, out);
    a misspelt option is refused with the closest name. ``allowed_roots``: the folders ``out`` must resolve into
    (the command then points Hydra at it). ``tokenizers_match`` (opd): True/False, or check_tokenizers' result.
    """
    o = options_of(VerlOptions, "verl_config", {"method": method, **options})
    model, gpus, nodes, steps, batch, lora, overwrite, pairs, obj = checked_run(o, _MEANING)
    teacher_gpus = as_int("teacher_gpus", o.teacher_gpus, 1, "teacher_gpus is opd's teacher pool (distillation.n_gpus_per_node).")
    reward_function = _reward_function(o.reward_function)
    train, val = _files("train_files", o.train_files), _files("val_files", o.val_files)
    plan, lr = method_plan(obj, model=model, tokenizers_match=tokenizers_match, teacher_gpus=teacher_gpus, lora=lora)

    group = plan.keys[f"{ROLLOUT}.n"]
    prompts = _prompts_per_step(batch, group, gpus * nodes)
    keys: dict[str, Any] = {
        "actor_rollout_ref.model.path": model,
        **plan.keys,
        f"{ACTOR}.optim.lr": lr,
        f"{ACTOR}.ppo_mini_batch_size": prompts,  # one update per batch: on-policy
        f"{ACTOR}.ppo_micro_batch_size_per_gpu": MICRO_BATCH_PER_GPU,
        f"{ROLLOUT}.name": "vllm",
        f"{ROLLOUT}.tensor_model_parallel_size": 1,
        f"{ROLLOUT}.log_prob_micro_batch_size_per_gpu": MICRO_BATCH_PER_GPU,
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": MICRO_BATCH_PER_GPU,
        "data.train_files": train or placeholder("train_files"),
        "data.val_files": val or placeholder("val_files"),
        "data.train_batch_size": prompts,
        "data.max_prompt_length": D.PRIME_RL_PROMPT_TOKENS,
        "trainer.nnodes": nodes,
        "trainer.n_gpus_per_node": gpus,
        "trainer.total_training_steps": steps,
        "trainer.logger": ["console"],
        "trainer.project_name": "pick-a-method",
        "trainer.experiment_name": _slug(f"{plan.label}-{model.rsplit('/', 1)[-1]}"),
    }
    plan.notes.append(f"rollout tensor_model_parallel_size 1 and micro-batches of {MICRO_BATCH_PER_GPU} per GPU are "
                      "memory settings: raise the parallel size for a model that does not fit one GPU.")
    # An argument still to fill in is written as <its name> and listed in `needs` under that name (verl's key, said
    # once); the data arguments are common.trainers' for verl: train_files, val_files, reward_function.
    if train is None:
        plan.needs.insert(0, "train_files: verl RL parquet files (data.train_files; columns prompt as a chat list, "
                             "data_source, reward_model.ground_truth), e.g. from verl's examples/data_preprocess scripts")
    if val is None:
        plan.needs.insert(1 if train is None else 0, "val_files: held-out parquet files in the same format "
                                                     "(data.val_files: verl's dataloader reads them to validate)")
    if reward_function:
        path, name = reward_function.rsplit(":", 1)
        keys.update({"reward.custom_reward_function.path": path, "reward.custom_reward_function.name": name})
    elif not obj.info.teacher:  # OPD trains on the teacher signal alone (use_task_rewards false)
        plan.needs.append("reward_function (optional): without it verl scores each row with its built-in scorer for "
                          "the row's data_source (gsm8k, math, ...); for your own grader pass "
                          "reward_function='reward.py:compute_score'")
    if lora:
        keys.update({"actor_rollout_ref.model.lora_rank": D.TRAINING_LORA_RANK,
                     "actor_rollout_ref.model.lora_alpha": D.TRAINING_LORA_ALPHA,
                     f"{ROLLOUT}.load_format": "safetensors"})
        plan.notes.append("LoRA on all linear layers (verl's target_modules default); vLLM loads the base weights "
                          "(load_format safetensors) and receives the adapter.")

    honored = dict(plan.honored)
    apply_overrides(keys, pairs, _METHOD_KEYS, plan, honored)

    _check_teacher_pool(keys, dict(pairs))
    overrides_list = [f"{k}={_hydra_value(v)}" for k, v in keys.items()]
    nested: dict[str, Any] = {}
    for k, v in keys.items():
        set_path(nested, k, v)
    document = {"hydra": {"searchpath": [SEARCHPATH]}, "defaults": ["ppo_trainer", "_self_"], **nested}
    # Hydra reads <name>.yaml from --config-path, which must be absolute (a relative one is read beside main_ppo.py).
    target = Target.of(o.out, VERL, plan.label, suffixes=_SUFFIXES, why=_WHY, overwrite=overwrite,
                       allowed_roots=allowed_roots)
    file_name = target.file_name
    folder = shlex.quote(str(target.path.parent)) if target.path else '"$PWD"'
    command = f"{ENTRY} --config-path {folder} --config-name {shlex.quote(Path(file_name).stem)}"
    header = (f"# verl main_ppo config: {_one_line(plan.label)} for {_one_line(model)}. Written by pick-a-method for "
              f"verl {VERL_VERSION}.\n# Launch: {_one_line(command)}\n")
    text = header + to_yaml(document)
    path = target.write(text)
    plan.needs.append(_packages(keys))
    if nodes > 1:
        plan.needs.append(f"a Ray cluster of {nodes} nodes (ray start --head on one, ray start --address=<head>:6379 on "
                          "the others); run the command on the head node only")
    where = f"Wrote {path}" if path else f"Built {file_name} (not written)"
    summary = (f"{where}: verl {plan.label} for {model}, {steps} steps x {prompts * group} rollouts ({prompts} prompts "
               f"x {group}), {'LoRA' if lora else 'full weights'}, {nodes} node(s) x {gpus} GPU(s).")
    # The next step names the arguments still to fill in (placeholders in the text) and tells them from the install.
    to_fill = [arg for arg in ("train_files", "val_files") if is_placeholder(keys.get(f"data.{arg}"))]
    why = next_step_why("verl_config", to_fill, file_name=f"{file_name} in the folder you run it from",
                        written=bool(path), check_columns=False,
                        run=f"run the command with verl {VERL_VERSION} (it starts Ray; `overrides` holds the same "
                            "config as command-line overrides)")
    return TrainerConfig(
        verdict="written" if path else "ready", trainer="verl", trainer_version=VERL_VERSION, summary=summary,
        next_step=NextStep(command=command, needs=to_fill, why=why),
        warnings=plan.warnings, path=path, text=text, config=document, method=plan.label, model=model,
        honored=honored, ignored=dict(plan.ignored), needs=plan.needs, command=command, notes=plan.notes,
        overrides=overrides_list,
    )


def _prompts_per_step(batch: int, group: int, total_gpus: int) -> int:
    if batch % group:
        low = batch // group * group
        raise ValueError(f"batch ({batch}) must be a multiple of the group size ({group}): verl samples "
                         f"data.train_batch_size prompts x rollout.n. Fix: batch={low or group} or batch={low + group}.")
    if batch % total_gpus:
        raise ValueError(f"batch ({batch} rollouts) must be divisible by the {total_gpus} GPUs (gpus x nodes): verl "
                         "splits a step's rollouts evenly. Fix: a batch that is a multiple of both the group size and "
                         f"{total_gpus}, e.g. batch={_lcm(group, total_gpus) * max(1, batch // _lcm(group, total_gpus))}.")
    return batch // group


def _packages(keys: Mapping[str, Any]) -> str:
    """The install the command needs: verl's extra for the rollout engine written (verl-0.9.1.dist-info METADATA:
    `vllm` / `sglang` pull `verl-core`, which has TransferQueue for the v1 trainer, Ray, and peft for LoRA)."""
    engine = keys.get(f"{ROLLOUT}.name", "vllm")
    spec = f"verl[{engine}]=={VERL_VERSION}" if engine in ("vllm", "sglang") else f"verl[verl-core]=={VERL_VERSION}"
    return (f"packages: pip install {shlex.quote(spec)} on every node (the {engine} rollout; verl-core brings Ray, "
            "TransferQueue for the v1 trainer and peft for LoRA)")


def _check_teacher_pool(keys: Mapping[str, Any], overrides: Mapping[str, Any]) -> None:
    """verl splits the teacher pool into whole inference replicas (DistillationConfig refuses the rest); checked on
    the final keys, so an override of the replica's parallel sizes or of the pool counts counts, and the fix names
    what set the pool: teacher_gpus, or the override of its per-node count or nodes."""
    if not keys.get(f"{DISTILL}.enabled"):
        return
    sizes = {k: keys.get(f"{TEACHER_INFERENCE}.{k}", v) for k, v in TEACHER_REPLICA_SIZES.items()}
    per_node, nodes = keys.get(f"{DISTILL}.n_gpus_per_node"), keys.get(f"{DISTILL}.nnodes")
    if not all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in (*sizes.values(), per_node, nodes)):
        return  # an override of another type: verl's own check reports it
    replica, pool = math.prod(sizes.values()), per_node * nodes
    if pool % replica == 0:
        return
    step = replica // math.gcd(replica, nodes)  # per-node counts whose pool over `nodes` holds whole replicas
    low = per_node // step * step
    counts = [c for c in (low, low + step) if c]
    pooled = {f"{DISTILL}.n_gpus_per_node", f"{DISTILL}.nnodes"} & set(overrides)
    if pooled:
        what = f"the teacher pool ({per_node} GPU(s) x {nodes} node(s), set by overrides of {', '.join(sorted(pooled))})"
        fix = " or ".join(f"overrides={{'{DISTILL}.n_gpus_per_node': {c}}}" for c in counts)
    else:
        what = f"teacher_gpus ({per_node})" + (f" x {nodes} nodes = {pool}" if nodes > 1 else "")
        fix = " or ".join(f"teacher_gpus={c}" for c in counts)
    raise ValueError(
        f"{what} must be a multiple of the teacher's replica size, {replica} GPU(s) (tensor x data x pipeline "
        f"parallel {' x '.join(map(str, sizes.values()))}, verl's defaults unless overridden): verl splits the teacher "
        f"pool into whole replicas. Fix: {fix}, or a teacher that fits one GPU with overrides="
        f"{{'{TEACHER_INFERENCE}.tensor_model_parallel_size': 1}}.")


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def _files(name: str, value: Any) -> str | list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return check_text(name, value, "a parquet file path, e.g. ~/data/train.parquet")
    if isinstance(value, (list, tuple)) and value:
        return [check_text(name, v, "a parquet file path") for v in value]
    raise ValueError(f"{name} must be a parquet path or a list of them; got {value!r}")


def _reward_function(value: Any) -> str | None:
    text = check_text("reward_function", value, "path/to/reward.py:function_name", required=False)
    if text is not None and not re.fullmatch(r".+\.py:[A-Za-z_][A-Za-z0-9_]*", text):
        raise ValueError(f"reward_function must be 'path/to/file.py:function_name' (verl imports the file); got {text!r}")
    return text


def _hydra_value(value: Any) -> str:
    """A Hydra override value: a plain name as is, any other string double-quoted (so 'null', '2.0' or
    '0.5_5.0' stay strings), lists in brackets."""
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in ("null", "true", "false", "inf", "nan"):
            return value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_hydra_value(v)}" for k, v in value.items()) + "}"
    return yaml_scalar(value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "config"


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)
