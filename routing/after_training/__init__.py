"""After the GPU: the held-out manifest the route freezes (frozen.py), and `after`, which reads each arm once,
pairs them on the frozen tasks and says whether the trained checkpoint improved beyond noise and its controls
(judge.py; its numbers in stats.py, its rule in rules.py, its words in text.py, its models in verdicts.py).
"""

from __future__ import annotations

from pick_a_method._lazy import lazy_names

# name -> the module of this job that defines it (loaded on first use: PEP 562, as routing/__init__.py)
_EXPORTS = {
    **dict.fromkeys(('after',), 'judge'),
    **dict.fromkeys(('Frozen', 'check_freeze', 'freeze', 'read_frozen'), 'frozen'),
    **dict.fromkeys(('arm_numbers',), 'stats'),
    **dict.fromkeys(('pool_cap', 'pool_step'), 'pool'),
    **dict.fromkeys(('VERDICTS',), 'rules'),
    **dict.fromkeys(('After', 'Arm', 'ControlComparison', 'CutOffs', 'Difference', 'Flips', 'FrozenCheck', 'Guard', 'Sizing'), 'verdicts'),
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
