"""What `route` takes past the rows: one options model, which the library call, the MCP tool and the command line
share. pydantic, the shared shapes and the defaults only: the tools' listing and `--help` import it, never the route.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pick_a_method.common.shapes import PathArg, ThroughputArg, Trainer

from .. import defaults as D


class RouteOptions(BaseModel):
    """What `route` takes past the rows, declared once: the library call (`route(rows, model, **options)`), the MCP
    tool's schema and the command's flags (server/rows_tools.py RouteArguments derives from this model, adding the
    rows and the command line's spelling) all come from these fields. Values the route checks itself (the GPUs and
    their throughput, the freeze path) are taken as given and refused there, with the fix named."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=(), defer_build=True)

    model: str | None = Field(None, description="Model to train, e.g. Qwen/Qwen3-8B")
    taskset: str | None = Field(None, description="prime-rl taskset id")
    teacher: str | None = Field(None, description="Default: teacher rows' model")
    teacher_base_url: str | None = Field(None, description="Teacher's vLLM URL (OPD)")
    tokenizers_match: bool | None = None
    preference_pairs: bool | None = Field(None, description="Rows hold better/worse pairs")
    pass_threshold: float = D.PASS_THRESHOLD
    effect: float = Field(D.PROVE_EFFECT, gt=0, lt=1)
    params_b: float | None = Field(None, gt=0, description="B params, if the name lacks it")
    trainer: Trainer = Field("prime-rl", description="Whose config next_step names")
    gpus: int | None = Field(None, description="GPUs to split by throughput")
    throughput: ThroughputArg = Field(None, description="Tokens/s per GPU")  # checked by forecasting's check_gpus
    freeze: PathArg = Field(None, description="Write the held-out draw here (.json) for after")  # checked
