"""The route: the skill's questions in its order (question 0, the grader, first), one step each, and the
router that runs them and stops at the first that decides. Other jobs reach it through these names only.
"""

from __future__ import annotations

from pick_a_method._lazy import lazy_names

# name -> the module of this job that defines it (loaded on first use: PEP 562, as routing/__init__.py)
_EXPORTS = {
    **dict.fromkeys(('route',), 'router'),
    **dict.fromkeys(('band', 'pass_at', 'rollouts_per_task', 'truncated_passes'), 'questions'),
    **dict.fromkeys(('on_policy', 'paired', 'teacher_clears', 'shared_rates'), 'compare'),
    **dict.fromkeys(('split_samplers',), 'asked'),
    **dict.fromkeys(('check_grader', 'fix_why'), 'grader'),
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
