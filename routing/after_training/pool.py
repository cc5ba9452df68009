"""The training pool a freeze leaves: how many tasks a freeze may hold out (at most FREEZE_MAX_SHARE of the suite,
so a pool at least as large is left to train on), what a capped held-out set detects, and the route's next step
sized on the pool instead of the whole suite.
"""

from __future__ import annotations

import math

from .. import defaults as D
from pick_a_method.common.errors import InputError
from ..forecasting import holdout_size
from ..verdicts import NextStep


def pool_cap(suite: int, needed: int, n_tasks: int | None, *, effect: float, base: float, k: int, power: float,
             alpha: float) -> tuple[int, str | None]:
    """(tasks to freeze, a warning or None): `needed` (holdout_size's) up to the cap; `n_tasks` as asked. A suite
    too small to hold out even MIN_HOLDOUT_TASKS under the cap is refused, with what to do."""
    cap = math.floor(suite * D.FREEZE_MAX_SHARE)
    if n_tasks is not None:
        if not isinstance(n_tasks, int) or isinstance(n_tasks, bool) or n_tasks < 1:
            raise InputError(f"n_tasks is {n_tasks!r}; give a whole number of tasks, 1 or more", field="n_tasks")
        if n_tasks > suite:
            raise InputError(f"holding out {n_tasks} tasks (as asked) takes more than the {suite} graded tasks in the "
                             f"rows: add tasks, or pass fewer n_tasks (fewer tasks detect only a larger gain)",
                             field="n_tasks")
        over = (f"freezing {n_tasks} of {suite} tasks leaves {suite - n_tasks} to train on (over the "
                f"{D.FREEZE_MAX_SHARE:.0%} cap, as n_tasks asked)") if n_tasks > cap else None
        return n_tasks, over
    if cap < D.MIN_HOLDOUT_TASKS:
        raise InputError(f"the rows hold {suite} graded tasks: too few both to hold out (a freeze takes at most "
                         f"{D.FREEZE_MAX_SHARE:.0%}, and {D.MIN_HOLDOUT_TASKS} at least) and to train on. Freeze "
                         f"from a "
                         f"separate eval suite's rows (route --freeze on them; train on these), or add tasks",
                         field="n_tasks")
    if needed <= cap:
        return needed, None
    seen = detectable(cap, base=base, k=k, power=power, alpha=alpha)
    gain = f"about a {seen:g} gain" if seen is not None else "no gain of 0.5 or less"
    larger = f"register a larger effect ({seen:g}), " if seen is not None else ""
    return cap, (f"holdout_size asks {needed} held-out tasks for a {effect:g} gain at k={k}, more than the {cap} a "
                 f"freeze holds out of these {suite} (at most {D.FREEZE_MAX_SHARE:.0%}, so {suite - cap} stay to "
                 f"train on): froze {cap}, which detect {gain}. These rows are too few both to hold out for "
                 f"{effect:g} and to train on: for the registered gain, freeze from a separate eval suite's rows "
                 f"(route --freeze on them, and train on all of these), {larger}or pass n_tasks to hold out more "
                 f"and train on fewer")


def detectable(n_tasks: int, *, base: float, k: int, power: float, alpha: float) -> float | None:
    """The smallest gain on a 0.01 grid (up to 0.5) that n_tasks held-out tasks detect, or None."""
    for step in range(1, 51):
        effect = step / 100
        if base + effect > 1:
            return None
        if holdout_size(effect, base=base, k=max(k, 1), power=power, alpha=alpha).n_tasks <= n_tasks:
            return effect
    return None


def pool_step(step: NextStep, summary: str, pool: int, frozen_tasks: int) -> tuple[NextStep, str]:
    """The route's next step (and summary) sized on the `pool` tasks the freeze left: a step never samples more
    distinct prompts than the pool holds; both say the frozen tasks are not trained on."""
    args = dict(step.arguments)
    group = (args.get("knobs") or {}).get("group_size") if isinstance(args.get("knobs"), dict) else None
    inner = (args.get("knobs") or {}).get("method") if isinstance(args.get("knobs"), dict) else None
    if group is None and isinstance(inner, dict):
        group = inner.get("group_size")
    said = (f" Train on the {pool} tasks the freeze left, never on the {frozen_tasks} frozen ones (the manifest "
            f"lists them).")
    batch = args.get("batch")
    if isinstance(batch, int) and isinstance(group, int) and group > 0 and batch // group > pool:
        args["batch"] = pool * group
        said += f" A step samples all {pool} of them x {group} (batch {pool * group}), not {batch // group} prompts."
    return step.model_copy(update={"arguments": args, "why": step.why + said}), summary + said
