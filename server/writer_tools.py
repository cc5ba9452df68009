"""The config writers' arguments (prime-rl, TRL, verl) and preview_update's: a method, its knobs, and the run.

Declared once (server/declare.py). The shared training defaults are common/trainers.py's (steps, batch, LoRA, each
trainer's GPUs); the methods each writer takes are common/methods.py's table; an argument left None takes the
writer's own default.
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel

from pick_a_method.common.methods import PRIME_RL, TRL, VERL, run_by
from pick_a_method.common.next_step import Tool
from pick_a_method.common.trainers import BATCH, LORA, STEPS, TRAINERS

from .declare import NOT_ON_THE_COMMAND_LINE as NOT, Arguments, Cli, arg
from .schemas import (CheckpointArg, Count, NameOrPairs, Pairs, Trajectories, WandBArg, pairs_dict, plain,
                      takes_pairs, trajectory_dicts)


def methods_of(trainer: str) -> str:
    """The methods `trainer`'s writer writes, from the one table: "grpo, max_rl, rae, opd, opsd or async"."""
    names = [m.name for m in run_by(trainer)]
    corrections = TRAINERS[trainer].corrections
    names = [f"async ({' or '.join(corrections)})" if n == "async" and len(corrections) > 1 else n for n in names]
    return ", ".join(names[:-1]) + " or " + names[-1]


def given(**values: Any) -> dict[str, Any]:
    """The arguments given (not None): a writer's own defaults stand for the rest."""
    return {k: v for k, v in values.items() if v is not None}


def split(total: Any, inference: int | None, trainer: int | None, name: str) -> Any:
    """prime_rl_config's `gpus` or `nodes`: the total (split evenly), or the split its inference_/trainer_ arguments
    give (a side left out is named by the writer, with the fix)."""
    if inference is None and trainer is None:
        return plain(total)
    if total is not None:
        raise ValueError(f"{name} is the total, split evenly; inference_{name} and trainer_{name} give the split: "
                         f"pass one or the other")
    return {"inference": inference, "trainer": trainer}


class WriterArguments(Arguments):
    """What every config writer takes: the model, the method's knobs, the run's length, LoRA, a safe `out`."""

    writes = True
    model: str = arg(..., cli=Cli(help="the model to train, e.g. Qwen/Qwen3-8B (required)"))
    knobs: Pairs = arg(None, cli=Cli(flag="--knob", pairs=True, help=(
        "a method knob, VALUE read as JSON when it parses, e.g. --knob teacher=Qwen/Qwen3-32B (repeatable; a dotted "
        "KEY nests: method.name=opd)")))
    out: str | None = arg(None, cli=Cli(metavar="FILE", help="write the config here (default: print it)"))
    overwrite: bool = arg(False, cli=Cli(help="replace an existing file at --out"))
    steps: int = arg(STEPS, ge=1, cli=Cli(help="training steps (max_steps)"))
    lora: bool = arg(LORA, cli=Cli(help="train the full model instead of a LoRA adapter"))
    teacher_tokenizer: str | None = arg(None, cli=NOT)
    student_tokenizer: str | None = arg(None, cli=NOT)

    def write(self, writer: Any, *, allowed_roots: Any, tokenizers_match: Any, **shaped: Any) -> Any:
        """The writer called with every argument declared here under the writer's own parameter name (a pair list as
        its dict, a table as its dict; one left None takes the writer's default), `shaped` replacing those it takes
        in another shape: no argument is passed on by hand."""
        takes, fields = inspect.signature(writer).parameters, type(self).model_fields
        values = {name: plain(value, name) if takes_pairs(fields[name]) or isinstance(value, BaseModel) else value
                  for name in fields if name in takes for value in [getattr(self, name)]}
        return writer(**given(**{**values, "knobs": pairs_dict(self.knobs, nest=True), **shaped,
                                 "allowed_roots": allowed_roots, "tokenizers_match": tokenizers_match}))


class PrimeRlConfigArguments(WriterArguments):
    """Write prime-rl's `rl` TOML: the text, knobs honored or ignored, needs, the launch command."""

    tool, title = Tool.PRIME_RL_CONFIG, "Write the prime-rl config"
    answers = "pick_a_method.trainers.prime_rl:PrimeRLConfig"
    taskset: str = arg(..., "prime-rl taskset id", cli=Cli(
        positional=True, help="prime-rl taskset id (env.taskset.id)"))
    method: str = arg(..., methods_of(PRIME_RL), cli=Cli(positional=True, help=(
        f"{methods_of(PRIME_RL)} (async wraps one of them: --knob method=grpo)")))
    gpus: Count = arg(None, "Split evenly; per node with nodes", cli=Cli(help=(
        "GPUs on the node, at least 2 (default: 2), split evenly; with --nodes, GPUs per node (default: 8)")))
    inference_gpus: int | None = arg(None, "And trainer_gpus: the split", cli=Cli(
        metavar="N", help="with --trainer-gpus: vLLM's GPUs on the node"))
    trainer_gpus: int | None = arg(None, cli=Cli(metavar="N", help="with --inference-gpus: the trainer's GPUs"))
    batch: int = arg(BATCH, "Rollouts a step", ge=1, cli=Cli(help="prompts x rollouts per step"))
    overrides: Pairs = arg(None, cli=Cli(
        flag="--override", pairs=True, help="a dotted prime-rl key to set, e.g. --override trainer.optim.lr=2e-5 "
                                            "(repeatable)"))
    renderer: str | None = arg(None, "Default: from the model", cli=Cli(
        help="[orchestrator.renderer] name (default: chosen from the model)"))
    wandb: WandBArg = arg(None, "project, name, entity, offline", cli=Cli(
        pairs=True, help="W&B: project, name, entity, offline (repeatable; default: no W&B)"))
    checkpoint: CheckpointArg = arg(None, "interval, keep_last, resume; [\"false\"]: none", cli=Cli(
        pairs=True, off=("--no-checkpoint", "write no [ckpt]"),
        help="interval, keep_last, resume (true, a step, or a .../step_N folder) (repeatable; default: the library's "
             "[ckpt])"))
    run_name: str | None = arg(None, "Run folder, to resume", cli=Cli(
        help="run.name: the run folder under --output-dir (needed to resume)"))
    output_dir: str | None = arg(None, "On the GPU machine", cli=Cli(
        metavar="DIR", help="output_dir on the GPU machine (default: prime-rl's)"))
    nodes: Count = arg(None, "SLURM machines, half inference", cli=Cli(help=(
        "machines for a multi-node SLURM run, half of them inference (default: one node)")))
    inference_nodes: int | None = arg(None, "And trainer_nodes: the split", cli=Cli(
        metavar="N", help="with --trainer-nodes: the split of a multi-node run"))
    trainer_nodes: int | None = arg(None, cli=Cli(metavar="N", help="with --inference-nodes: the trainer's machines"))
    slurm: Pairs = arg(None, "[slurm] keys", cli=Cli(
        pairs=True, help="[slurm] keys, e.g. partition=gpu (repeatable)"))
    max_model_len: int | None = arg(None, cli=Cli(metavar="N", help="vLLM max_model_len (default: vLLM's)"))
    gpu_memory_utilization: float | None = arg(None, "(0, 1]", cli=Cli(
        metavar="X", help="vLLM gpu_memory_utilization, (0, 1] (default: vLLM's)"))
    eval_taskset: str | None = arg(None, "Default: the training one", cli=Cli(
        help="the taskset the eval reads (default: the training one)"))
    eval_split: NameOrPairs = arg(None, "A split, or key=value", cli=Cli(
        help="a split name, or KEY=VALUE for the taskset's own split key"))
    scheduler: NameOrPairs = arg(None, "constant, linear or cosine", cli=Cli(
        choices=("constant", "linear", "cosine"),
        help="LR schedule: constant, linear or cosine (default: prime-rl's constant)"))
    warmup_steps: int | None = arg(None, cli=Cli(metavar="N", help="LR warmup steps (default: none)"))

    def call(self, *, allowed_roots: Any = None, tokenizers_match: Any = None) -> Any:
        from pick_a_method.trainers.prime_rl import prime_rl_config

        return self.write(prime_rl_config, allowed_roots=allowed_roots, tokenizers_match=tokenizers_match,
                          gpus=split(self.gpus, self.inference_gpus, self.trainer_gpus, "gpus"),
                          nodes=split(self.nodes, self.inference_nodes, self.trainer_nodes, "nodes"))


class TrlConfigArguments(WriterArguments):
    """Write the YAML `trl <command> --config` reads: knobs honored or ignored, needs, the command."""

    tool, title = Tool.TRL_CONFIG, "Write the TRL config"
    answers = "pick_a_method.trainers.config_result:TrainerConfig"
    method: str = arg(..., methods_of(TRL), cli=Cli(positional=True, help=methods_of(TRL)))
    dataset: str | None = arg(None, "dataset_name", cli=Cli(
        help="the dataset (dataset_name; default: a placeholder to fill in)"))
    reward_funcs: list[str] | None = arg(None, "grpo: reward names or import paths", cli=Cli(
        flag="--reward-func", metavar="NAME", help="grpo: a TRL reward name or dotted import path (repeatable)"))
    gpus: int = arg(TRAINERS[TRL].gpus, ge=1, cli=Cli(help="GPUs per node"))
    nodes: int | None = arg(None, ge=1, cli=Cli(help="machines (default: one)"))
    batch: int = arg(BATCH, "Completions or examples a step", ge=1, cli=Cli(
        help="rollouts or examples per step"))
    vllm: bool = arg(True, cli=Cli(help="generate without vLLM"))
    overrides: Pairs = arg(None, cli=Cli(flag="--set", pairs=True, help=(
        "a config key to set last, VALUE read as JSON when it parses (repeatable)")))

    def call(self, *, allowed_roots: Any = None, tokenizers_match: Any = None) -> Any:
        from pick_a_method.trainers.trl import trl_config

        return self.write(trl_config, allowed_roots=allowed_roots, tokenizers_match=tokenizers_match)


class VerlConfigArguments(WriterArguments):
    """Write verl's main_ppo Hydra overrides and YAML: knobs honored or ignored, needs, the command."""

    tool, title = Tool.VERL_CONFIG, "Write the verl config"
    answers = "pick_a_method.trainers.config_result:TrainerConfig"
    method: str = arg(..., methods_of(VERL), cli=Cli(positional=True, help=methods_of(VERL)))
    train_files: list[str] | None = arg(None, "Parquet files", cli=Cli(
        metavar="FILE", help="verl RL parquet files (repeatable)"))
    val_files: list[str] | None = arg(None, "Held-out parquet files", cli=Cli(
        metavar="FILE", help="held-out parquet files (repeatable)"))
    reward_function: str | None = arg(None, "path/to/reward.py:function", cli=Cli(
        metavar="PATH:FN", help="path/to/reward.py:function (default: verl's scorer for each row's data_source)"))
    gpus: int = arg(TRAINERS[VERL].gpus, ge=1, cli=Cli(help="GPUs per node"))
    nodes: int | None = arg(None, ge=1, cli=Cli(help="machines (default: one)"))
    teacher_gpus: int | None = arg(None, "opd: the teacher's GPUs", ge=1, cli=Cli(
        help="opd: GPUs for the teacher pool (default: verl-config's own)"))
    batch: int = arg(BATCH, "Rollouts per step", ge=1, cli=Cli(help="rollouts or examples per step"))
    overrides: Pairs = arg(None, cli=Cli(flag="--set", pairs=True, help=(
        "a config key to set last, VALUE read as JSON when it parses (repeatable)")))

    def call(self, *, allowed_roots: Any = None, tokenizers_match: Any = None) -> Any:
        from pick_a_method.trainers.verl import verl_config

        return self.write(verl_config, allowed_roots=allowed_roots, tokenizers_match=tokenizers_match)


class PreviewUpdateArguments(Arguments):
    """What a method's update rule keeps from logged rollouts, and why ([torch] extra)."""

    tool, title = Tool.PREVIEW_UPDATE, "Preview a method's update on logged rollouts"
    answers = "pick_a_method.methods.preview:UpdatePreview"
    method: str = arg("FlashReinforce", "Any update rule (SAO, BPCO, GRPO, ...)", cli=Cli(
        help="any method with an update rule: FlashReinforce, SAO, BPCO, GRPO, MaxRL, RAE, OPD, Async, ..."))
    knobs: Pairs = arg(None, cli=Cli(flag="--knob", pairs=True, help=(
        "a method knob, VALUE read as JSON when it parses (repeatable; default: the method's own)")))
    trajectories: Trajectories = arg(None, "JSONL: reward, logprobs, behavior_logprobs, ...", cli=NOT)
    path: str | None = arg(None, "A JSONL file of them", cli=Cli(
        positional=True, help="JSONL of trajectories: reward, logprobs, and behavior_logprobs / values / mask"))

    def call(self, *, path: str | None = None, max_bytes: int | None = None) -> Any:
        from pick_a_method.methods.preview import preview_update

        return preview_update(self.method, pairs_dict(self.knobs, nest=True),
                              trajectories=trajectory_dicts(self.trajectories), path=path or self.path,
                              **given(max_bytes=max_bytes))


