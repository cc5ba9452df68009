"""The forecasts read at most FORECAST_MAX_ROLLOUTS rollouts a group (routing/defaults.py): a summary of a long run
(a thousand rollouts a task) is forecast in bounded time and memory, no group changes band on the way, and the
measured band still reads every rollout."""

import numpy as np

from pick_a_method import routing
from pick_a_method.routing import defaults as D
from pick_a_method.routing.forecasting.prior import narrowed


def test_wide_groups_are_scaled_keeping_a_pass_and_a_fail():
    c = np.array([0, 1, 500, 999, 1000, 3])
    n = np.array([1000, 1000, 1000, 1000, 1000, 8])
    nc, nn = narrowed(c, n)
    w = D.FORECAST_MAX_ROLLOUTS
    assert nn.tolist() == [w, w, w, w, w, 8]
    assert nc.tolist() == [0, 1, w // 2, w - 1, w, 3]  # none turned all-fail or all-pass; narrow groups untouched


def test_a_thousand_rollouts_a_task_route_as_their_band_says(monkeypatch):
    rng = np.random.default_rng(3)
    k, tasks = 1000, 300
    passes = rng.binomial(k, rng.beta(0.6, 0.6, tasks))
    rows = [{"task_id": t, "reward": float(i < c), "truncated": False, "model": "Qwen/Qwen3-8B"}
            for t, c in enumerate(passes) for i in range(k)]
    band = routing.band(rows)
    mixed = ((passes > 0) & (passes < k)).sum()
    assert band.split_share == mixed / tasks  # measured on every rollout
    assert band.rollouts.per_k  # the forecast ran, on the narrowed counts
    assert str(k) in band.predicted_split_share
