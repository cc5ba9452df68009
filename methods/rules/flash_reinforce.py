"""FlashREINFORCE (Hu et al. 2026): batch-mean baseline, a sequence trust gate on the Bernoulli KL, 1/T weighting.

One rollout per prompt, no critic. See ``methods.rules.single_rollout`` for the normalization convention it
shares with SAO and BPCO.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    RuleCall,
    checked_batch,
    expand_rows,
    global_sums,
    indices_note,
    on_policy_notes,
    reducer,
    rule,
    sig,
    staleness_gate,
)
from pick_a_method.methods.rules.checks import clamp_into, sub_into
from pick_a_method.methods.update import Update

_LOG_P_LO = math.log(D.FLASH_REINFORCE_PROBABILITY_FLOOR)
_LOG_P_HI = math.log1p(-D.FLASH_REINFORCE_PROBABILITY_FLOOR)


# ------------------------------------------------------------------------------------------------
# FlashReinforce
# ------------------------------------------------------------------------------------------------


def bernoulli_kl(logp_sampler: torch.Tensor, logp_learner: torch.Tensor) -> torch.Tensor:
    """Per-token Bernoulli KL(p || q) of the sampled token, p from the sampler, q from the learner.

    Probabilities are clamped to [1e-6, 1 - 1e-6] (in the log domain) and the result is clamped at 0.
    Reference form; the update rule computes the same thing in place, chunk by chunk.
    """
    lpb = logp_sampler.clamp(_LOG_P_LO, _LOG_P_HI)
    lq = logp_learner.clamp(_LOG_P_LO, _LOG_P_HI)
    p = lpb.exp()
    d = p * (lpb - lq) + (1 - p) * (torch.log1p(-p) - torch.log1p(-lq.exp()))
    return d.clamp_min(0)


@rule
def flash_reinforce_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """FlashREINFORCE (Hu et al. 2026): batch-mean baseline, sequence trust gate, ratio, 1/T weighting.

    For trajectory i with reward R_i and L_i action tokens, over the global batch of B trajectories:

    * baseline b = mean(R) over the global batch (the ranks of ``process_group``), A_i = R_i - b (no
      std division);
    * drift D_i = mean over action tokens of the Bernoulli KL between the sampler's probability p
      and the learner's q of the sampled token (both clamped to [1e-6, 1-1e-6], each token's KL
      clamped at 0); admitted iff D_i <= trust (inclusive) and, when the batch carries ``staleness``,
      staleness_i <= off_policy_steps;
    * coefficient on an admitted trajectory's action token: ``A_i * rho_t / (L_i * B)`` with
      rho = min(exp(clamp(logp - behavior_logp, -30, 30)), ratio_cap); 0 elsewhere. A rejected
      trajectory still counts in B. No behavior_logprobs means on-policy (rho = 1, D = 0).

    The ratio cap (default 20, verl's DPPO truncation; ``ratio_cap=inf`` is the paper's uncapped
    rule) matters because the gate bounds the *mean* drift: one token of a long row can pass it with
    a ratio of 1e5. Normalization: trajectory-weighted mean, 1/(L_i * B), as the anchor SDK.
    Stats: mean_reward, trajectories (B), action_tokens, admitted_share, mean_sequence_kl,
    max_sequence_kl, mean_ratio (over admitted action tokens, after the cap; NaN when none),
    capped_token_share. ``row_stats``: drift, mean_ratio.
    """
    host = call.host
    chk = checked_batch(batch, call.dtype, call.device, validate=call.validate, host=host, behavior=True)
    b, dt, L, clean, policy = chk
    B, T = b.logprobs.shape
    lp = b.logprobs
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    red = reducer(call.distributed, call.process_group)

    sums = global_sums([R.sum(), float(B), L.sum()], red, b.device)
    n_global = sums[1]
    baseline = sums[0] / n_global
    A = R - baseline.to(dt)
    L1 = L.clamp_min(1)

    coef = torch.empty(B, T, dtype=dt, device=b.device)
    drift_sum = torch.zeros(B, dtype=dt, device=b.device)
    ratio_sum = torch.zeros(B, dtype=dt, device=b.device)
    capped_rows = torch.zeros(B, dtype=dt, device=b.device)
    clamped_rows = torch.zeros(B, dtype=dt, device=b.device)
    trust = float(method.trust)
    cap = float(method.ratio_cap)
    log_cap = math.log(cap)  # inf when uncapped
    clamp_at = D.FLASH_REINFORCE_LOG_RATIO_CLAMP
    zero = torch.zeros((), dtype=dt, device=b.device)

    if blp is None:
        drift = torch.zeros(B, dtype=dt, device=b.device)
    else:
        chunks = policy.chunks(B, T, temps=4 + call.stats, compute=dt, given=b.dtype, outputs=dt.itemsize / b.dtype.itemsize)
        rows = max(r.stop - r.start for r in chunks)
        buf = policy.workspace(4, rows, T, dt, b.device)
        # pass 1: drift per trajectory (the gate needs all of it before any coefficient)
        for r in chunks:
            n = r.stop - r.start
            b1, b2, b3, b4 = (x[:n] for x in buf)
            lq = clamp_into(b1, lp[r], _LOG_P_LO, _LOG_P_HI)
            lpb = clamp_into(b2, blp[r], _LOG_P_LO, _LOG_P_HI)
            p = torch.exp(lpb, out=b3)
            d = lpb.sub_(lq).mul_(p)  # b2 = p * (log p - log q)
            q = torch.exp(lq, out=b1)
            # (1 - p) * log((1 - p) / (1 - q)) as (1 - p) * log1p((q - p) / (1 - q)): one log1p, not two
            t = torch.sub(q, p, out=b4).div_(q.neg_().add_(1)).log1p_()
            d.add_(t.mul_(p.neg_().add_(1))).clamp_(min=0)
            if clean:
                chk.mask_(d, r)
            else:
                d = torch.where(b.mask[r], d, zero, out=d)
            drift_sum[r] = d.sum(1)
        drift = drift_sum / L1
    admitted = drift <= trust  # NaN compares False: a non-finite drift is rejected
    fresh = staleness_gate(b, method.off_policy_steps)
    if fresh is not None:
        admitted &= fresh
    admitted &= L > 0
    scale = torch.where(admitted, A / (L1 * n_global.to(dt)), zero)
    if blp is None:  # on-policy: every ratio is 1
        torch.where(b.mask, scale[:, None], zero, out=coef)
        ratio_sum = L.clone()
    else:
        # pass 2: ratio (log-clamped for exp, then capped) and coefficients
        for r in chunks:
            n = r.stop - r.start
            x = sub_into(buf[0][:n], lp[r], blp[r])
            if not clean:
                x = torch.where(b.mask[r], x, zero, out=x)
            if call.stats:  # counted for every row; the admitted ones are summed after
                # on a CPU one reduction says whether anything is out of range (usually nothing is); on a device
                # the counts run without asking (a read would wait)
                lo, hi = (float(v) for v in torch.aminmax(x)) if policy.host_reads else (-math.inf, math.inf)
                if hi > log_cap:
                    capped_rows[r] = torch.gt(x, log_cap).logical_and_(b.mask[r]).sum(1)
                if lo < -clamp_at or hi > clamp_at:
                    clamped_rows[r] = torch.abs(x).gt_(clamp_at).logical_and_(b.mask[r]).sum(1)
            # min(exp(x), cap) as exp(min(x, log cap)): the cap costs no pass of its own
            chk.mask_(x.clamp_(-clamp_at, min(clamp_at, log_cap)).exp_(), r)
            ratio_sum[r] = x.sum(1)
            torch.mul(x, scale[r, None], out=coef[r])

    upd = Update(
        method=method.name,
        coefficients=coef,
        advantages=expand_rows(A, T),
        admitted=admitted,
        mask=b.mask,
        row_stats={"drift": drift, "mean_ratio": ratio_sum / L1},
        normalizer="1/(T_i * B): each trajectory weighs 1/B, spread over its action tokens",
    )
    if not call.stats:
        return upd
    def adm(x: torch.Tensor) -> torch.Tensor:
        return torch.where(admitted, x, zero).sum()

    got = host.want([
        baseline, n_global, sums[2], admitted.sum(), L.sum(), adm(L), adm(ratio_sum),
        adm(capped_rows), adm(clamped_rows), drift.mean(), drift.max(), (A == 0).all(), R[0],
    ])
    gated = ~admitted if fresh is None else ~admitted & fresh  # refused by the trust gate, not for staleness
    gated &= L > 0
    worst = host.want(torch.where(gated, drift, -math.inf).max())
    indices_note(host, gated, lambda n, idx: (
        f"rejected {n} of {B} trajectories whose mean per-token drift exceeded trust={sig(trust)} "
        f"(indices {idx}; largest {sig(worst())}): they still count in B. Check that "
        "behavior_logprobs are the sampler's log-probs of these tokens, lower the lag, or raise trust."), upd.notes)
    if fresh is not None:
        indices_note(host, ~fresh, lambda n, idx: (
            f"rejected {n} trajectories older than off_policy_steps={method.off_policy_steps} "
            f"(indices {idx}); they still count in B."), upd.notes)

    def finish() -> None:
        (mean_r, n_traj, n_tok, n_adm, n_local, adm_tokens, adm_ratio, capped, clamped, mean_kl, max_kl,
         all_zero, r0) = got()
        upd.stats = {
            "mean_reward": mean_r,
            "trajectories": n_traj,
            "action_tokens": n_tok,
            "admitted_share": n_adm / B,
            "mean_sequence_kl": mean_kl,
            "max_sequence_kl": max_kl,
            "mean_ratio": adm_ratio / adm_tokens if n_adm else math.nan,
            "capped_token_share": capped / n_local if n_local else 0.0,
        }
        notes = upd.notes
        if n_adm == 0:
            notes.append("no trajectory was admitted: this update moves nothing.")
        elif all_zero:
            notes.append(
                f"every reward is {sig(r0, 4)}, so every advantage is 0 and this update moves nothing: "
                "enlarge the batch or select prompts the model passes 20-80% of the time."
            )
        notes += on_policy_notes(b)
        if capped:
            notes.append(
                f"the ratio cap bound: {int(capped)} admitted tokens had pi_train/pi_sampler > ratio_cap="
                f"{sig(cap)} and were counted at {sig(cap)} (ratio_cap=inf restores the paper's uncapped rule)."
            )
        if clamped:
            notes.append(
                f"{int(clamped)} admitted tokens had |logp - behavior_logp| > {clamp_at:g}; their log-ratio was "
                "clamped before exp."
            )
        if red.note:
            notes.append(red.note)

    host.then(finish)
    return upd
