"""The routing core: graded rows in, verdicts out (numpy and pydantic only; no torch, no MCP)."""

from .errors import InputError
from .holdout import holdout_size
from .compare import on_policy, teacher_clears
from .questions import band, pass_at, rollouts_per_task, truncated_passes
from .route import model_params_b, route
from .rows import GradedRows, as_rows, read_rows
from .table import Table, table_of
from .verdicts import (Band, HoldoutSize, NextStep, OnPolicy, PassAt, RolloutsPerTask, Route, TeacherClears,
                       TraceStep, TruncatedPasses, Verdict)

__all__ = [
    "InputError", "GradedRows", "Table", "table_of", "read_rows", "as_rows", "truncated_passes", "rollouts_per_task", "pass_at", "band",
    "on_policy", "teacher_clears", "holdout_size", "route", "model_params_b", "Verdict", "NextStep", "TruncatedPasses",
    "RolloutsPerTask", "PassAt", "Band", "OnPolicy", "TeacherClears", "HoldoutSize", "TraceStep", "Route",
]
