"""The config writers' arguments (prime-rl, TRL, verl) and preview_update's: a method, its knobs, and the run.

Each writer's arguments are its options model (trainers/<trainer>/options.py: each option's type, default, bounds
and description, which the library call takes too), with what is the command line's own (`clis`: how each option is
spelt there) and the server's own arguments: the tokenizers to compare, and prime-rl's GPU and node splits.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from pydantic import BaseModel

from pick_a_method.common.methods import PRIME_RL, TRL, VERL
from pick_a_method.common.next_step import Tool
from pick_a_method.common.shapes import Pairs, pairs_dict, plain, takes_pairs
from pick_a_method.trainers.options import WriterOptions, methods_of
from pick_a_method.trainers.prime_rl.options import PrimeRlOptions
from pick_a_method.trainers.trl.options import TrlOptions
from pick_a_method.trainers.verl.options import VerlOptions

from .declare import NOT_ON_THE_COMMAND_LINE as NOT, Arguments, Cli, arg
from .schemas import Trajectories, trajectory_dicts


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
    """What every config writer's tool takes beyond its options: the tokenizers to compare (OPD), which the server
    turns into the writer's `tokenizers_match`. A subclass derives from its writer's options model too (the config
    of both: extra arguments refused, built on first use) and names `writer`, the function it calls
    ("module:function", imported on use)."""

    writes = True
    writer: ClassVar[str]
    clis: ClassVar[dict[str, Cli]] = {
        "model": Cli(help="the model to train, e.g. Qwen/Qwen3-8B (required)"),
        "knobs": Cli(flag="--knob", pairs=True, help=(
            "a method knob, VALUE read as JSON when it parses, e.g. --knob teacher=Qwen/Qwen3-32B (repeatable; a "
            "dotted KEY nests: method.name=opd)")),
        "out": Cli(metavar="FILE", help="write the config here (default: print it)"),
        "overwrite": Cli(help="replace an existing file at --out"),
        "steps": Cli(help="training steps (max_steps)"),
        "batch": Cli(help="rollouts or examples per step"),
        "lora": Cli(help="train the full model instead of a LoRA adapter"),
        "overrides": Cli(flag="--set", pairs=True, help=(
            "a config key to set last, VALUE read as JSON when it parses (repeatable)")),
    }
    teacher_tokenizer: str | None = arg(None, cli=NOT)
    student_tokenizer: str | None = arg(None, cli=NOT)

    @classmethod
    def options(cls) -> type[WriterOptions]:
        """The writer's options model, the base this class derives its arguments from."""
        return next(k for k in cls.__mro__ if issubclass(k, WriterOptions) and not issubclass(k, Arguments))

    def shaped(self) -> dict[str, Any]:
        """Options the server takes in another shape than the writer (prime-rl's GPU and node splits)."""
        return {}

    def call(self, *, allowed_roots: Any = None, tokenizers_match: Any = None) -> Any:
        """The writer called with every option as the library takes it (pairs and tables as dicts; one left None
        takes the writer's default): no option is passed on by hand."""
        module, _, function = self.writer.partition(":")
        options = {name: plain(value, name) if takes_pairs(field) or isinstance(value, BaseModel) else value
                   for name, field in self.options().model_fields.items() for value in [getattr(self, name)]}
        options.update(knobs=pairs_dict(self.knobs, nest=True), **self.shaped())
        return getattr(importlib.import_module(module), function)(
            **given(**options), allowed_roots=allowed_roots, tokenizers_match=tokenizers_match)


class PrimeRlConfigArguments(WriterArguments, PrimeRlOptions):
    """Write prime-rl's `rl` TOML: the text, knobs honored or ignored, needs, the launch command."""

    tool, title = Tool.PRIME_RL_CONFIG, "Write the prime-rl config"
    answers, writer = "pick_a_method.trainers.prime_rl:PrimeRLConfig", "pick_a_method.trainers.prime_rl:prime_rl_config"
    clis = {
        "taskset": Cli(positional=True, help="prime-rl taskset id (env.taskset.id)"),
        "method": Cli(positional=True, help=f"{methods_of(PRIME_RL)} (async wraps one of them: --knob method=grpo)"),
        "gpus": Cli(help="GPUs on the node, at least 2 (default: 2), split evenly; with --nodes, GPUs per node "
                         "(default: 8)"),
        "batch": Cli(help="prompts x rollouts per step"),
        "overrides": Cli(flag="--override", pairs=True, help=(
            "a dotted prime-rl key to set, e.g. --override trainer.optim.lr=2e-5 (repeatable)")),
        "renderer": Cli(help="[orchestrator.renderer] name (default: chosen from the model)"),
        "wandb": Cli(pairs=True, help="W&B: project, name, entity, offline (repeatable; default: no W&B)"),
        "checkpoint": Cli(pairs=True, off=("--no-checkpoint", "write no [ckpt]"), help=(
            "interval, keep_last, resume (true, a step, or a .../step_N folder) (repeatable; default: the library's "
            "[ckpt])")),
        "run_name": Cli(help="run.name: the run folder under --output-dir (needed to resume)"),
        "output_dir": Cli(metavar="DIR", help="output_dir on the GPU machine (default: prime-rl's)"),
        "nodes": Cli(help="machines for a multi-node SLURM run, half of them inference (default: one node)"),
        "slurm": Cli(pairs=True, help="[slurm] keys, e.g. partition=gpu (repeatable)"),
        "max_model_len": Cli(metavar="N", help="vLLM max_model_len (default: vLLM's)"),
        "gpu_memory_utilization": Cli(metavar="X", help="vLLM gpu_memory_utilization, (0, 1] (default: vLLM's)"),
        "eval_taskset": Cli(help="the taskset the eval reads (default: the training one)"),
        "eval_split": Cli(help="a split name, or KEY=VALUE for the taskset's own split key"),
        "scheduler": Cli(choices=("constant", "linear", "cosine"),
                         help="LR schedule: constant, linear or cosine (default: prime-rl's constant)"),
        "warmup_steps": Cli(metavar="N", help="LR warmup steps (default: none)"),
    }
    # The MCP listing shows a GPU or node count as one integer (server/schemas.py Count); a split is these two.
    inference_gpus: int | None = arg(None, "And trainer_gpus: the split", cli=Cli(
        metavar="N", help="with --trainer-gpus: vLLM's GPUs on the node"))
    trainer_gpus: int | None = arg(None, cli=Cli(metavar="N", help="with --inference-gpus: the trainer's GPUs"))
    inference_nodes: int | None = arg(None, "And trainer_nodes: the split", cli=Cli(
        metavar="N", help="with --trainer-nodes: the split of a multi-node run"))
    trainer_nodes: int | None = arg(None, cli=Cli(metavar="N", help="with --inference-nodes: the trainer's machines"))

    def shaped(self) -> dict[str, Any]:
        return {"gpus": split(self.gpus, self.inference_gpus, self.trainer_gpus, "gpus"),
                "nodes": split(self.nodes, self.inference_nodes, self.trainer_nodes, "nodes")}


class TrlConfigArguments(WriterArguments, TrlOptions):
    """Write the YAML `trl <command> --config` reads: knobs honored or ignored, needs, the command."""

    tool, title = Tool.TRL_CONFIG, "Write the TRL config"
    answers, writer = "pick_a_method.trainers.config_result:TrainerConfig", "pick_a_method.trainers.trl:trl_config"
    clis = {
        "method": Cli(positional=True, help=methods_of(TRL)),
        "dataset": Cli(help="the dataset (dataset_name; default: a placeholder to fill in)"),
        "reward_funcs": Cli(flag="--reward-func", metavar="NAME", help=(
            "grpo: a TRL reward name or dotted import path (repeatable)")),
        "gpus": Cli(help="GPUs per node"),
        "nodes": Cli(help="machines"),
        "vllm": Cli(help="generate without vLLM"),
    }


class VerlConfigArguments(WriterArguments, VerlOptions):
    """Write verl's main_ppo Hydra overrides and YAML: knobs honored or ignored, needs, the command."""

    tool, title = Tool.VERL_CONFIG, "Write the verl config"
    answers, writer = "pick_a_method.trainers.config_result:TrainerConfig", "pick_a_method.trainers.verl:verl_config"
    clis = {
        "method": Cli(positional=True, help=methods_of(VERL)),
        "train_files": Cli(metavar="FILE", help="verl RL parquet files (repeatable)"),
        "val_files": Cli(metavar="FILE", help="held-out parquet files (repeatable)"),
        "reward_function": Cli(metavar="PATH:FN", help=(
            "path/to/reward.py:function (default: verl's scorer for each row's data_source)")),
        "gpus": Cli(help="GPUs per node"),
        "nodes": Cli(help="machines"),
        "teacher_gpus": Cli(help="opd: GPUs for the teacher pool"),
    }


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


