"""Coverage of the 95% intervals on simulated evals with a known truth (issue 16), beside the anchor's
percentile task bootstrap and the other methods measured before choosing.

    python bench/coverage_bench.py                  # 4000 evals a cell for the analytic intervals, 600 for bootstraps
    python bench/coverage_bench.py --sims 20000 --boot-sims 1000

pass@1 cells: tasks 10/40/200 x k 1/4/16 x per-task rates from Beta populations; the truth is the population's
mean rate. Paired cells: teacher and student rates on the same tasks, probit-correlated (rho 0.8-0.9); the
truth is the population's mean difference. A coverage c over S evals has standard error sqrt(c(1-c)/S)
(0.0034 at S = 4000, 0.0089 at S = 600). Also times the interval on 1M rows against the bootstrap it replaced.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pick_a_method.routing.stats import (bootstrap_moments, paired_intervals, percentile_interval,  # noqa: E402
                                         rate_intervals, t_quantile, task_ci)

Z = NormalDist().inv_cdf(0.975)
POPULATIONS = {"uniform": (1.0, 1.0), "Beta(0.5,2)": (0.5, 2.0), "Beta(5,1)": (5.0, 1.0), "Beta(0.3,0.3)": (0.3, 0.3)}
# student probit mean, teacher probit mean, spread, correlation of the two latent difficulties
PAIRED = {"mid +0.08": (0.0, 0.35, 1.5, 0.8), "low +0.11": (-1.5, -0.9, 1.5, 0.8),
          "high +0.09": (1.5, 2.2, 1.5, 0.9), "equal": (0.5, 0.5, 1.5, 0.9)}
TASKS, KS = (10, 40, 200), (1, 4, 16)
_erf = np.vectorize(math.erf)


def t_interval(r):
    n = r.shape[1]
    half = t_quantile(0.975, n - 1) * r.std(axis=1, ddof=1) / math.sqrt(n)
    return r.mean(axis=1) - half, r.mean(axis=1) + half


def wilson_ess_z(r):  # the effective-sample-size Wilson without the t shrink or the Agresti-Coull floor
    n = r.shape[1]
    p, v = r.mean(axis=1), r.var(axis=1, ddof=1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(v > 0, np.clip(np.nan_to_num(p * (1 - p) / v, nan=n), n, np.inf), n)
    c = (p + Z * Z / (2 * m)) / (1 + Z * Z / m)
    h = Z / (1 + Z * Z / m) * np.sqrt(p * (1 - p) / m + Z * Z / (4 * m * m))
    return c - h, c + h


def bootstraps(r):
    """Percentile (the anchor's), BCa (Efron 1987) and bootstrap-t, 2000 task resamples per eval."""
    out = {name: (np.empty(len(r)), np.empty(len(r))) for name in ("percentile", "BCa", "boot-t")}
    n = r.shape[1]
    for i, x in enumerate(r):
        means, var = bootstrap_moments(x, seed=i)
        out["percentile"][0][i], out["percentile"][1][i] = percentile_interval(means)
        theta = x.mean()
        share = min(max((means < theta).mean(), 1 / 4000), 1 - 1 / 4000)
        z0 = NormalDist().inv_cdf(share)
        jack = (x.sum() - x) / (n - 1)
        dev = jack.mean() - jack
        den = 6 * (dev**2).sum() ** 1.5
        acc = (dev**3).sum() / den if den > 0 else 0.0
        qs = [np.quantile(means, NormalDist().cdf(z0 + (z0 + zz) / (1 - acc * (z0 + zz)))) for zz in (-Z, Z)]
        out["BCa"][0][i], out["BCa"][1][i] = qs
        se = x.std(ddof=1) / math.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (means - theta) / np.sqrt(var / n)
        t = t[np.isfinite(t)]
        if se == 0 or len(t) < 20:
            out["boot-t"][0][i] = out["boot-t"][1][i] = theta
        else:
            out["boot-t"][0][i] = theta - np.quantile(t, 0.975) * se
            out["boot-t"][1][i] = theta - np.quantile(t, 0.025) * se
    return out


def covers(lo, hi, truth):
    return float(((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)).mean())


def rate_table(sims: int, boot_sims: int, rng) -> None:
    names = ["chosen", "t", "wilson-z", "percentile", "BCa", "boot-t"]
    print(f"pass@1: {sims} evals a cell (chosen, t, wilson-z), {boot_sims} for the bootstraps")
    print(f"{'population':14s} {'tasks':>5s} {'k':>3s} " + " ".join(f"{n:>10s}" for n in names) + "   width")
    for name, (a, b) in POPULATIONS.items():
        truth = a / (a + b)
        for n in TASKS:
            for k in KS:
                r = rng.binomial(k, rng.beta(a, b, size=(sims, n))) / k
                lo, hi = rate_intervals(r, n_max=n * k)
                row = [covers(lo, hi, truth), covers(*t_interval(r), truth), covers(*wilson_ess_z(r), truth)]
                if boot_sims:
                    row += [covers(*iv, truth) for iv in bootstraps(r[:boot_sims]).values()]
                print(f"{name:14s} {n:5d} {k:3d} " + " ".join(f"{c:10.3f}" for c in row)
                      + f"   {np.mean(hi - lo):.3f}", flush=True)


def paired_table(sims: int, boot_sims: int, rng) -> None:
    names = ["chosen", "t", "percentile", "BCa", "boot-t"]
    print(f"\npaired teacher - student: {sims} evals a cell, {boot_sims} for the bootstraps")
    print(f"{'setting':14s} {'tasks':>5s} {'k':>3s} " + " ".join(f"{n:>10s}" for n in names) + "   width")
    for name, (ms, mt, sd, rho) in PAIRED.items():
        scale = math.sqrt(1 + sd * sd)
        truth = NormalDist().cdf(mt / scale) - NormalDist().cdf(ms / scale)
        for n in TASKS:
            for k in KS:
                z1 = rng.standard_normal((sims, n))
                z2 = rho * z1 + math.sqrt(1 - rho * rho) * rng.standard_normal((sims, n))
                student = rng.binomial(k, 0.5 * (1 + _erf((ms + sd * z1) / math.sqrt(2)))) / k
                teacher = rng.binomial(k, 0.5 * (1 + _erf((mt + sd * z2) / math.sqrt(2)))) / k
                lo, hi = paired_intervals(teacher, student, n_max_a=n * k, n_max_b=n * k)
                d = teacher - student
                row = [covers(lo, hi, truth), covers(*t_interval(d), truth)]
                if boot_sims:
                    row += [covers(*iv, truth) for iv in bootstraps(d[:boot_sims]).values()]
                print(f"{name:14s} {n:5d} {k:3d} " + " ".join(f"{c:10.3f}" for c in row)
                      + f"   {np.mean(hi - lo):.3f}", flush=True)


def speed() -> None:
    """The interval on 1M rows (125k tasks x 8) against the 2000-draw multinomial bootstrap it replaced."""
    rng = np.random.default_rng(0)
    rates = rng.binomial(8, rng.uniform(size=125_000)) / 8
    for label, fn in (("analytic interval", lambda: task_ci(rates)),
                      ("percentile bootstrap", lambda: percentile_interval(bootstrap_moments(rates)[0]))):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        print(f"{label:22s} 1M rows: {min(times) * 1e3:7.2f} ms (best of 5)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--boot-sims", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    speed()
    rate_table(args.sims, args.boot_sims, rng)
    paired_table(args.sims, args.boot_sims, rng)


if __name__ == "__main__":
    main()
