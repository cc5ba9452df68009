"""The routing core: graded rows in, verdicts out (numpy and pydantic only; no torch, no MCP).

Imported lazily (PEP 562): ``import pick_a_method.routing`` loads nothing else, and each name below loads its
module on first use, so the command line's ``--help`` and the server's ``tools/list`` don't pay for numpy and
pyarrow. ``routing.<submodule>`` (``routing.defaults``, ``routing.rows``, ...) loads that submodule.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from pick_a_method._lazy import lazy_names

# name -> the submodule that defines it
_EXPORTS = {
    "InputError": "errors",
    "holdout_size": "holdout",
    "on_policy": "compare", "teacher_clears": "compare",
    "band": "questions", "pass_at": "questions", "rollouts_per_task": "questions", "truncated_passes": "questions",
    "model_params_b": "identity", "route": "route",
    "GradedRows": "rows", "as_rows": "rows", "read_rows": "rows",
    "Table": "table", "table_of": "table",
    **dict.fromkeys(("Band", "HoldoutSize", "NextStep", "OnPolicy", "PassAt", "RolloutsPerTask", "Route",
                     "TeacherClears", "TraceStep", "TruncatedPasses", "Verdict"), "verdicts"),
}

__all__ = [
    "InputError", "GradedRows", "Table", "table_of", "read_rows", "as_rows", "truncated_passes", "rollouts_per_task",
    "pass_at", "band", "on_policy", "teacher_clears", "holdout_size", "route", "model_params_b", "Verdict",
    "NextStep", "TruncatedPasses", "RolloutsPerTask", "PassAt", "Band", "OnPolicy", "TeacherClears", "HoldoutSize",
    "TraceStep", "Route",
]

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from .compare import on_policy, teacher_clears
    from .errors import InputError
    from .holdout import holdout_size
    from .questions import band, pass_at, rollouts_per_task, truncated_passes
    from .identity import model_params_b
    from .route import route
    from .rows import GradedRows, as_rows, read_rows
    from .table import Table, table_of
    from .verdicts import (Band, HoldoutSize, NextStep, OnPolicy, PassAt, RolloutsPerTask, Route, TeacherClears,
                           TraceStep, TruncatedPasses, Verdict)


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())


class _Package(types.ModuleType):
    """`routing.route` is the function, as the eager import made it. Importing the submodule routing/route.py
    (`from pick_a_method.routing.route import ...`, anywhere) makes the import system bind the submodule to the
    same name on this package; that binding is dropped, the submodule stays in sys.modules."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and getattr(value, "__name__", None) == f"{self.__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
