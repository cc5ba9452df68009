"""The routing core: graded rows in, verdicts out (numpy and pydantic only; no torch, no MCP)."""

from .errors import InputError
from .holdout import holdout_size
from .questions import band, on_policy, pass_at, rollouts_per_task, teacher_clears, truncated_passes
from .route import model_params_b, route
from .rows import GradedRows, as_rows, read_rows
from .verdicts import (Band, HoldoutSize, NextStep, OnPolicy, PassAt, RolloutsPerTask, Route, TeacherClears,
                       TraceStep, TruncatedPasses, Verdict)

__all__ = [
    "InputError", "GradedRows", "read_rows", "as_rows", "truncated_passes", "rollouts_per_task", "pass_at", "band",
    "on_policy", "teacher_clears", "holdout_size", "route", "model_params_b", "Verdict", "NextStep", "TruncatedPasses",
    "RolloutsPerTask", "PassAt", "Band", "OnPolicy", "TeacherClears", "HoldoutSize", "TraceStep", "Route",
]
