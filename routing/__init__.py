"""The routing core: graded rows in, verdicts out (numpy, pyarrow and pydantic only; no torch, no MCP).

At the top, what every job shares: `readers/` reads the rows once into `GradedRows` (rows.py, field names in
fields.py), whatever tool wrote them; `table.py` builds one table of counts per (task, sampler, arm); stats.py holds
the intervals and sizes, paired.py the pairing of two arms on their shared tasks, shared.py the checks and warnings
every verdict carries, verdicts.py the verdict types, defaults.py every default with its source.

One subpackage per job, each reached by the others through its public names only (tests/test_rooms.py):
- before_training/  the route: question 0 (grader.py) to 6 in the skill's order, one step each (steps.py), run by
                    router.py, which stops at the first that decides;
- forecasting/      past what was sampled: the prior, the split share at another k, confidence, cost, held-out size;
- after_training/   the freeze and `after`: did the trained checkpoint improve on the frozen held-out tasks;
- during_training/  `track`: the trainers' own rollout files, step by step, judged a window at a time;
- pictures/         each verdict's numbers laid out as panels.
A new job is a new subpackage beside these, importing only the top and the others' public names.

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
    "holdout_size": "forecasting.holdout",
    "on_policy": "before_training.compare", "teacher_clears": "before_training.compare",
    **dict.fromkeys(("band", "pass_at", "rollouts_per_task", "truncated_passes"), "before_training.questions"),
    "model_params_b": "pick_a_method.common.identity", "route": "before_training.router",
    "RouteOptions": "before_training.options",
    "GradedRows": "rows", "as_rows": "readers", "read_rows": "readers",
    "Table": "table", "table_of": "table",
    "after": "after_training.judge", **dict.fromkeys(("freeze", "read_frozen", "Frozen"), "after_training.frozen"),
    "track": "during_training", "Track": "during_training",
    **dict.fromkeys(("After", "Arm", "ControlComparison", "CutOffs", "Difference", "Flips", "FrozenCheck", "Guard",
                     "Sizing"), "after_training.verdicts"),
    **dict.fromkeys(("Band", "HoldoutSize", "NextStep", "OnPolicy", "PassAt", "RolloutsPerTask", "Route",
                     "TeacherClears", "TraceStep", "TruncatedPasses", "Verdict"), "verdicts"),
}

__all__ = [
    "InputError", "GradedRows", "Table", "table_of", "read_rows", "as_rows", "truncated_passes", "rollouts_per_task",
    "pass_at", "band", "on_policy", "teacher_clears", "holdout_size", "route", "RouteOptions", "model_params_b",
    "Verdict",
    "NextStep", "TruncatedPasses", "RolloutsPerTask", "PassAt", "Band", "OnPolicy", "TeacherClears", "HoldoutSize",
    "TraceStep", "Route", "after", "freeze", "read_frozen", "After", "Frozen", "Arm", "ControlComparison", "CutOffs",
    "Difference", "Flips", "FrozenCheck", "Guard", "Sizing", "track", "Track",
]

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from .after_training.judge import after
    from .after_training.verdicts import After, Arm, ControlComparison, CutOffs, Difference, Flips, FrozenCheck, Guard, Sizing
    from .before_training.compare import on_policy, teacher_clears
    from .after_training.frozen import Frozen, freeze, read_frozen
    from .during_training import Track, track
    from pick_a_method.common.errors import InputError
    from .forecasting.holdout import holdout_size
    from .before_training.questions import band, pass_at, rollouts_per_task, truncated_passes
    from pick_a_method.common.identity import model_params_b
    from .readers import as_rows, read_rows
    from .before_training.options import RouteOptions
    from .before_training.router import route
    from .rows import GradedRows
    from .table import Table, table_of
    from .verdicts import (Band, HoldoutSize, NextStep, OnPolicy, PassAt, RolloutsPerTask, Route, TeacherClears,
                           TraceStep, TruncatedPasses, Verdict)


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())

