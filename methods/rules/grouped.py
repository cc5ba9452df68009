"""Group-relative update rules: grpo, max_rl, rae (prime-rl's reward-advantage algorithms).

Each trajectory gets one advantage A_i from its reward; the coefficient on each of its action tokens
is ``A_i / N``, N = action tokens of the global batch (all data-parallel ranks): a token-weighted
mean, the same convention as SAO and BPCO, and prime-rl's normalization by the global loss-token
count. No importance ratio: these are on-policy rules; wrap them in ``Async`` for stale rollouts.

Groups come from the batch (``group``/``task_id``/... on each trajectory, see ``methods.batch``);
without them, consecutive blocks of ``group_size`` trajectories form the groups (TRL's layout).
A group must not be split across data-parallel ranks: its statistics are computed locally.
"""

from __future__ import annotations

from typing import Any

import torch

from pick_a_method.common import methods as M
from pick_a_method.methods import defaults as D
from pick_a_method.methods.batch import Batch
from pick_a_method.methods.rules._common import (
    RuleCall,
    OFF_POLICY_TOLERANCE,
    advantage_update,
    checked_batch,
    fmt_indices,
    global_action_tokens,
    global_sums,
    reducer,
    rule,
    sig,
)
from pick_a_method.methods.update import Update


def group_index(b: Batch, group_size: int, method: str) -> torch.Tensor:
    """[B] int64 group ids 0..G-1 (from the batch's groups, else consecutive blocks of group_size)."""
    B = b.size
    if b.groups is not None:
        return torch.unique(b.groups, return_inverse=True)[1]
    if B % group_size:
        raise ValueError(
            f"{method}: the batch has {B} trajectories, not a multiple of group_size={group_size}, and names no "
            "groups; give each trajectory a 'task_id' (or 'group'), or set group_size to the rollouts per prompt"
        )
    return torch.arange(B, device=b.device) // group_size


def group_members(b: Batch, group_size: int, method: str) -> list[list[int]]:
    """The trajectory indices of each group, groups in order of first appearance (see ``group_index``)."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group_index(b, group_size, method).tolist()):
        members.setdefault(g, []).append(i)
    return list(members.values())


def group_means(R: torch.Tensor, gid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(per-group mean [G], per-group count [G])."""
    G = int(gid.max()) + 1
    counts = torch.zeros(G, dtype=R.dtype, device=R.device).index_add_(0, gid, torch.ones_like(R))
    sums = torch.zeros(G, dtype=R.dtype, device=R.device).index_add_(0, gid, R)
    return sums / counts, counts


def grpo_advantages(
    R: torch.Tensor, gid: torch.Tensor, normalize_std: bool = False, eps: float = D.GRPO_STD_EPS
) -> torch.Tensor:
    """A_i = R_i - mean_group(R), divided by (Bessel std + eps) when ``normalize_std``; a group of one gets 0."""
    mean, counts = group_means(R, gid)
    A = R - mean[gid]
    if normalize_std:
        sq = torch.zeros_like(mean).index_add_(0, gid, A * A)
        std = torch.sqrt(sq / (counts - 1).clamp_min(1))
        A = A / (std[gid] + eps)
    return torch.where(counts[gid] > 1, A, torch.zeros_like(A))


def max_rl_advantages(R: torch.Tensor, gid: torch.Tensor) -> torch.Tensor:
    """A_i = (R_i - mean)/mean per group (arXiv:2602.02710); 0 where the group's mean is 0 or it has one member."""
    mean, counts = group_means(R, gid)
    m = mean[gid]
    ok = (m > 0) & (counts[gid] > 1)
    return torch.where(ok, (R - m) / torch.where(ok, m, torch.ones_like(m)), torch.zeros_like(R))


def _grpo(method: Any, R: torch.Tensor, gid: torch.Tensor, *_: Any) -> torch.Tensor:
    return grpo_advantages(R, gid, bool(method.normalize_std))


def _max_rl(method: Any, R: torch.Tensor, gid: torch.Tensor, mean: torch.Tensor, counts: torch.Tensor,
            notes: list[str], validate: bool) -> torch.Tensor:
    if validate and bool((R < 0).any()):
        i = int(torch.nonzero(R < 0)[0])
        raise ValueError(
            f"trajectory {i}: reward is {float(R[i])!r}; max_rl divides by the group's mean pass rate and "
            "needs rewards >= 0 (use grpo for signed rewards)"
        )
    zero_mean = int(((mean <= 0) & (counts > 1)).sum())
    if zero_mean:
        notes.append(f"{zero_mean} groups have mean reward 0 and carry no gradient under max_rl.")
    return max_rl_advantages(R, gid)


# Each group-relative method's advantage, under its entry in the method table (rae keeps a baseline instead).
GROUP_ADVANTAGES = {M.GRPO: _grpo, M.MAX_RL: _max_rl}


def rae_advantages(
    R: torch.Tensor, agents: list[str], baselines: dict[str, float], decay: float
) -> tuple[torch.Tensor, dict[str, float]]:
    """A = R - b with b read before the trajectory's own reward moves it; returns (A, new baselines).

    Sequential in batch order per agent (b <- decay*b + (1-decay)*R), as prime-rl scores traces; a
    scan over B scalars, never over tokens.
    """
    state = dict(baselines)
    adv = []
    for r, agent in zip(R.tolist(), agents):
        base = state.get(agent, D.RAE_INITIAL_BASELINE)
        adv.append(r - base)
        state[agent] = decay * base + (1.0 - decay) * r
    return torch.tensor(adv, dtype=R.dtype, device=R.device), state


@rule
def grouped_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """grpo / max_rl / rae advantages, and coefficients A_i / N on every action token.

    ``commit=False`` computes rae's advantages without moving its baselines (a preview).
    ``process_group`` sums N (the action tokens) over its ranks; the group statistics stay local.
    Stats: trajectories, action_tokens, admitted_share, mean_reward (this rank's), groups,
    mixed_group_share (groups whose rewards differ), zero_advantage_share, mean_abs_advantage; rae adds
    agents and mean_baseline (after the update).
    """
    b, mf, L, _ = checked_batch(batch, call.dtype, call.device, validate=call.validate)
    B = b.size
    dt = b.dtype
    R = b.rewards.to(dt)
    name = method.name
    notes: list[str] = []
    stats_out: dict[str, float] = {}

    if method.stateful:  # rae: an EMA baseline per agent, read before each trajectory's reward moves it
        agents = b.agents or [D.RAE_DEFAULT_AGENT] * B
        agents = [a or D.RAE_DEFAULT_AGENT for a in agents]
        A, state = rae_advantages(R, agents, method.baselines, float(method.decay))
        if call.commit:
            method.reset(state)
        stats_out["agents"] = float(len(set(agents)))
        stats_out["mean_baseline"] = sum(state.values()) / len(state)
        if not call.commit:
            notes.append("preview: the EMA baselines were not moved (commit=False).")
    else:
        gid = group_index(b, method.group_size, name)
        mean, counts = group_means(R, gid)
        A = GROUP_ADVANTAGES[method.info](method, R, gid, mean, counts, notes, call.validate)
        if not call.stats:
            red = reducer(call.distributed, call.process_group)
            return advantage_update(name, b, mf, A, global_action_tokens(L, red, b.device), {}, [])
        G = int(counts.numel())
        spread = torch.zeros(G, dtype=dt, device=b.device).index_add_(0, gid, (R - mean[gid]).abs())
        mixed = int((spread > 0).sum())
        stats_out["groups"] = float(G)
        stats_out["mixed_group_share"] = mixed / G
        singles = int((counts == 1).sum())
        if singles:
            notes.append(
                f"{singles} of {G} groups have one rollout and carry no gradient under {name} "
                "(use rae, or a single-rollout method, when each prompt has one rollout)."
            )
        if mixed < G:
            notes.append(
                f"{G - mixed} of {G} groups have identical rewards (all pass or all fail) and carry no gradient."
            )
        sizes = sorted({int(c) for c in counts.tolist()})
        if b.groups is not None and sizes != [method.group_size]:
            notes.append(
                f"group sizes in the batch are {sizes[:6]}; the group_size knob ({method.group_size}) sets the "
                "sampler's rollouts per prompt and is not used when trajectories name their group."
            )

    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(B)], red, b.device)
    n_global = sums[0]
    if not call.stats:
        return advantage_update(name, b, mf, A, n_global, {}, [])
    zero = A == 0
    stats_out = {
        "trajectories": float(sums[1]),
        "action_tokens": float(n_global),
        "admitted_share": 1.0,
        "mean_reward": float(R.mean()),
        **stats_out,
        "zero_advantage_share": float(zero.sum()) / B,
        "mean_abs_advantage": float(A.abs().mean()),
    }
    if red.note:
        notes.append(red.note)
    if bool(zero.all()):
        notes.append("every advantage is 0: this update moves nothing.")
    if b.behavior_logprobs is not None and not call.within_async:
        diff = torch.where(b.mask, (b.logprobs - b.behavior_logprobs).abs(), torch.zeros((), dtype=dt, device=b.device))
        worst = float(diff.max())
        if worst > OFF_POLICY_TOLERANCE:
            rows = torch.nonzero(diff.amax(1) > OFF_POLICY_TOLERANCE).flatten().tolist()
            notes.append(
                f"{len(rows)} trajectories were sampled by another policy (|logp - behavior_logp| up to {sig(worst)}; "
                f"indices {fmt_indices(rows)}); {name} applies no importance ratio: wrap it in Async for stale rollouts."
            )
    return advantage_update(name, b, mf, A, n_global, stats_out, notes)
