"""Timings of the issue-15 pieces at 1M rows (125k tasks x 8), and the split prediction's accuracy on simulated
populations (600 tasks x 4, known rates).

    python bench/prediction_bench.py            # timings, then accuracy over 40 seeds per population

Timings are CPU time, best of 5 (wall time swings on a shared machine); the accuracy table is deterministic.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pick_a_method import routing  # noqa: E402
from pick_a_method.routing.confidence import route_confidence  # noqa: E402
from pick_a_method.routing.prior import RatePrior, fit_prior, posterior_split_chance, predict_split  # noqa: E402

POPULATIONS = {"uniform": (1.0, 1.0), "U-shaped Beta(0.3,0.3)": (0.3, 0.3), "near-saturated Beta(5,1)": (5.0, 1.0),
               "near-floor Beta(1,5)": (1.0, 5.0)}


def best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.process_time()  # CPU time: steadier than wall time on a shared machine
        fn()
        times.append(time.process_time() - t0)
    return min(times) * 1e3


def timings():
    rng = np.random.default_rng(0)
    n_tasks, k = 125_000, 8
    c = rng.binomial(k, rng.beta(0.5, 1.5, n_tasks))
    n = np.full(n_tasks, k)
    passed = (np.arange(k)[None, :] < c[:, None]).ravel()
    rows = [{"task_id": f"task-{i // k}", "reward": float(v), "model": "Qwen/Qwen3-8B"} for i, v in enumerate(passed)]
    graded = routing.as_rows(rows)
    print(f"1M rows ({n_tasks} tasks x {k}), CPU ms, best of 5:")
    print(f"  route_confidence (2000 resamples)   {best(lambda: route_confidence(c, n)):8.1f}")
    print(f"  fit_prior                           {best(lambda: fit_prior(c, n)):8.1f}")
    print(f"  predict_split, k 2..64, no interval {best(lambda: predict_split(c, n, interval=False)):8.1f}")
    print(f"  predict_split with its interval     {best(lambda: predict_split(c, n)):8.1f}")
    print(f"  band                                {best(lambda: routing.band(graded)):8.1f}")
    route_ms = best(lambda: routing.route(graded, model='Qwen/Qwen3-8B'))
    module = importlib.import_module("pick_a_method.routing.route")
    real, module.confidence_fields = module.confidence_fields, lambda *a, **kw: ({}, None)
    try:
        bare_ms = best(lambda: routing.route(graded, model='Qwen/Qwen3-8B'))
    finally:
        module.confidence_fields = real
    print(f"  route                               {route_ms:8.1f}")
    print(f"  route without its confidence        {bare_ms:8.1f}  (the confidence's share: {route_ms - bare_ms:+.1f})")


def accuracy(seeds=40):
    print(f"\nsplit share predicted from 600 tasks x 4, {seeds} seeds: bias / RMS error / share within 0.03 / "
          f"interval coverage, against the 600 tasks' own expected share; 'known prior' uses the true Beta")
    print(f"{'population':26s} {'k':>3s} {'bias':>7s} {'rms':>6s} {'<=.03':>6s} {'cover':>6s} {'known prior rms':>16s} "
          f"{'plug-in bias':>13s}")
    for name, (a, b) in POPULATIONS.items():
        rows = {k: [] for k in (4, 8, 16)}
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            p = rng.beta(a, b, 600)
            c, n = rng.binomial(4, p), np.full(600, 4)
            for q in predict_split(c, n, (4, 8, 16)):
                truth = float(np.mean(1 - p**q.k - (1 - p) ** q.k))
                known = float(posterior_split_chance(c, n, q.k, RatePrior(a, b, 0.0)).mean())
                plug = float(np.mean(1 - (c / 4) ** q.k - (1 - c / 4) ** q.k))
                rows[q.k].append((q.share - truth, q.ci95[0] <= truth <= q.ci95[1], known - truth, plug - truth))
        for k, r in rows.items():
            e, hit, kn, pl = (np.array(x, dtype=float) for x in zip(*r))
            print(f"{name:26s} {k:3d} {e.mean():+7.3f} {np.sqrt((e * e).mean()):6.3f} {(np.abs(e) <= 0.03).mean():6.2f} "
                  f"{hit.mean():6.2f} {np.sqrt((kn * kn).mean()):16.3f} {pl.mean():+13.3f}")


if __name__ == "__main__":
    timings()
    accuracy()
