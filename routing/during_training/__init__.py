"""During training: `track` reads the rollouts a trainer writes, step by step, and says when to stop, switch method
or fix the grader.

layout.py finds the step files (verl, TRL, prime-rl, NeMo-RL), the metrics log, or per-checkpoint evals;
rollouts.py reads one step's rows, summary.py makes them a few sums (cache.py keeps them between calls);
windows.py adds steps into windows; alarms.py judges each window against the ones before; verdict.py gives the
verdict in its precedence; tracker.py runs them; picture.py is the picture as data.

Imported lazily (PEP 562, as routing/ is): the models load with pydantic alone, so the server lists `track`'s
output schema without numpy; `track` loads the readers on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pick_a_method._lazy import lazy_names

_EXPORTS = {"track": "tracker", **dict.fromkeys(("Track", "Window", "Alarm", "Trend", "EvalPoint", "RunRead"), "models")}
__all__ = ["track", "Track", "Window", "Alarm", "Trend", "EvalPoint", "RunRead"]

if TYPE_CHECKING:
    from .models import Alarm, EvalPoint, RunRead, Track, Trend, Window
    from .tracker import track

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
