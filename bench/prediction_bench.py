"""Timings of the rollout-advice pieces (prior, split, cost, confidence) at 1M rows (125k tasks x 8), and the split
prediction's accuracy on simulated populations (600 tasks x 4, and x 8 for a set with impossible and always-solved
tasks; known rates).

    python bench/prediction_bench.py            # timings, then accuracy over 200 seeds per population

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
from pick_a_method.routing.forecasting.confidence import route_confidence  # noqa: E402
from pick_a_method.routing.forecasting.prior import RatePrior, fit_prior  # noqa: E402
from pick_a_method.routing.forecasting.split import posterior_split_chance, predict_split  # noqa: E402

import route_bench  # noqa: E402  (bench/ is on sys.path when run as a script)

# name -> (Beta a, b, share impossible, share always solved, rollouts per task)
POPULATIONS = {"uniform": (1.0, 1.0, 0, 0, 4), "U-shaped Beta(0.3,0.3)": (0.3, 0.3, 0, 0, 4),
               "near-saturated Beta(5,1)": (5.0, 1.0, 0, 0, 4), "near-floor Beta(1,5)": (1.0, 5.0, 0, 0, 4),
               "20% at 0, 15% at 1, Beta(2,2)": (2.0, 2.0, 0.2, 0.15, 4),
               "the same at k=8": (2.0, 2.0, 0.2, 0.15, 8)}


def best(fn, repeat=5):
    """Milliseconds of CPU time (steadier than wall time on a shared machine), best of `repeat`."""
    return route_bench.best(fn, repeat, clock=time.process_time) * 1e3


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
    module = importlib.import_module("pick_a_method.routing.before_training.asked")
    real, module.confidence_fields = module.confidence_fields, lambda *a, **kw: ({}, None)
    try:
        bare_ms = best(lambda: routing.route(graded, model='Qwen/Qwen3-8B'))
    finally:
        module.confidence_fields = real
    print(f"  route                               {route_ms:8.1f}")
    print(f"  route without its confidence        {bare_ms:8.1f}  (the confidence's share: {route_ms - bare_ms:+.1f})")


def accuracy(seeds=200):
    print(f"\nsplit share predicted from 600 tasks x k, {seeds} seeds: bias / RMS error / share within 0.03 / interval "
          f"coverage, against the 600 tasks' own expected share; 'known prior' uses the true prior, 'one Beta' forces "
          f"the plain Beta, 'masses' is the share of seeds where BIC chose point masses")
    print(f"{'population':30s} {'k':>3s} {'bias':>7s} {'rms':>6s} {'<=.03':>6s} {'cover':>6s} {'known prior rms':>16s} "
          f"{'one Beta rms':>13s} {'plug-in bias':>13s} {'masses':>7s}")
    for name, (a, b, zero, one, k0) in POPULATIONS.items():
        ks = (k0, 2 * k0, 4 * k0)
        rows, chose = {k: [] for k in ks}, []
        known_prior = RatePrior(a, b, 0.0, zero=zero, one=one, model="beta+0+1" if zero or one else "beta")
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            u = rng.uniform(size=600)
            p = np.where(u < zero, 0.0, np.where(u < zero + one, 1.0, rng.beta(a, b, 600)))
            c, n = rng.binomial(k0, p), np.full(600, k0)
            prior = fit_prior(c, n)
            chose.append(prior.model != "beta")
            single = {q.k: q.share for q in predict_split(c, n, ks, prior=fit_prior(c, n, model="beta"),
                                                          interval=False)}
            for q in predict_split(c, n, ks, prior=prior):
                truth = float(np.mean(1 - p**q.k - (1 - p) ** q.k))
                known = float(posterior_split_chance(c, n, q.k, known_prior).mean())
                plug = float(np.mean(1 - (c / k0) ** q.k - (1 - c / k0) ** q.k))
                rows[q.k].append((q.share - truth, q.ci95[0] <= truth <= q.ci95[1], known - truth,
                                  single[q.k] - truth, plug - truth))
        for k, r in rows.items():
            e, hit, kn, one_beta, pl = (np.array(x, dtype=float) for x in zip(*r))
            rms = lambda x: np.sqrt((x * x).mean())  # noqa: E731
            print(f"{name:30s} {k:3d} {e.mean():+7.3f} {rms(e):6.3f} {(np.abs(e) <= 0.03).mean():6.2f} "
                  f"{hit.mean():6.2f} {rms(kn):16.3f} {rms(one_beta):13.3f} {pl.mean():+13.3f} {np.mean(chose):7.2f}")


if __name__ == "__main__":
    timings()
    accuracy()
