"""The routing core: graded rows in, verdicts out (numpy, pyarrow and pydantic only; no torch, no MCP).

How a verdict is made: `readers/` reads the rows once into `GradedRows` (rows.py), whatever tool wrote them;
`table.py` builds one table of counts per (task, sampler, arm) from them; each question (questions.py: truncated
passes, rollouts per task, pass@k, band; compare.py: on-policy, teacher; grader.py: question 0, the replies and the
graders) reads that table and returns its verdict. For `route`, steps.py holds one step a question, reading the rows
and their table through `Asked` (asked.py), and `router.py` runs them in the skill's order (`STEPS`), stopping at
the first that decides. A new question is a function of the table (questions.py) with its step in steps.py, put in
`STEPS`; a new input format is a reader module in readers/ with a `Format` listed in readers/registry.py.

After the GPU: `frozen.py` draws and writes the held-out manifest (`freeze`), and `after_judge.py` (`after`) reads
each arm once, pairs them on the shared (or frozen) tasks with after_stats.py's numbers, and applies
after_rules.py's verdict; after_text.py says it, after_verdicts.py holds the models.

Imported lazily (PEP 562): ``import pick_a_method.routing`` loads nothing else, and each name below loads its
module on first use, so the command line's ``--help`` and the server's ``tools/list`` don't pay for numpy and
pyarrow. ``routing.<submodule>`` (``routing.defaults``, ``routing.rows``, ...) loads that submodule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pick_a_method._lazy import lazy_names

# name -> the submodule that defines it
_EXPORTS = {
    "InputError": "pick_a_method.common.errors",
    "holdout_size": "holdout",
    "on_policy": "compare", "teacher_clears": "compare",
    "band": "questions", "pass_at": "questions", "rollouts_per_task": "questions", "truncated_passes": "questions",
    "model_params_b": "pick_a_method.common.identity", "route": "router",
    "GradedRows": "rows", "as_rows": "readers", "read_rows": "readers",
    "Table": "table", "table_of": "table",
    "after": "after_judge", "freeze": "frozen", "read_frozen": "frozen", "Frozen": "frozen",
    "track": "during_training", "Track": "during_training",
    **dict.fromkeys(("After", "Arm", "ControlComparison", "CutOffs", "Difference", "Flips", "FrozenCheck", "Guard",
                     "Sizing"), "after_verdicts"),
    **dict.fromkeys(("Band", "HoldoutSize", "NextStep", "OnPolicy", "PassAt", "RolloutsPerTask", "Route",
                     "TeacherClears", "TraceStep", "TruncatedPasses", "Verdict"), "verdicts"),
}

__all__ = [
    "InputError", "GradedRows", "Table", "table_of", "read_rows", "as_rows", "truncated_passes", "rollouts_per_task",
    "pass_at", "band", "on_policy", "teacher_clears", "holdout_size", "route", "model_params_b", "Verdict",
    "NextStep", "TruncatedPasses", "RolloutsPerTask", "PassAt", "Band", "OnPolicy", "TeacherClears", "HoldoutSize",
    "TraceStep", "Route", "after", "freeze", "read_frozen", "After", "Frozen", "Arm", "ControlComparison", "CutOffs",
    "Difference", "Flips", "FrozenCheck", "Guard", "Sizing", "track", "Track",
]

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from .after_judge import after
    from .after_verdicts import After, Arm, ControlComparison, CutOffs, Difference, Flips, FrozenCheck, Guard, Sizing
    from .compare import on_policy, teacher_clears
    from .during_training import Track, track
    from .frozen import Frozen, freeze, read_frozen
    from pick_a_method.common.errors import InputError
    from .holdout import holdout_size
    from .questions import band, pass_at, rollouts_per_task, truncated_passes
    from pick_a_method.common.identity import model_params_b
    from .readers import as_rows, read_rows
    from .router import route
    from .rows import GradedRows
    from .table import Table, table_of
    from .verdicts import (Band, HoldoutSize, NextStep, OnPolicy, PassAt, RolloutsPerTask, Route, TeacherClears,
                           TraceStep, TruncatedPasses, Verdict)


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())

