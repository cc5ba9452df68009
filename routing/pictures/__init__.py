"""The pictures: each verdict's numbers laid out as panels (route.py: the band, the cut-offs, the teacher; after.py:
after's per-task rates and paired differences). Drawing them is the server's (server/plot.py, server/sketch.py).
"""

from __future__ import annotations

from pick_a_method._lazy import lazy_names

# name -> the module of this job that defines it (loaded on first use: PEP 562, as routing/__init__.py)
_EXPORTS = {
    **dict.fromkeys(('KIND_NAMES', 'PREDICTED_FOR', 'Picture', 'picture'), 'route'),
    **dict.fromkeys(('GraderPanel', 'caption_line', 'grader_caption', 'grader_panel'), 'grader'),
    **dict.fromkeys(('DiffPanel', 'PerTaskPanel', 'after_caption', 'diff_panel', 'per_task_panel'), 'after'),
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
