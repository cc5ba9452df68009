"""GroupwiseGrading (MiMo-V2.6 technical report, Xiaomi 2026, section 4.3): shaping inside a group.

* Reward mode (GRS, 4.3.1): each passing reward R becomes R * max(floor, solution) * max(floor,
  behavior), the two scores in [0, 1] from ``grader(item, rubric)``; failures keep their reward.
* Advantage mode (GAR, 4.3.2): for a mixed group, ``grader(items)`` returns a ranking of the passes
  (best first; an inner list is a tie) or explicit factors in (0, 1], and optionally "hacks"
  (passing indices that gamed the reward). The pass mass of the group-centred advantage is
  redistributed towards the better passes (``redistribute``), capped, and re-centred.

These are per-group operations on a handful of numbers, so they are plain Python. ``groupwise_update``
turns the shaped advantages into per-token coefficients A / N like the grouped rules.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict

from pick_a_method.methods import defaults as D


def factors_from_ranking(ranking: Sequence[Any], min_factor: float = D.GROUPWISE_MIN_FACTOR) -> dict[int, float]:
    """Linear factors from a best-first ranking: 1 for the best, ``min_factor`` for the worst; ties share their mean rank.

    ``[3, 1, 0]`` -> {3: 1.0, 1: 0.75, 0: 0.5}; ``[3, [1, 0], 5]`` -> {3: 1.0, 1: 0.75, 0: 0.75, 5: 0.5}.
    """
    tiers: list[list[int]] = []
    for entry in ranking:
        tier = list(entry) if isinstance(entry, (list, tuple)) else [entry]
        for idx in tier:
            if isinstance(idx, bool) or not isinstance(idx, int):
                raise ValueError(f"a ranking lists item indices (ints); got {idx!r}")
        if tier:
            tiers.append(tier)
    flat = [i for tier in tiers for i in tier]
    if len(set(flat)) != len(flat):
        raise ValueError(f"a ranking must name each index once; got {list(ranking)!r}")
    n = len(flat)
    out: dict[int, float] = {}
    pos = 0
    for tier in tiers:
        mean_rank = pos + (len(tier) - 1) / 2
        factor = 1.0 if n == 1 else 1.0 - (1.0 - min_factor) * mean_rank / (n - 1)
        for idx in tier:
            out[idx] = factor
        pos += len(tier)
    return out


def redistribute(
    rewards: Sequence[float],
    factors: Mapping[int, float],
    cap: float = D.GROUPWISE_CAP,
    pass_threshold: float = D.PASS_THRESHOLD,
) -> tuple[list[float], float | None]:
    """Eq. 3: (re-centred advantages, lambda or None when unshaped).

    A_i = R_i - mean(R); passes P = {R_i >= pass_threshold}. With no pass or all passing, or a
    non-positive pass mass, A is returned as is. Else lambda = min(sum_P A / sum_P f A, cap),
    A'_i = lambda f_i A_i on passes, A_i on failures, minus the mean of A'. Uncapped, failures are
    unchanged and the pass mass is conserved.
    """
    R = [float(r) for r in rewards]
    n = len(R)
    if n == 0:
        return [], None
    mean = sum(R) / n
    A = [r - mean for r in R]
    passes = [i for i, r in enumerate(R) if r >= pass_threshold]
    if not passes or len(passes) == n:
        return A, None
    for i in passes:
        f = factors.get(i)
        if f is None or not (0.0 < float(f) <= 1.0):
            raise ValueError(f"pass {i} needs a factor in (0, 1]; got {f!r}")
    mass = sum(A[i] for i in passes)
    weighted = sum(float(factors[i]) * A[i] for i in passes)
    if mass <= 0 or weighted <= 0:
        return A, None
    lam = min(mass / weighted, cap)
    shaped = list(A)
    for i in passes:
        shaped[i] = lam * float(factors[i]) * A[i]
    centre = sum(shaped) / n
    return [a - centre for a in shaped], lam


class SpreadReport(BaseModel):
    """Whether grader scores spread enough to matter (the text-to-SQL null result: ~0.93 everywhere)."""

    model_config = ConfigDict(frozen=True)
    ok: bool
    n: int
    std: float
    median: float
    within_band: float
    band: float
    min_std: float
    cluster_share: float


def spread(
    scores: Sequence[float],
    min_std: float = D.SPREAD_MIN_STD,
    band: float = D.SPREAD_BAND,
    cluster_share: float = D.SPREAD_CLUSTER_SHARE,
) -> SpreadReport:
    """ok iff n >= 2, population std >= min_std and at most ``cluster_share`` of scores sit within ``band`` of the median."""
    xs = [float(s) for s in scores]
    n = len(xs)
    std = statistics.pstdev(xs) if n >= 2 else 0.0
    median = statistics.median(xs) if xs else math.nan
    within = sum(abs(x - median) <= band for x in xs) / n if n else 0.0
    return SpreadReport(
        ok=n >= 2 and std >= min_std and within <= cluster_share,
        n=n,
        std=std,
        median=median,
        within_band=within,
        band=band,
        min_std=min_std,
        cluster_share=cluster_share,
    )


_LOCK = threading.Lock()


def _bump(obj: Any, key: str, by: float = 1) -> None:
    with _LOCK:
        obj._stats[key] = obj._stats.get(key, 0) + by


def _reward(item: Mapping[str, Any]) -> float:
    r = item.get("reward")
    return 0.0 if r is None else float(r)


def _rubric(obj: Any, items: Sequence[Mapping[str, Any]]) -> Any:
    rubrics = obj.rubrics
    if rubrics is None:
        return None
    task = items[0].get("task_id") if items else None
    if isinstance(rubrics, Mapping):
        return rubrics.get(task)
    cache = obj._stats.setdefault("_rubric_cache", {})
    if task not in cache:
        cache[task] = rubrics(items)
    return cache[task]


def shape_group(obj: Any, items: Sequence[Mapping[str, Any]]) -> list[float]:
    """Shape one group; reward mode returns rewards, advantage mode returns advantages + the group mean.

    (Adding the mean back lets a trainer that subtracts the group mean recover eq. 3 exactly.) A grader
    that raises or returns something unusable leaves the group unshaped and is counted as a failure.
    """
    rewards = [_reward(it) for it in items]
    _bump(obj, "groups")
    passes = [i for i, r in enumerate(rewards) if r >= obj.pass_threshold]
    mixed = 0 < len(passes) < len(rewards)
    if mixed:
        _bump(obj, "mixed")
    if obj.grader is None:
        return rewards if obj.mode == "reward" else list(rewards)
    if obj.mode == "reward":
        rubric = _rubric(obj, items)
        out = list(rewards)
        for i in passes:
            _bump(obj, "grader_calls")
            try:
                verdict = obj.grader(items[i], rubric)
                sol = float(verdict["solution"])
                beh = float(verdict["behavior"])
                if not (0.0 <= sol <= 1.0 and 0.0 <= beh <= 1.0):
                    raise ValueError("score outside [0, 1]")
            except Exception:  # noqa: BLE001 - a grader's failure leaves the reward as it was
                _bump(obj, "grader_failures")
                continue
            out[i] = rewards[i] * max(obj.floor, sol) * max(obj.floor, beh)
            obj._stats.setdefault("scores", []).append(max(obj.floor, sol) * max(obj.floor, beh))
        return out
    if not mixed:
        return list(rewards)
    group = [
        {**dict(it), "index": i, "reward": rewards[i], "passed": rewards[i] >= obj.pass_threshold}
        for i, it in enumerate(items)
    ]
    _bump(obj, "grader_calls")
    try:
        verdict = obj.grader(group)
        if not isinstance(verdict, Mapping):
            raise ValueError("not a mapping")
        effective = list(rewards)
        hacks = [h for h in verdict.get("hacks", []) or [] if isinstance(h, int) and h in passes]
        if obj.hack_zero:
            for h in hacks:
                effective[h] = 0.0
        if hacks:
            _bump(obj, "hacks", len(hacks))
        if "factors" in verdict:
            factors = {int(k): float(v) for k, v in dict(verdict["factors"]).items()}
        elif "ranking" in verdict:
            factors = factors_from_ranking(verdict["ranking"], obj.min_factor)
        else:
            raise ValueError("no ranking or factors")
        if not obj.hack_zero:
            for h in hacks:
                factors.setdefault(h, obj.min_factor)
        shaped, lam = redistribute(effective, factors, obj.cap, obj.pass_threshold)
    except Exception:  # noqa: BLE001 - an unusable verdict leaves the group unshaped
        _bump(obj, "grader_failures")
        return list(rewards)
    if lam is not None and lam >= obj.cap:
        _bump(obj, "lambda_capped")
    obj._stats.setdefault("factors", []).extend(factors[i] for i in passes if i in factors)
    mean_eff = sum(effective) / len(effective)
    return [a + mean_eff for a in shaped]


def shape_flat(
    obj: Any,
    rewards: Sequence[float],
    prompts: Sequence[Any],
    completions: Sequence[Any],
    *,
    group_size: int,
    task_id: Sequence[Any] | None = None,
) -> list[float]:
    """Shape consecutive groups of ``group_size`` (TRL's layout); groups graded ``concurrency`` at a time."""
    n = len(rewards)
    if len(prompts) != n or len(completions) != n or (task_id is not None and len(task_id) != n):
        raise ValueError("rewards, prompts, completions (and task_id) must have the same length")
    if group_size < 1 or n % group_size:
        raise ValueError(f"{n} rewards do not split into groups of {group_size}")
    items = [
        {"prompt": prompts[i], "completion": completions[i], "reward": rewards[i], "task_id": None if task_id is None else task_id[i]}
        for i in range(n)
    ]
    groups = [items[i : i + group_size] for i in range(0, n, group_size)]
    if obj.concurrency > 1 and len(groups) > 1:
        with ThreadPoolExecutor(max_workers=obj.concurrency) as pool:
            shaped = list(pool.map(lambda g: shape_group(obj, g), groups))
    else:
        shaped = [shape_group(obj, g) for g in groups]
    return [x for group in shaped for x in group]


def trl_reward(obj: Any, base: Callable[..., Sequence[float]], num_generations: int) -> Callable[..., list[float]]:
    """A TRL reward function: ``base`` scores, then ``shape``. Use TRL's scale_rewards="none" (Dr. GRPO):
    a std division keeps only the ordering of the shaped advantages."""

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
        scores = list(base(prompts=prompts, completions=completions, **kwargs))
        return shape_flat(obj, scores, prompts, completions, group_size=num_generations, task_id=kwargs.get("task_id"))

    return reward


def groupwise_update(obj: Any, batch: Any, **kwargs: Any) -> Any:
    """The update rule (see ``_groupwise_update``), run as every rule is: without autograd, ``stats=False`` honoured."""
    from pick_a_method.methods.rules._common import rule

    return rule(_groupwise_update)(obj, batch, **kwargs)


def _groupwise_update(obj: Any, batch: Any, call: Any) -> Any:
    """Shape each group's rewards (grader calls), then coefficients A / N with A the shaped, group-centred advantage."""
    from pick_a_method.methods.rules.grouped import host_group_update

    def advantages(members: list[list[int]], rewards: list[float], info: list[dict]) -> tuple:
        adv, before = [0.0] * len(rewards), dict(obj._stats)
        for idx in members:
            shaped = shape_group(obj, [{**info[i], "reward": rewards[i]} for i in idx])
            centre = sum(shaped) / len(shaped)
            for i, v in zip(idx, shaped):
                adv[i] = v - centre
        notes = [] if obj.grader is not None else [
            "no grader given: shaping skipped, these are plain group-centred advantages (a preview)."]
        calls = obj._stats.get("grader_calls", 0) - before.get("grader_calls", 0)
        fails = obj._stats.get("grader_failures", 0) - before.get("grader_failures", 0)
        if fails:
            notes.append(f"{fails} of {calls} grader calls failed or returned nothing usable; those groups were left "
                         "unshaped.")
        mixed = sum(1 for idx in members if len({rewards[i] >= obj.pass_threshold for i in idx}) > 1)
        return adv, notes, {"mixed_group_share": mixed / len(members), "grader_calls": float(calls),
                            "grader_failures": float(fails)}

    return host_group_update(obj, batch, call, obj.group_size, advantages)
