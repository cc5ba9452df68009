"""What ``trl_config`` takes, declared once (trainers/options.py says how): the method, the data, the machines and
vLLM. Light: pydantic and common/ only (the listing and `--help` import it)."""

from __future__ import annotations

from pydantic import Field

from pick_a_method.common.methods import TRL
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.trainers.options import WriterOptions, methods_of


class TrlOptions(WriterOptions):
    """What trl_config takes (TRL 1.16.0's config classes), beside the shared options."""

    method: str = Field(description=methods_of(TRL))
    """grpo, async (around grpo, correction icepop or tis), groupwise_grading, opd, sft or dpo: a method object, a
    name with `knobs`, or {"name": ..., **knobs}."""
    dataset: str | None = Field(None, description="dataset_name")
    """The dataset (TRL's dataset_name); left out, a <dataset> placeholder listed in `needs`."""
    reward_funcs: list[str] | None = Field(None, description="grpo: reward names or import paths")
    """grpo: TRL reward names or dotted import paths (one name or a list); left out, a placeholder listed in
    `needs`."""
    gpus: int = Field(TRAINERS[TRL].gpus, ge=1)
    """GPUs a node; more than one process launches through accelerate (the `trl` CLI wraps accelerate launch)."""
    nodes: int = Field(1, ge=1)
    """Machines, each with `gpus` GPUs."""
    vllm: bool = True
    """Generate with vLLM colocated on the training GPUs (grpo and opd); False: transformers' generate."""
