"""Forecasting: what the rows predict past what was sampled. A prior over task pass rates (prior.py), the split
share at another k (split.py), the route's confidence under resampling (confidence.py), a run's cost (cost.py),
and the held-out size that proves an effect (holdout.py); forecast.py puts them together for the route.
"""

from __future__ import annotations

from pick_a_method._lazy import lazy_names

# name -> the module of this job that defines it (loaded on first use: PEP 562, as routing/__init__.py)
_EXPORTS = {
    **dict.fromkeys(('holdout_size',), 'holdout'),
    **dict.fromkeys(('advice_prior', 'confidence_fields', 'cost_estimate', 'rollout_advice', 'signal', 'table_moments'), 'forecast'),
    **dict.fromkeys(('check_gpus', 'split_needs'), 'cost'),
    **dict.fromkeys(('route_confidence',), 'confidence'),
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
