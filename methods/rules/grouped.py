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
    first_true_k,
    global_sums,
    indices_note,
    reducer,
    rule,
    sig,
)
from pick_a_method.methods.rules.checks import verify, widened_diff
from pick_a_method.methods.update import Update


def group_index(b: Batch, group_size: int, method: str) -> torch.Tensor:
    """[B] int64 group ids 0..G-1 (from the batch's groups, else consecutive blocks of group_size)."""
    B = b.size
    if b.groups is not None:
        # the ids torch.unique(return_inverse=True) gives (in sorted order of the group keys), from a sort and a
        # running count: unique's output size depends on the data, so on a GPU it waits for the device
        order = torch.argsort(b.groups, stable=True)
        s = b.groups[order]
        new = torch.ones(B, dtype=torch.long, device=b.device)
        new[1:] = s[1:] != s[:-1]
        return torch.empty_like(new).scatter_(0, order, torch.cumsum(new, 0).sub_(1))
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


def host_group_update(obj: Any, batch: Any, call: RuleCall, group_size: int, advantages: Any) -> Update:
    """The rules whose advantages are worked out per group on the host (GroupwiseGrading's grader calls,
    ReinforceAda's kept groups): ``advantages(members, rewards, info)`` gives (each trajectory's A, notes, stats);
    the coefficient is A / N on every action token, N the global batch's, as for grpo."""
    b, dt, L, _, _ = checked_batch(batch, call.dtype, call.device, validate=call.validate, host=call.host)
    members = group_members(b, group_size, type(obj).__name__)
    adv, own_notes, own_stats = advantages(members, b.rewards.tolist(), b.info or [{} for _ in range(b.size)])
    A = torch.tensor(adv, dtype=dt, device=b.device)
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(b.size)], red, b.device)
    if not call.stats:
        return advantage_update(obj.name, b, A, sums[0], {}, [])
    stats = {"trajectories": float(sums[1]), "action_tokens": float(sums[0]), "admitted_share": 1.0,
             "groups": float(len(members)), **own_stats, "mean_abs_advantage": float(A.abs().mean())}
    return advantage_update(obj.name, b, A, sums[0], stats, ([red.note] if red.note else []) + own_notes)


def group_means(R: torch.Tensor, gid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(per-group mean, per-group count), over B slots: slots past the last group have count 0 (mean NaN).
    B slots, not G = max(gid) + 1: knowing G is a host read."""
    G = R.shape[0]
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


def _grpo(method: Any, R: torch.Tensor, gid: torch.Tensor) -> torch.Tensor:
    return grpo_advantages(R, gid, bool(method.normalize_std))


def _max_rl(method: Any, R: torch.Tensor, gid: torch.Tensor) -> torch.Tensor:
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
    host = call.host
    b, dt, L, _, policy = checked_batch(batch, call.dtype, call.device, validate=call.validate, host=host)
    B = b.size
    R = b.rewards.to(dt)
    name = method.name
    notes: list[str] = []
    stats_out: dict[str, float] = {}
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(B)], red, b.device)
    n_global = sums[0]
    later: dict[str, Any] = {}

    if method.stateful:  # rae: an EMA baseline per agent, read before each trajectory's reward moves it
        # a scan in Python over the rewards (one read of them: the baselines are host state)
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
        if method.info == M.MAX_RL and call.validate:
            verify(policy, host, lambda: (R < 0).any(), lambda: _refuse_negative(R))
        A = GROUP_ADVANTAGES[method.info](method, R, gid)
        if call.stats:
            used = counts > 0
            spread = torch.zeros_like(R).index_add_(0, gid, (R - mean[gid]).abs())
            present = torch.zeros(B + 1, dtype=torch.bool, device=b.device).index_fill_(0, counts.long(), True)
            later["groups"] = host.want([used.sum(), (spread > 0).sum(), (counts == 1).sum(),
                                         ((mean <= 0) & (counts > 1)).sum()])
            later["sizes"] = host.want(first_true_k(present[1:], 7))
    upd = advantage_update(name, b, A, n_global, stats_out, notes)
    n_first = len(notes)
    if not call.stats:
        return upd
    zero = A == 0
    means = host.want([sums[0], sums[1], R.mean(), zero.sum(), A.abs().mean()])
    off = None
    if b.behavior_logprobs is not None and not call.within_async:
        off = off_policy_rows(b, dt, policy, outputs=dt.itemsize / b.dtype.itemsize)
        later["off"] = host.want(off.max())
        indices_note(host, off > OFF_POLICY_TOLERANCE, lambda n, idx: (
            f"{n} trajectories were sampled by another policy (|logp - behavior_logp| up to {sig(later['off']())}; "
            f"indices {idx}); {name} applies no importance ratio: wrap it in Async for stale rollouts."), notes)

    def finish() -> None:
        n_tok, n_traj, mean_r, n_zero, mean_abs = means()
        head = {"trajectories": n_traj, "action_tokens": n_tok, "admitted_share": 1.0, "mean_reward": mean_r}
        group_notes: list[str] = []
        if "groups" in later:
            G, mixed, singles, zero_mean = (int(x) for x in later["groups"]())
            head.update({"groups": float(G), "mixed_group_share": mixed / G})
            if method.info == M.MAX_RL and zero_mean:
                group_notes.append(f"{zero_mean} groups have mean reward 0 and carry no gradient under max_rl.")
            if singles:
                group_notes.append(
                    f"{singles} of {G} groups have one rollout and carry no gradient under {name} "
                    "(use rae, or a single-rollout method, when each prompt has one rollout)."
                )
            if mixed < G:
                group_notes.append(
                    f"{G - mixed} of {G} groups have identical rewards (all pass or all fail) and carry no gradient."
                )
            sizes = [int(v) + 1 for v in later["sizes"]()[1:] if v >= 0][:6]
            if b.groups is not None and sizes != [method.group_size]:
                group_notes.append(
                    f"group sizes in the batch are {sizes}; the group_size knob ({method.group_size}) sets the "
                    "sampler's rollouts per prompt and is not used when trajectories name their group."
                )
        upd.stats.update({**head, **upd.stats, "zero_advantage_share": n_zero / B, "mean_abs_advantage": mean_abs})
        own = group_notes + upd.notes[:n_first] + ([red.note] if red.note else [])
        if n_zero == B:
            own.append("every advantage is 0: this update moves nothing.")
        upd.notes[:n_first] = own  # before the notes the reads added (off-policy rows)

    host.then(finish)
    return upd


def off_policy_rows(b: Batch, dt: torch.dtype, policy: Any, outputs: float = 0.0) -> torch.Tensor:
    """[B] the largest |logp - behavior_logp| of each trajectory's action tokens, chunk by chunk (``outputs``: the
    [B, T] tensors of the input dtype the caller holds meanwhile)."""
    B, T = b.logprobs.shape
    out = torch.empty(B, dtype=dt, device=b.device)
    zero = torch.zeros((), dtype=dt, device=b.device)
    for r in policy.chunks(B, T, temps=2, compute=dt, given=b.dtype, outputs=outputs):
        x = widened_diff(b.logprobs[r], b.behavior_logprobs[r], dt).abs_()
        torch.amax(torch.where(b.mask[r], x, zero), 1, out=out[r])
    return out


def _refuse_negative(R: torch.Tensor) -> None:
    if bool((R < 0).any()):
        i = int(torch.nonzero(R < 0)[0])
        raise ValueError(
            f"trajectory {i}: reward is {float(R[i])!r}; max_rl divides by the group's mean pass rate and "
            "needs rewards >= 0 (use grpo for signed rewards)"
        )
