"""Reinforce-Ada-Seq (Xiong et al. 2025, arXiv:2510.04996): keep sampling a prompt until its group splits.

Each round draws ``round_size`` samples for every still-active prompt. A sample is right when its
reward is strictly above ``threshold``. A prompt retires when its exit rule is met:

* ``balanced``: at least keep//2 right and keep - keep//2 wrong;
* ``positive``: at least one right.

After ``max_rounds`` (or when every prompt retired) each prompt keeps ``keep`` samples: as many
right ones as keep//2 allows, then wrong ones, topped up from whichever side has spare (first
drawn, first kept). The advantage is A = r - p_hat, p_hat = right / drawn over everything drawn
for the prompt (not the kept mean; no std division).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AdaGroup:
    """One prompt's kept samples and their advantages."""

    prompt: Any
    samples: list[Any]
    rewards: list[float]
    advantages: list[float]
    pass_rate: float
    drawn: int
    retired: bool

    @property
    def has_gradient(self) -> bool:
        return any(a != 0 for a in self.advantages)


@dataclass
class AdaResult:
    """The kept groups, the rounds it took, and summary stats."""

    groups: list[AdaGroup]
    rounds: int
    keep: int
    stats: dict[str, float] = field(default_factory=dict)

    def trajectories(self) -> list[dict[str, Any]]:
        """Flat list of kept samples as dicts (sample fields, plus reward, advantage, group, pass_rate)."""
        out = []
        for g_idx, g in enumerate(self.groups):
            for s, r, a in zip(g.samples, g.rewards, g.advantages):
                base = dict(s) if isinstance(s, Mapping) else {"sample": s}
                base.update({"reward": r, "advantage": a, "group": g_idx, "pass_rate": g.pass_rate})
                out.append(base)
        return out


def _reward_of(sample: Any, where: str) -> float:
    value = sample.get("reward") if isinstance(sample, Mapping) else sample
    if isinstance(value, bool):
        return float(value)
    try:
        r = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: a sample must be a number or a mapping with a numeric 'reward'; got {sample!r}") from None
    if math.isnan(r):
        raise ValueError(f"{where}: reward is NaN")
    return r


def balanced_pick(samples: Sequence[Any], rewards: Sequence[float], keep: int, threshold: float) -> list[int]:
    """Indices of the kept samples: min(keep//2, #right) right, then wrong, then top up from the spare side."""
    right = [i for i, r in enumerate(rewards) if r > threshold]
    wrong = [i for i, r in enumerate(rewards) if r <= threshold]
    take_right = min(keep // 2, len(right))
    take_wrong = min(keep - take_right, len(wrong))
    chosen = right[:take_right] + wrong[:take_wrong]
    spare = right[take_right:] + wrong[take_wrong:]
    chosen += spare[: keep - len(chosen)]
    return sorted(chosen)


def run_sampling(obj: Any, draw: Callable[[list[Any], int], Sequence[Sequence[Any]]], prompts: Sequence[Any]) -> AdaResult:
    """The sampling loop; ``draw(active_prompts, k)`` returns one list of k samples per prompt, in order."""
    prompts = list(prompts)
    if not prompts:
        raise ValueError("ReinforceAda needs at least one prompt")
    if not callable(draw):
        raise ValueError("draw must be a callable draw(prompts, k) -> one list of k samples per prompt")
    keep, threshold = obj.keep, obj.threshold
    need_right = 1 if obj.exit == "positive" else keep // 2
    need_wrong = 0 if obj.exit == "positive" else keep - keep // 2
    samples: list[list[Any]] = [[] for _ in prompts]
    rewards: list[list[float]] = [[] for _ in prompts]
    retired = [False] * len(prompts)
    rounds = 0
    for _ in range(obj.max_rounds):
        active = [i for i, done in enumerate(retired) if not done]
        if not active:
            break
        rounds += 1
        got = draw([prompts[i] for i in active], obj.round_size)
        got = list(got) if got is not None else []
        if len(got) != len(active):
            raise ValueError(f"draw returned {len(got)} lists for {len(active)} active prompts (round {rounds})")
        for i, batch in zip(active, got):
            batch = list(batch)
            if len(batch) != obj.round_size:
                raise ValueError(
                    f"draw returned {len(batch)} samples for prompt {i} in round {rounds}; expected {obj.round_size}"
                )
            for s in batch:
                samples[i].append(s)
                rewards[i].append(_reward_of(s, f"prompt {i}, round {rounds}"))
            n_right = sum(r > threshold for r in rewards[i])
            n_wrong = len(rewards[i]) - n_right
            if n_right >= need_right and n_wrong >= need_wrong:
                retired[i] = True
    groups = []
    for i, p in enumerate(prompts):
        if len(samples[i]) < keep:
            raise ValueError(f"prompt {i} ended with {len(samples[i])} samples, fewer than keep={keep}")
        drawn = len(rewards[i])
        p_hat = sum(r > threshold for r in rewards[i]) / drawn
        idx = balanced_pick(samples[i], rewards[i], keep, threshold)
        kept_r = [rewards[i][j] for j in idx]
        groups.append(
            AdaGroup(
                prompt=p,
                samples=[samples[i][j] for j in idx],
                rewards=kept_r,
                advantages=[r - p_hat for r in kept_r],
                pass_rate=p_hat,
                drawn=drawn,
                retired=retired[i],
            )
        )
    n = len(groups)
    plug_in = [g.pass_rate**keep + (1 - g.pass_rate) ** keep for g in groups]
    stats = {
        "drawn_per_prompt": sum(g.drawn for g in groups) / n,
        "retired": sum(g.retired for g in groups) / n,
        "no_gradient": sum(not g.has_gradient for g in groups) / n,
        "grpo_no_gradient": sum(plug_in) / n,
        "pass_rate": sum(g.pass_rate for g in groups) / n,
        "rounds": float(rounds),
    }
    return AdaResult(groups=groups, rounds=rounds, keep=keep, stats=stats)


def ada_update(obj: Any, batch: Any, **kwargs: Any) -> Any:
    """The update rule (see ``_ada_update``), run as every rule is: without autograd, ``stats=False`` honoured."""
    from pick_a_method.methods.rules._common import rule

    return rule(_ada_update)(obj, batch, **kwargs)


def _ada_update(obj: Any, batch: Any, call: Any) -> Any:
    """Coefficients for kept Reinforce-Ada groups: A_i = r_i - p_hat / N on every action token.

    p_hat is each trajectory's ``pass_rate`` (what ``AdaResult.trajectories()`` writes: the pass rate
    over everything drawn), else the share of its group's rewards above ``threshold``.
    """
    from pick_a_method.methods.rules.grouped import host_group_update

    def advantages(members: list[list[int]], R: list[float], info: list[dict]) -> tuple:
        adv, from_field = [0.0] * len(R), 0
        for idx in members:
            rates = [info[i].get("pass_rate") for i in idx]
            if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in rates):
                p_hat = float(rates[0])
                from_field += 1
            else:
                p_hat = sum(R[i] > obj.threshold for i in idx) / len(idx)
            for i in idx:
                adv[i] = R[i] - p_hat
        notes = [] if from_field == len(members) else [
            f"{len(members) - from_field} groups carry no pass_rate: p_hat is their kept share above "
            f"threshold={obj.threshold:g}, not the pass rate over everything drawn."]
        return adv, notes, {"zero_advantage_share": sum(a == 0 for a in adv) / len(R)}

    return host_group_update(obj, batch, call, obj.keep, advantages)
