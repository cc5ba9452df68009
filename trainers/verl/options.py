"""What ``verl_config`` takes, declared once (trainers/options.py says how): the method, the data, the reward
function and the cluster. Light: pydantic and common/ only (the listing and `--help` import it)."""

from __future__ import annotations

from pydantic import Field

from pick_a_method.common.methods import VERL
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.trainers.options import WriterOptions, methods_of
from pick_a_method.trainers.verl.constants import TEACHER_GPUS


class VerlOptions(WriterOptions):
    """What verl_config takes (verl 0.9.1's main_ppo), beside the shared options."""

    method: str = Field(description=methods_of(VERL))
    """grpo, async grpo (tis or icepop) or opd: a method object, a name with `knobs`, or {"name": ..., **knobs}."""
    train_files: list[str] | None = Field(None, description="Parquet files")
    """verl's RL parquet files (data.train_files: a prompt chat list, data_source, reward_model.ground_truth); one
    path or a list. Left out, a placeholder listed in `needs`."""
    val_files: list[str] | None = Field(None, description="Held-out parquet files")
    """Held-out parquet files in the same format (data.val_files)."""
    reward_function: str | None = Field(None, description="path/to/reward.py:function")
    """path/to/file.py:function (reward.custom_reward_function); without it verl scores each row with its built-in
    scorer for the row's data_source."""
    gpus: int = Field(TRAINERS[VERL].gpus, ge=1)
    """GPUs a node (trainer.n_gpus_per_node)."""
    nodes: int = Field(1, ge=1)
    """Ray nodes (trainer.nnodes); the command runs on the head node."""
    teacher_gpus: int = Field(TEACHER_GPUS, ge=1, description="opd: the teacher's GPUs")
    """opd: the teacher pool's GPUs a node (distillation.n_gpus_per_node), whole replicas of the teacher."""
