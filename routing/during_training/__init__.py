"""During training: `track` reads the rollouts a trainer writes, step by step, and says when to stop, switch method
or fix the grader.

layout.py finds the step files (verl, TRL, prime-rl, NeMo-RL), the metrics log, or per-checkpoint evals;
rollouts.py reads one step's rows, summary.py makes them a few sums (cache.py keeps them between calls);
windows.py adds steps into windows; alarms.py judges each window against the ones before; verdict.py gives the
verdict in its precedence; track.py runs them; picture.py is the picture as data.
"""

from .models import Alarm, EvalPoint, Track, Trend, Window
from .track import track

__all__ = ["track", "Track", "Window", "Alarm", "Trend", "EvalPoint"]
