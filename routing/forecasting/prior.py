"""What more rollouts per task would buy, part one: a prior over the tasks' pass rates, fitted to per-task
counts (routing.split then predicts the share of groups that would split at any k under each task's
posterior).

Plugging a task's observed rate into 1 - p^k - (1-p)^k says a task that never split at k = 4 can never split;
the posterior says how likely it is to split at k = 16. The prior is a Beta by beta-binomial maximum likelihood,
or, where the Bayesian information criterion says the counts need them, a Beta plus point masses at 0 (tasks no
draw passes) and 1 (tasks every draw passes): the zero-one-inflated beta-binomial, fitted by BHHH ascent
(D.SPLIT_PRIOR, D.PRIOR_MODELS). A point mass never splits at any k, so a set with truly impossible tasks is not
told that more rollouts will crack them. Inputs are plain per-group arrays (passes, rollouts), so any
per-(task, sampler, arm) table can call it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import defaults as D
from ..stats import distinct
from pick_a_method.common.errors import InputError

_GRID = 41  # each zoom of the likelihood search: a _GRID x _GRID grid over (logit mean, log concentration)
_ZOOMS = 4
_BLOCK_CELLS = 1 << 14  # (grid points, j) logs computed at once (_log_dot)


@dataclass(frozen=True)
class RatePrior:
    """zero x (point mass at 0) + one x (point mass at 1) + (1 - zero - one) x Beta(a, b)."""
    a: float
    b: float
    log_likelihood: float  # up to the binomial coefficients, the same for every model
    zero: float = 0.0
    one: float = 0.0
    model: str = "beta"  # a key of D.PRIOR_MODELS

    @property
    def mean(self) -> float:
        return self.one + (1 - self.zero - self.one) * self.a / (self.a + self.b)


def check_counts(passes: np.ndarray, rollouts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(passes, dtype=np.int64).reshape(-1)
    n = np.asarray(rollouts, dtype=np.int64).reshape(-1)
    if c.shape != n.shape:
        raise InputError(f"passes has {len(c)} groups and rollouts {len(n)}; give one count of each per group",
                         field="passes")
    if len(n) == 0:
        raise InputError("no groups: give per-group pass and rollout counts", field="rollouts")
    if (n < 1).any() or (c < 0).any() or (c > n).any():
        bad = int(np.flatnonzero((n < 1) | (c < 0) | (c > n))[0])
        raise InputError(f"group {bad} has {c[bad]} passes of {n[bad]} rollouts; passes must lie in 0..rollouts "
                         f"and rollouts be 1 or more", field="passes")
    return c, n


def narrowed(passes: np.ndarray, rollouts: np.ndarray,
             width: int = D.FORECAST_MAX_ROLLOUTS) -> tuple[np.ndarray, np.ndarray]:
    """The counts the forecasts read: a group of more than `width` rollouts scaled down to `width`, its pass rate
    rounded, a pass and a fail kept where it had both (so no group turns all-pass or all-fail)."""
    c, n = check_counts(passes, rollouts)
    wide = n > width
    if not wide.any():
        return c, n
    scaled = np.rint(c * (width / n)).astype(np.int64)
    scaled = np.where(c > 0, np.maximum(scaled, 1), 0)
    scaled = np.where(c < n, np.minimum(scaled, width - 1), width)
    return np.where(wide, scaled, c), np.where(wide, width, n)


def distinct_pairs(c: np.ndarray, n: np.ndarray, inverse: bool = False):
    """Distinct (passes, rollouts) pairs as rows, how many groups hold each (and each group's pair index)."""
    base = int(n.max()) + 1
    keys, idx, weight = distinct(n * base + c, inverse=True)
    pairs = np.stack([keys % base, keys // base], axis=1)
    return (pairs, weight, idx.reshape(-1)) if inverse else (pairs, weight)


def _tails(c: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (c, n) pairs, how many groups hold each, and per pair and j = 0..max(n)-1 whether it has more
    than j passes / fails / rollouts. The beta-binomial log-likelihood is, up to a constant,
    sum_j [A_j log(a+j) + B_j log(b+j) - N_j log(a+b+j)], with A, B, N the group-weighted sums of those."""
    pairs, weight = distinct_pairs(c, n)
    j = np.arange(int(n.max()))
    pc, pn = pairs[:, :1], pairs[:, 1:]
    return weight.astype(np.float64), (pc > j).astype(np.float64), ((pn - pc) > j).astype(np.float64), \
        (pn > j).astype(np.float64)


def _tail_counts(weights: np.ndarray, pairs: np.ndarray, width: int) -> list[np.ndarray]:
    """weights @ (c > j), weights @ (n - c > j) and weights @ (n > j) over the distinct pairs, for j < width, one row
    per row of `weights` (whole numbers: group counts, resamples): each a cumulative sum over the pairs in order of
    that count, read at each j. Whole numbers sum exactly in any order, so these are the matrix products' own
    values, without a matrix product on BLAS's threads (which wait for a core where another process holds one)."""
    j = np.arange(width)
    out = []
    for count in (pairs[:, 0], pairs[:, 1] - pairs[:, 0], pairs[:, 1]):
        order = np.argsort(count, kind="stable")
        above = np.zeros(weights.shape[:-1] + (len(count) + 1,))  # above[i]: the weight of the sorted pairs from i
        above[..., :-1] = np.cumsum(weights[..., order[::-1]], axis=-1)[..., ::-1]
        out.append(above[..., np.searchsorted(count[order], j, side="right")])
    return out


def _log_dot(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sum_j w[f, j] log(x[f, g] + j) for each fit f and grid point g (the einsum the grid search takes), once per
    distinct x of a fit (a + b repeats across the grid: 90 values of 1,681) and a block of them at a time, so the
    logs stay small: fresh memory for all of them cost more than the logs."""
    j = np.arange(w.shape[1], dtype=np.float64)
    block = max(1, _BLOCK_CELLS // len(j))
    out = np.empty(x.shape)
    for f in range(len(x)):
        values, inverse = np.unique(x[f], return_inverse=True)
        each = np.empty(len(values))
        for at in range(0, len(values), block):
            each[at:at + block] = np.einsum("gj,j->g", np.log(values[at:at + block, None] + j), w[f])
        out[f] = each[inverse]
    return out


def _fit(A: np.ndarray, B: np.ndarray, N: np.ndarray, raw: np.ndarray,
         start: RatePrior | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zooming grid search over (logit of the mean, log of a + b), one fit per row of A, B, N (tail counts):
    no gradient to diverge where the maximum sits at a boundary (every task at one rate drives a + b to its
    cap, a floor drives the mean down). A resample starts at the full fit (`start`) on a narrower grid."""
    A, B, N = np.atleast_2d(A), np.atleast_2d(B), np.atleast_2d(N)
    fits = len(A)
    raw = np.clip(np.asarray(raw, dtype=np.float64).reshape(-1), 1e-6, 1 - 1e-6)
    if start is None:
        centre = np.stack([np.log(raw / (1 - raw)), np.zeros(fits)], axis=1)
        width, grid, zooms = np.array([8.0, 9.0]), _GRID, _ZOOMS
    else:
        centre = np.tile([math.log(start.a / start.b), math.log(start.a + start.b)], (fits, 1))
        width, grid, zooms = np.array([1.5, 2.5]), 11, 4
    steps = np.linspace(-1.0, 1.0, grid)
    best_ll = np.full(fits, -np.inf)
    best_a, best_b = np.ones(fits), np.ones(fits)
    rows = np.arange(fits)
    for _ in range(zooms):
        mu = centre[:, :1] + width[0] * steps  # fits x grid
        ls = np.clip(centre[:, 1:] + width[1] * steps, *D.PRIOR_LOG_CONC_RANGE)
        m = 1 / (1 + np.exp(-mu))
        s = np.exp(ls)
        a = (m[:, :, None] * s[:, None, :]).reshape(fits, -1)  # fits x grid^2
        b = ((1 - m)[:, :, None] * s[:, None, :]).reshape(fits, -1)
        ll = _log_dot(a, A) + _log_dot(b, B) - _log_dot(a + b, N)
        i = ll.argmax(axis=1)
        top = ll[rows, i]
        better = top > best_ll
        best_ll = np.where(better, top, best_ll)
        best_a = np.where(better, a[rows, i], best_a)
        best_b = np.where(better, b[rows, i], best_b)
        centre = np.stack([mu[rows, i // grid], ls[rows, i % grid]], axis=1)
        width = width * 4 / (grid - 1)
    return best_a, best_b, best_ll


def fit_prior(passes: np.ndarray, rollouts: np.ndarray, model: str | None = None) -> RatePrior:
    """The prior maximising the likelihood of the per-group counts: each model of D.PRIOR_MODELS fitted (the
    plain Beta by grid search, the point masses added from it by _fit_masses) and the one with the least BIC kept, or
    `model` where given (the plain Beta where no group is all-fail / all-pass for its mass to explain)."""
    c, n = check_counts(passes, rollouts)
    if model is not None and model not in D.PRIOR_MODELS:
        raise InputError(f"model is {model!r}; give one of {', '.join(D.PRIOR_MODELS)}", field="model")
    pairs, weight = distinct_pairs(c, n)
    w, pa, pb, pn = _tails(c, n)
    a, b, ll = _fit(*_tail_counts(w, pairs, pa.shape[1]), (c.sum() + 0.5) / (n.sum() + 1.0))
    fits = {"beta": RatePrior(a=float(a[0]), b=float(b[0]), log_likelihood=float(ll[0]))}
    none_fail, all_pass = pairs[:, 0] == 0, pairs[:, 0] == pairs[:, 1]
    # No model beats the saturated one (each n's counts at their own shares). Where even that is not a point
    # mass's BIC penalty above the plain Beta, no point mass can win: their fits are skipped (the usual case).
    # Nor are they tried on groups mostly under D.PRIOR_MASS_MIN_ROLLOUTS rollouts, which cannot show them.
    base = int(pairs[:, 1].max()) + 1
    per_n = np.bincount(pairs[:, 1], weights=weight, minlength=base)[pairs[:, 1]]
    log_choose = np.array([math.lgamma(m + 1) - math.lgamma(x + 1) - math.lgamma(m - x + 1) for x, m in pairs])
    ceiling = float(weight @ (np.log(weight / per_n) - log_choose))
    hopeless = model is None and (ceiling - fits["beta"].log_likelihood <= 0.5 * math.log(len(c))
                                  or float(np.median(n)) < D.PRIOR_MASS_MIN_ROLLOUTS)
    for name, (zero, one) in D.PRIOR_MODELS.items():
        if name == "beta" or hopeless or (model is not None and name != model):
            continue
        # each mass starts at half and at nine tenths of the groups it could explain (two starts: a U-shaped
        # Beta and a mass can share those groups either way); a mass that starts at 0 would stay there
        z0 = np.array(D.PRIOR_MASS_STARTS) * (weight[none_fail].sum() / len(c) if zero else 0.0)
        o0 = np.array(D.PRIOR_MASS_STARTS) * (weight[all_pass].sum() / len(c) if one else 0.0)
        if (zero and not z0[0]) or (one and not o0[0]):
            continue
        starts = len(z0)
        fa, fb, fz, fo, fll = _fit_masses(np.tile(w, (starts, 1)), pa, pb, pn, none_fail, all_pass,
                                          np.repeat(a, starts), np.repeat(b, starts), z0, o0, D.PRIOR_FIT_ITERATIONS)
        i = int(np.argmax(fll))
        fits[name] = RatePrior(a=float(fa[i]), b=float(fb[i]), log_likelihood=float(fll[i]), zero=float(fz[i]),
                               one=float(fo[i]), model=name)
    if model is not None:
        return fits.get(model, fits["beta"])
    return min(fits.values(), key=lambda f: bic(f, len(c)))


def bic(prior: RatePrior, groups: int) -> float:
    """Schwarz's criterion: -2 log L + (free parameters) log(groups); the least one wins (D.PRIOR_RULE)."""
    free = 2 + sum(D.PRIOR_MODELS[prior.model])
    return -2.0 * prior.log_likelihood + free * math.log(groups)


def pair_log_beta(pa, pb, pn, a, b) -> np.ndarray:
    """log P(c | n) under the beta-binomial without its binomial coefficient, fits x distinct pairs."""
    j = np.arange(pa.shape[1], dtype=np.float64)
    return (np.log(a[:, None] + j) @ pa.T + np.log(b[:, None] + j) @ pb.T
            - np.log((a + b)[:, None] + j) @ pn.T)


def _mixture(w, pa, pb, pn, z_on, o_on, a, b, zero, one):
    """Each pair's Beta part and mixture probability (fits x pairs), and each fit's log-likelihood."""
    beta = np.exp(pair_log_beta(pa, pb, pn, a, b)) * (1 - zero - one)[:, None]
    mix = zero[:, None] * z_on + one[:, None] * o_on + beta
    return beta, mix, (w * np.log(np.maximum(mix, 1e-300))).sum(axis=1)


def _fit_masses(w, pa, pb, pn, none_fail, all_pass, a, b, zero, one, iterations: int):
    """Maximum likelihood for the zero-one-inflated beta-binomial, one fit per row of w (group counts per
    distinct pair), by BHHH ascent (Berndt, Hall, Hall & Hausman 1974: Newton with the score's outer product
    for the Hessian, exact for counts at their expected shares) on theta = (log a, log b, u0, u1), where
    zero = e^u0 / (1 + e^u0 + e^u1) and one alike. A step that does not raise the likelihood is halved (then
    dropped), so a fit never ends worse than it started; a mass that starts at 0 stays there. Stops when no
    fit gains D.PRIOR_FIT_TOLERANCE, or after `iterations`."""
    z_on, o_on = none_fail.astype(np.float64), all_pass.astype(np.float64)
    free = np.stack([np.ones_like(a), np.ones_like(a), zero > 0, one > 0], axis=1)
    with np.errstate(divide="ignore"):
        theta = np.stack([np.log(a), np.log(b), np.log(zero) - np.log1p(-zero - one),
                          np.log(one) - np.log1p(-zero - one)], axis=1)
    j = np.arange(pa.shape[1], dtype=np.float64)

    def unpack(t):
        e0, e1 = np.exp(t[:, 2]), np.exp(t[:, 3])
        return np.exp(t[:, 0]), np.exp(t[:, 1]), e0 / (1 + e0 + e1), e1 / (1 + e0 + e1)

    def score(t):
        a, b, z, o = unpack(t)
        beta, mix, ll = _mixture(w, pa, pb, pn, z_on, o_on, a, b, z, o)
        iab = (1 / ((a + b)[:, None] + j)) @ pn.T
        d = np.stack([beta * a[:, None] * ((1 / (a[:, None] + j)) @ pa.T - iab),
                      beta * b[:, None] * ((1 / (b[:, None] + j)) @ pb.T - iab),
                      z[:, None] * (z_on - mix), o[:, None] * (o_on - mix)], axis=2)
        # A pattern the mixture gives no mass (it underflows at k in the thousands) adds nothing to the score: its
        # log-likelihood is -inf and the step that led there is rejected below.
        d = np.divide(d, mix[..., None], out=np.zeros_like(d), where=mix[..., None] > 0)
        d = d * free[:, None, :]
        return ll, (w[..., None] * d).sum(axis=1), np.einsum("fp,fpi,fpj->fij", w, d, d)

    ll, grad, info = score(theta)
    for _ in range(iterations):
        info = info + np.eye(4) * (1e-9 + (1 - free[:, :, None]))
        step = np.linalg.solve(info, grad[..., None])[..., 0] * free
        step *= np.minimum(1.0, 3.0 / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))  # keep its direction
        gained = np.zeros(len(w))
        for _ in range(8):
            new_theta = theta + step
            conc = np.logaddexp(new_theta[:, 0], new_theta[:, 1])  # a + b held in range, the mean where it is
            new_theta[:, :2] += (np.clip(conc, D.PRIOR_LOG_CONC_RANGE[0], D.PRIOR_MASS_LOG_CONC_MAX) - conc)[:, None]
            new_ll, new_grad, new_info = score(new_theta)
            up = new_ll > ll
            gained = np.where(up, new_ll - ll, gained)
            theta, ll = np.where(up[:, None], new_theta, theta), np.where(up, new_ll, ll)
            grad, info = np.where(up[:, None], new_grad, grad), np.where(up[:, None, None], new_info, info)
            if up.all():
                break
            step = np.where(up[:, None], 0.0, step / 4)
        if np.all(gained < D.PRIOR_FIT_TOLERANCE):
            break
    a, b, zero, one = unpack(theta)
    return a, b, zero, one, ll


def _log_likelihood(A, B, N, a, b):
    j = np.arange(A.shape[1], dtype=np.float64)
    return ((A * np.log(a[:, None] + j)).sum(axis=1) + (B * np.log(b[:, None] + j)).sum(axis=1)
            - (N * np.log((a + b)[:, None] + j)).sum(axis=1))


def _newton(A, B, N, a, b, steps: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Newton ascent on (log a, log b) for many fits at once, from (a, b); a step that does not raise the
    likelihood is halved (then dropped), so a fit never ends worse than it started."""
    j = np.arange(A.shape[1], dtype=np.float64)
    lo, hi = D.PRIOR_LOG_CONC_RANGE
    ll = _log_likelihood(A, B, N, a, b)
    for _ in range(steps):
        ia, ib, iab = 1 / (a[:, None] + j), 1 / (b[:, None] + j), 1 / ((a + b)[:, None] + j)
        ga = (A * ia).sum(axis=1) - (N * iab).sum(axis=1)
        gb = (B * ib).sum(axis=1) - (N * iab).sum(axis=1)
        hab = (N * iab * iab).sum(axis=1)
        haa = hab - (A * ia * ia).sum(axis=1)
        hbb = hab - (B * ib * ib).sum(axis=1)
        g1, g2 = a * ga, b * gb  # the same in log parameters
        h11, h22, h12 = a * a * haa + g1, b * b * hbb + g2, a * b * hab
        det = h11 * h22 - h12 * h12
        concave = (h11 < 0) & (det > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d1 = np.where(concave, -(h22 * g1 - h12 * g2) / det, 0.1 * np.sign(g1))
            d2 = np.where(concave, -(h11 * g2 - h12 * g1) / det, 0.1 * np.sign(g2))
        d1, d2 = np.clip(np.nan_to_num(d1), -2, 2), np.clip(np.nan_to_num(d2), -2, 2)
        moved = False
        for _ in range(4):
            na, nb = a * np.exp(d1), b * np.exp(d2)
            conc = np.log(na + nb)
            shift = np.clip(conc, lo, hi) - conc  # keep a + b in range, the mean where it was
            na, nb = na * np.exp(shift), nb * np.exp(shift)
            new = _log_likelihood(A, B, N, na, nb)
            up = new > ll
            moved = moved or bool(up.any())
            a, b, ll = np.where(up, na, a), np.where(up, nb, b), np.where(up, new, ll)
            if up.all():
                break
            d1, d2 = np.where(up, 0.0, d1 / 2), np.where(up, 0.0, d2 / 2)
        if not moved:  # no fit moved: every later step starts where this one did and would end the same
            break
    return a, b


def resampled_priors(passes: np.ndarray, rollouts: np.ndarray, start: RatePrior, draws: int = D.PRIOR_DRAWS,
                     seed: int = D.BOOTSTRAP_SEED) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The prior refitted on `draws` task resamples, and the resamples (counts over the distinct pairs): a
    multinomial over the distinct (passes, rollouts) pairs, so a resample costs a fit, not a pass over tasks.
    Each refit starts at the full fit (a resample's maximum lies near it), vectorised over draws: Newton ascent
    for a plain Beta, D.PRIOR_RESAMPLE_ITERATIONS steps of the point-mass fit for one with point masses (the model is the full
    fit's; it is not chosen again per draw). Returns (a, b, zero, one), one of each per draw, and the picks
    (draws x distinct pairs, in distinct_pairs's order)."""
    c, n = check_counts(passes, rollouts)
    pairs, _ = distinct_pairs(c, n)
    w, pa, pb, pn = _tails(c, n)
    picks = np.random.default_rng(seed).multinomial(len(c), w / w.sum(), size=draws).astype(np.float64)
    a, b = np.full(draws, start.a), np.full(draws, start.b)
    zero, one = np.full(draws, start.zero), np.full(draws, start.one)
    if start.model == "beta":
        a, b = _newton(*_tail_counts(picks, pairs, pa.shape[1]), a, b)
    else:
        a, b, zero, one, _ = _fit_masses(picks, pa, pb, pn, pairs[:, 0] == 0, pairs[:, 0] == pairs[:, 1], a, b,
                                         zero, one, D.PRIOR_RESAMPLE_ITERATIONS)
    return (a, b, zero, one), picks
