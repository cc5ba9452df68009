"""Step 7: how many held-out tasks it takes to prove an effect (paired normal approximation, Miller 2024)."""

from __future__ import annotations

import math

import numpy as np

from .. import defaults as D
from pick_a_method.common.errors import InputError
from ..paired import diff_sd, model_sd, shared_index
from ..shared import MAX_K, groups
from ..readers import as_rows
from ..rows import RowsLike
from ..stats import bootstrap_moments, tasks_needed, z_power
from ..verdicts import HoldoutSize, NextStep


def _concentrated_sd(base: float, effect: float, k: int) -> float | None:
    """sd when the gain sits on the fewest tasks, each going from p to 1 (whileai simulations/score/stats.py
    _concentrated_task_sd)."""
    p = min(max(base, 0.0), 1.0)
    if p >= 1.0:
        return None
    share = effect / (1 - p)
    if share > 1:
        return None
    within = ((1 - share) * 2 * p * (1 - p) + share * p * (1 - p)) / k
    between = effect**2 * (1 - share) / share
    return math.sqrt(within + between)


def holdout_size(effect: float = D.PROVE_EFFECT, *, base: float | None = None, k: int | None = None,
                 power: float = D.HOLDOUT_POWER, alpha: float = D.HOLDOUT_ALPHA, before: RowsLike | None = None,
                 after: RowsLike | None = None, task_std: float | None = None,
                 pass_threshold: float = D.PASS_THRESHOLD) -> HoldoutSize:
    """Held-out tasks needed to detect `effect` at `power` and two-sided `alpha`:
    n = ceil(((z_{1-alpha/2} + z_power) * sd / effect)^2), at least 2.

    sd comes from, best first: `before` and `after` rows on shared tasks (sd of per-task differences), a given
    `task_std`, or the binomial model at `base` (read off `before` when given) with k rollouts per task."""
    for name, v in (("effect", effect), ("power", power), ("alpha", alpha)):
        if not 0 < v < 1:
            raise InputError(f"{name} is {v}; it must lie strictly between 0 and 1", field=name)
    if task_std is not None and not task_std > 0:
        raise InputError(f"task_std is {task_std}; give a positive standard deviation", field="task_std")
    if after is not None and before is None:
        raise InputError("`after` needs `before`: pass the rows of both arms on the same tasks", field="after")
    if k is not None and k < 1:
        raise InputError(f"k is {k}; give at least 1 rollout per task", field="k")
    if k is not None and k > MAX_K:  # past 1.8e308 the binomial sd overflows; long before, it means nothing
        raise InputError(f"k is over {MAX_K:,}; give the rollouts per task you will sample", field="k")
    if base is not None and not 0 <= base <= 1:
        raise InputError(f"base is {base}; a pass rate lies in [0, 1]", field="base")
    base = D.HOLDOUT_BASE if base is None else float(base)
    k = D.HOLDOUT_K if k is None else int(k)
    warnings: list[str] = []
    sd_source = "model"
    sd = None
    n_paired = None
    saturated = False
    spread_draws = None  # bootstrap draws of base (before alone) or of the paired sd (before + after)

    if before is not None:
        b = groups(as_rows(before, what="before"), pass_threshold)
        if len(b.n) == 0:
            raise InputError("`before` has no graded rows; grade them, or size from base and k", field="before")
        if after is not None:
            a = groups(as_rows(after, what="after"), pass_threshold)
            bi, ai = shared_index(b.names, a.names)
            if len(bi) < D.MIN_CI_TASKS:
                raise InputError(f"`before` and `after` share {len(bi)} task(s); a paired sd needs "
                                 f"{D.MIN_CI_TASKS} or more", field="after")
            diff = a.rates[ai] - b.rates[bi]
            base, k, n_paired = float(b.rates[bi].mean()), int(b.n[bi].min()), len(bi)
            sd = diff_sd(diff)
            sd_source = "rows"
            saturated = base >= D.HOLDOUT_CEILING or sd == 0
            if not saturated:
                spread_draws = ("sd", np.sqrt(bootstrap_moments(diff)[1]))
        else:
            rates = b.rates
            base, k = float(rates.mean()), int(b.n.min())
            saturated = base >= D.HOLDOUT_CEILING or rates.min() == rates.max()
            if len(rates) >= 3 and not saturated:
                spread_draws = ("base", bootstrap_moments(rates)[0])
                var = float(rates.var())
                if 0 < base < 1 and var < base * (1 - base):
                    warnings.append(f"per-task rates spread (sd {rates.std():.3f}); sizing as independent arms "
                                    f"overstates the need by about {1 / (1 - var / (base * (1 - base))):.2f}x")
        if saturated:
            warnings.append(f"the rows sit at the ceiling (base {base:.3f}) or do not vary; sized at the default "
                            f"base {D.HOLDOUT_BASE} instead: harden the eval before you measure on it")
            base, sd, sd_source = D.HOLDOUT_BASE, None, "model"
    if sd is None and task_std is not None and before is None:
        sd, sd_source = float(task_std), "given"
    if sd is None:
        sd = model_sd(base, effect, k)
    n = tasks_needed(sd, effect, power, alpha)
    conc = None
    if sd_source == "model":
        csd = _concentrated_sd(base, effect, k)
        conc = tasks_needed(csd, effect, power, alpha) if csd is not None else None
    low = high = None
    if spread_draws is not None and sd_source != "given":
        kind, draws = spread_draws
        sds = draws if kind == "sd" else np.array([model_sd(x, effect, k) for x in np.unique(draws)])[
            np.searchsorted(np.unique(draws), draws)]
        inner = (z_power(power, alpha) * sds / effect) ** 2
        ns = np.maximum(D.MIN_HOLDOUT_TASKS, np.ceil(inner - 1e-9))
        low, high = int(min(n, np.percentile(ns, 2.5))), int(max(n, np.percentile(ns, 97.5)))
    z_half = z_power(0.5, alpha)  # Phi^-1(1 - alpha/2) alone
    half = z_half * sd / math.sqrt(n)
    rng_text = f" (range {low} to {high} over a bootstrap of the rows)" if low is not None else ""
    return HoldoutSize(
        verdict="sized", n_tasks=n, effect=effect, base=round(base, 4), k=k, power=power, alpha=alpha,
        task_std=round(sd, 4), sd_source=sd_source, half_width=round(half, 4), n_tasks_concentrated=conc,
        n_paired=n_paired, saturated=saturated, n_tasks_low=low, n_tasks_high=high, warnings=warnings,
        summary=(f"{n} held-out tasks at k={k} detect a {effect:g} gain from base {base:.2f} with power {power:g} "
                 f"at alpha {alpha:g}{rng_text}."
                 + (f" If the gain sits on few tasks: {conc}." if conc else "")),
        next_step=NextStep(tool=None, arguments={"n_tasks": n, "k": k},
                           why="Freeze that many held-out tasks, and train a random selection of the same size "
                               "beside the real one as a control."))
