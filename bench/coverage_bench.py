"""Coverage of the 95% intervals on simulated evals with a known truth, beside the anchor's
percentile task bootstrap and the other methods measured before choosing.

    python bench/coverage_bench.py                  # 4000 evals a cell for the analytic intervals, 600 for bootstraps
    python bench/coverage_bench.py --sims 20000 --boot-sims 1000
    python bench/coverage_bench.py --only confidence   # the route's confidence against a fresh eval's agreement
    python bench/coverage_bench.py --only intervals --boot-sims 0 --tasks 10,40 --ks 1,4   # a quick reduced grid

pass@1 cells: tasks 10/40/200 x k 1/4/16 x per-task rates from Beta populations; the truth is the population's
mean rate. Paired cells: teacher and student rates on the same tasks, probit-correlated (rho 0.8-0.9); the
truth is the population's mean difference. A coverage c over S evals has standard error sqrt(c(1-c)/S)
(0.0034 at S = 4000, 0.0089 at S = 600). One rollout a task (k = 1) is computed exactly where it is cheap (pass@1
always: a binomial on the tasks; paired up to 40 tasks: every 2 x 2 table), marked `=`; those cells move in
steps of the lattice, not by noise. Also times the interval on 1M rows against the bootstrap it replaced.
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
# Beta(20,1): a teacher near saturation (mean 0.952), where the intervals were first seen to run wide.
POPULATIONS = {"uniform": (1.0, 1.0), "Beta(0.5,2)": (0.5, 2.0), "Beta(5,1)": (5.0, 1.0), "Beta(0.3,0.3)": (0.3, 0.3),
               "Beta(20,1)": (20.0, 1.0)}
# student probit mean, teacher probit mean, spread, correlation of the two latent difficulties; "ceiling": a
# student at 0.87 and a teacher at 0.95 (the Agresti-Coull arms ran wide there, 0.976 at 40 one-rollout tasks)
PAIRED = {"mid +0.08": (0.0, 0.35, 1.5, 0.8), "low +0.11": (-1.5, -0.9, 1.5, 0.8),
          "high +0.09": (1.5, 2.2, 1.5, 0.9), "equal": (0.5, 0.5, 1.5, 0.9), "ceiling +0.09": (2.0, 3.0, 1.5, 0.8)}
TASKS, KS = (10, 40, 200), (1, 4, 16)
EXACT_PAIRED_TASKS = 40  # 2 x 2 tables of n pairs: 12,341 at 40, 1.4M at 200 (simulated there)
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


def covers(lo, hi, truth, weight=None):
    hit = (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
    return float(hit.mean() if weight is None else weight[hit].sum())


def _log_factorials(n):
    return np.array([math.lgamma(i + 1) for i in range(n + 1)])


def binomial_outcomes(n, p):
    """Every outcome of n one-rollout tasks (x passes: x ones, then zeros) with its chance."""
    x = np.arange(n + 1)
    lf = _log_factorials(n)
    with np.errstate(divide="ignore"):
        chance = np.exp(lf[n] - lf[x] - lf[n - x] + x * np.log(p) + (n - x) * np.log1p(-p))
    return (x[:, None] > np.arange(n)[None, :]).astype(float), chance


def paired_outcomes(n, cells):
    """Every 2 x 2 table of n one-rollout pairs (counts of teacher/student pass-pass, pass-fail, fail-pass,
    fail-fail) as per-task teacher and student rows, with its multinomial chance under `cells`."""
    counts = np.array([(n11, n12, n21, n - n11 - n12 - n21) for n12 in range(n + 1) for n21 in range(n + 1 - n12)
                       for n11 in range(n + 1 - n12 - n21)])
    lf = _log_factorials(n)
    chance = np.exp(lf[n] - lf[counts].sum(axis=1) + (counts * np.log(np.maximum(cells, 1e-300))).sum(axis=1))
    col = np.arange(n)[None, :]
    n11, n12, n21 = counts[:, :1], counts[:, 1:2], counts[:, 2:3]
    teacher = (col < n11 + n12).astype(float)
    student = ((col < n11) | ((col >= n11 + n12) & (col < n11 + n12 + n21))).astype(float)
    return teacher, student, chance


def probit_cells(ms, mt, sd, rho):
    """Chances of (pass, pass), (pass, fail), (fail, pass), (fail, fail) for teacher and student at one rollout,
    by Gauss-Hermite quadrature over the two latent difficulties."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    z1, z2 = x[:, None], rho * x[:, None] + math.sqrt(1 - rho * rho) * x[None, :]
    weight = w[:, None] * w[None, :]
    s = 0.5 * (1 + _erf((ms + sd * z1) / math.sqrt(2))) * np.ones_like(z2)
    t = 0.5 * (1 + _erf((mt + sd * z2) / math.sqrt(2)))
    p11, p12, p21 = (weight * t * s).sum(), (weight * t * (1 - s)).sum(), (weight * (1 - t) * s).sum()
    return np.array([p11, p12, p21, 1 - p11 - p12 - p21])


def print_row(name, n, k, row, exact, widths, weight):
    """One table line: the analytic columns (the first three) carry `=` where the cell is exact; the mean width."""
    mark = "=" if exact else " "
    cells = " ".join(f"{c:9.3f}{mark if i < 3 else ' '}" for i, c in enumerate(row))
    width = np.mean(widths) if weight is None else float(weight @ widths)
    print(f"{name:14s} {n:5d} {k:3d} {cells}   {width:.3f}", flush=True)


def rate_table(sims: int, boot_sims: int, rng) -> None:
    names = ["chosen", "t", "wilson-z", "percentile", "BCa", "boot-t"]
    print(f"pass@1: {sims} evals a cell (chosen, t, wilson-z; `=`: exact), {boot_sims} for the bootstraps")
    print(f"{'population':14s} {'tasks':>5s} {'k':>3s} " + " ".join(f"{n:>10s}" for n in names) + "   width")
    for name, (a, b) in POPULATIONS.items():
        truth = a / (a + b)
        for n in TASKS:
            for k in KS:
                r = rng.binomial(k, rng.beta(a, b, size=(sims, n))) / k
                exact, weight = (binomial_outcomes(n, truth) if k == 1 else (r, None))
                lo, hi = rate_intervals(exact, n_max=n * k)
                row = [covers(lo, hi, truth, weight), covers(*t_interval(exact), truth, weight),
                       covers(*wilson_ess_z(exact), truth, weight)]
                if boot_sims:
                    row += [covers(*iv, truth) for iv in bootstraps(r[:boot_sims]).values()]
                print_row(name, n, k, row, weight is not None, hi - lo, weight)


def paired_table(sims: int, boot_sims: int, rng) -> None:
    names = ["chosen", "MOVER-AC", "t", "percentile", "BCa", "boot-t"]
    print(f"\npaired teacher - student: {sims} evals a cell (`=`: exact), {boot_sims} for the bootstraps; "
          f"MOVER-AC: the first analytic arms (Agresti-Coull at the floor)")
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
                d = teacher - student
                exact = k == 1 and n <= EXACT_PAIRED_TASKS
                t_rows, s_rows, weight = (paired_outcomes(n, probit_cells(ms, mt, sd, rho)) if exact
                                          else (teacher, student, None))
                lo, hi = paired_intervals(t_rows, s_rows, n_max_a=n * k, n_max_b=n * k)
                before = paired_intervals(t_rows, s_rows, n_max_a=n * k, n_max_b=n * k, agresti_floor=True)
                row = [covers(lo, hi, truth, weight), covers(*before, truth, weight),
                       covers(*t_interval(t_rows - s_rows), truth, weight)]
                if boot_sims:
                    row += [covers(*iv, truth) for iv in bootstraps(d[:boot_sims]).values()]
                print_row(name, n, k, row, exact, hi - lo, weight)


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


def _teacher_pop(student_mean, gap):
    """Student and teacher per-task rates on 48 tasks at k = 4 (Beta with concentration 8), the teacher `gap` above."""
    def draw(rng):
        sm, tm = student_mean, min(student_mean + gap, 0.99)
        return (rng.beta(8 * sm, 8 * (1 - sm), 48), rng.beta(8 * tm, 8 * (1 - tm), 48))
    return draw


def _share_at_half(tasks, expected_split):
    """`tasks` tasks at k = 4, each at p = 0.5 with the chance that makes `expected_split` of them split on average
    (0.875 of tasks at 0.5 split in 4), the rest at 0."""
    r = expected_split / (tasks * 0.875)
    return lambda rng: (np.where(rng.uniform(size=tasks) < r, 0.5, 0.0), None)


# name -> a function drawing one eval's per-task rates (student, teacher or None)
CONFIDENCE_POPULATIONS = {
    "few-split line, 26 expected": _share_at_half(120, 26), "few-split line, 31.5": _share_at_half(120, 31.5),
    "few-split line, 37": _share_at_half(120, 37),
    "floor edge, 1 split expected": _share_at_half(42, 1), "floor edge, 2": _share_at_half(42, 2),
    "floor edge, 4": _share_at_half(42, 4),
    "teacher +0.05": _teacher_pop(0.7, 0.05), "teacher +0.08": _teacher_pop(0.7, 0.08),
    "teacher +0.11": _teacher_pop(0.7, 0.11)}


def confidence_table(evals: int, fresh_evals: int, draws: int, rng) -> None:
    """The route's confidence against how often a fresh eval of the same size gives the same route: per
    population, the route of `fresh_evals` evals drawn from it (their label shares are the truth), then `evals`
    evals each with its confidence under one task resample and under a resample of a resample (the default)."""
    from pick_a_method.routing.forecasting.confidence import route_confidence, route_labels

    def eval_of(draw):
        s, t = draw(rng)
        c = rng.binomial(4, s)
        teacher = (rng.binomial(4, t), np.full(len(t), 4)) if t is not None else None
        return c, np.full(len(c), 4), teacher

    print(f"\nroute confidence: {evals} evals a population, truth from {fresh_evals} fresh evals, {draws} draws each; "
          f"mean confidence (one resample / resample of a resample) against the mean chance a fresh eval agrees")
    print(f"{'population':30s} {'one resample':>13s} {'resample^2':>11s} {'fresh agrees':>13s}")
    pooled = []
    for name, draw in CONFIDENCE_POPULATIONS.items():
        truth = {}
        for _ in range(fresh_evals):
            c, n, teacher = eval_of(draw)
            label = route_labels(c, n, teacher=teacher, draws=1)[0]
            truth[label] = truth.get(label, 0) + 1 / fresh_evals
        rows = []
        for i in range(evals):
            c, n, teacher = eval_of(draw)
            one = route_confidence(c, n, teacher=teacher, draws=draws, seed=i, fresh=False)
            two = route_confidence(c, n, teacher=teacher, draws=draws, seed=i)
            rows.append((one.confidence, two.confidence, truth.get(two.route, 0.0)))
        r = np.array(rows)
        pooled.append(r)
        print(f"{name:30s} {r[:, 0].mean():13.3f} {r[:, 1].mean():11.3f} {r[:, 2].mean():13.3f}", flush=True)
    r = np.concatenate(pooled)
    print(f"{'all':30s} {r[:, 0].mean():13.3f} {r[:, 1].mean():11.3f} {r[:, 2].mean():13.3f}")
    print("by band of confidence: evals, mean confidence - mean agreement (one resample | resample of a resample)")
    for lo, hi in [(0.0, 0.7), (0.7, 0.9), (0.9, 0.99), (0.99, 1.01)]:
        cells = []
        for col in (0, 1):
            band = (r[:, col] >= lo) & (r[:, col] < hi)
            cells.append(f"{int(band.sum()):5d} {r[band, col].mean() - r[band, 2].mean():+.3f}" if band.any() else "    0     -")
        print(f"  [{lo:.2f}, {hi:.2f})  " + "   |   ".join(cells))


def main() -> None:
    global TASKS, KS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--boot-sims", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--confidence-evals", type=int, default=200)
    ap.add_argument("--only", choices=("intervals", "confidence"), default=None)
    ap.add_argument("--tasks", default=",".join(map(str, TASKS)), help="task counts, comma-separated (a reduced grid)")
    ap.add_argument("--ks", default=",".join(map(str, KS)), help="rollouts per task, comma-separated")
    args = ap.parse_args()
    TASKS, KS = tuple(int(x) for x in args.tasks.split(",")), tuple(int(x) for x in args.ks.split(","))
    rng = np.random.default_rng(args.seed)
    if args.only != "confidence":
        speed()
        rate_table(args.sims, args.boot_sims, rng)
        paired_table(args.sims, args.boot_sims, rng)
    if args.only != "intervals":
        confidence_table(args.confidence_evals, 4 * args.confidence_evals, 400, rng)


if __name__ == "__main__":
    main()
