"""What ``prime_rl_config`` takes, declared once (trainers/options.py says how): the taskset, the method and the
run's machines and knobs. Light: pydantic and common/ only (the listing and `--help` import it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema

from pick_a_method.common.methods import PRIME_RL
from pick_a_method.common.shapes import CLOSED, PAIRS_SCHEMA, Count, NameOrPairs, Pairs, pairs_are_a_table
from pick_a_method.trainers.options import WriterOptions, methods_of


# The run knobs' tables, declared: what each holds is what prime-rl reads ([monitors.wandb], [ckpt] / [resume]).
class WandB(BaseModel):
    model_config = CLOSED
    project: str | None = None
    name: str | None = None
    entity: str | None = None
    offline: bool | None = None


class Checkpoint(BaseModel):
    model_config = CLOSED
    interval: int | None = None
    keep_last: int | None = None
    resume: bool | int | str | None = None


def _false_is_none(value: object) -> object:
    return False if value in (["false"], "false") else pairs_are_a_table(value)  # ["false"]: no checkpoint


# Listed as "key=value" strings, as knobs are; an object is taken too.
WandBArg = Annotated[WandB | None, BeforeValidator(pairs_are_a_table), WithJsonSchema(PAIRS_SCHEMA)]
CheckpointArg = Annotated[Checkpoint | Literal[False] | None, BeforeValidator(_false_is_none),
                          WithJsonSchema(PAIRS_SCHEMA)]


class PrimeRlOptions(WriterOptions):
    """What prime_rl_config takes (schema of prime-rl 559b44772, v0.8.1.dev67), beside the shared options."""

    taskset: str = Field(description="prime-rl taskset id")
    """The verifiers taskset id (env.taskset.id), e.g. "reverse-text"."""
    method: str = Field(description=methods_of(PRIME_RL))
    """A method object, or a name (grpo, max_rl, rae, opd, opsd, async, "async grpo") built with `knobs`;
    {"name": ..., **knobs} also works."""
    gpus: Count = Field(None, description="Split evenly; per node with nodes")
    """Total GPUs on one node, split half to vLLM and the rest to the trainer (default common/trainers.py's 2), or
    {"inference": n, "trainer": m}. With `nodes`: the GPUs a node (default prime-rl's 8)."""
    renderer: str | None = Field(None, description="Default: from the model")
    """prime-rl's chat renderer ([orchestrator.renderer] name). Left out, it is chosen for the model: auto for a model
    in renderers' MODEL_RENDERER_MAP, the family's renderer for a recognised family, else default, with a warning."""
    wandb: WandBArg = Field(None, description="project, name, entity, offline")
    """{project, name, entity, offline} -> [monitors.wandb]."""
    checkpoint: CheckpointArg = Field(None, description="interval, keep_last, resume; [\"false\"]: none")
    """{interval, keep_last, resume} -> [ckpt] / [resume] (resume: true for the latest, a step, or a .../step_<N>
    folder); False for none; default a bare [ckpt]."""
    run_name: str | None = Field(None, description="Run folder, to resume")
    """The run folder output_dir/run_name (needed to resume)."""
    output_dir: str | None = Field(None, description="On the GPU machine")
    nodes: Count = Field(None, description="SLURM machines, half inference")
    """Machines for a multi-node run through prime-rl's SLURM launcher: a count (half run vLLM) or
    {"inference": n, "trainer": m}."""
    slurm: Pairs = Field(None, description="[slurm] keys")
    """[slurm] keys (partition, account, ...), with `nodes` or alone (one node submitted through SLURM)."""
    max_model_len: int | None = None
    """[inference.vllm] max_model_len: vLLM's context, prompt plus completion (default: vLLM's)."""
    gpu_memory_utilization: float | None = Field(None, description="(0, 1]")
    """[inference.vllm] gpu_memory_utilization: the share of each inference GPU's memory vLLM may take."""
    eval_taskset: str | None = Field(None, description="Default: the training one")
    """The taskset [[orchestrator.eval.source]] reads."""
    eval_split: NameOrPairs = Field(None, description="A split, or key=value")
    """The eval's split: a split name for a taskset whose split key is known, else {"<its key>": "<split>"}."""
    scheduler: NameOrPairs = Field(None, description="constant, linear or cosine")
    """[trainer.scheduler]: constant, linear or cosine, or a table."""
    warmup_steps: int | None = None
    """[trainer.scheduler] warmup: alone, a linear warmup then a constant rate."""
