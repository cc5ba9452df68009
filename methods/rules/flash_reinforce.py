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
    fmt_indices,
    global_sums,
    on_policy_notes,
    reducer,
    rule,
    sig,
    staleness_gate,
)
from pick_a_method.methods.rules.lagae import CHUNK_ROWS
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
    b, mf, L, clean = checked_batch(batch, call.dtype, call.device, validate=call.validate, behavior=True)
    B, T = b.logprobs.shape
    dt = b.dtype
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
    trust = float(method.trust)
    cap = float(method.ratio_cap)
    log_cap = math.log(cap)  # inf when uncapped
    clamped = 0
    clamp_at = D.FLASH_REINFORCE_LOG_RATIO_CLAMP
    zero = torch.zeros((), dtype=dt, device=b.device)

    if blp is None:
        drift = torch.zeros(B, dtype=dt, device=b.device)
    else:
        rows = min(CHUNK_ROWS, B)
        buf = [torch.empty(rows, T, dtype=dt, device=b.device) for _ in range(4)]
        # pass 1: drift per trajectory (the gate needs all of it before any coefficient)
        for i0 in range(0, B, rows):
            i1 = min(i0 + rows, B)
            n = i1 - i0
            b1, b2, b3, b4 = (x[:n] for x in buf)
            lp_c, blp_c, mf_c = lp[i0:i1], blp[i0:i1], mf[i0:i1]
            lq = torch.clamp(lp_c, _LOG_P_LO, _LOG_P_HI, out=b1)
            lpb = torch.clamp(blp_c, _LOG_P_LO, _LOG_P_HI, out=b2)
            p = torch.exp(lpb, out=b3)
            d = lpb.sub_(lq).mul_(p)  # b2 = p * (log p - log q)
            q = torch.exp(lq, out=b1)
            # (1 - p) * log((1 - p) / (1 - q)) as (1 - p) * log1p((q - p) / (1 - q)): one log1p, not two
            t = torch.sub(q, p, out=b4).div_(q.neg_().add_(1)).log1p_()
            d.add_(t.mul_(p.neg_().add_(1))).clamp_(min=0)
            if clean:
                d.mul_(mf_c)
            else:
                d = torch.where(mf_c.bool(), d, zero)
            drift_sum[i0:i1] = d.sum(1)
        drift = drift_sum / L1
    admitted = drift <= trust  # NaN compares False: a non-finite drift is rejected
    fresh, stale = staleness_gate(b, method.off_policy_steps, want_indices=call.stats)
    if fresh is not None:
        admitted &= fresh
    admitted &= L > 0
    scale = torch.where(admitted, A / (L1 * n_global.to(dt)), zero)
    if blp is None:  # on-policy: every ratio is 1
        torch.mul(mf, scale[:, None], out=coef)
        ratio_sum = L.clone()
    else:
        # pass 2: ratio (log-clamped for exp, then capped) and coefficients
        for i0 in range(0, B, rows):
            i1 = min(i0 + rows, B)
            n = i1 - i0
            x = torch.sub(lp[i0:i1], blp[i0:i1], out=buf[0][:n])
            mf_c = mf[i0:i1]
            if not clean:
                x = torch.where(mf_c.bool(), x, zero)
            if call.stats:  # one reduction per chunk; the counts below run only when something is out of range
                lo, hi = (float(v) for v in torch.aminmax(x))
                if hi > log_cap:
                    capped_rows[i0:i1] = ((x > log_cap) & mf_c.bool()).sum(1).to(dt)
                if lo < -clamp_at or hi > clamp_at:
                    clamped += int(((x.abs() > clamp_at) & mf_c.bool() & admitted[i0:i1, None]).sum())
            # min(exp(x), cap) as exp(min(x, log cap)): the cap costs no pass of its own
            x.clamp_(-clamp_at, min(clamp_at, log_cap)).exp_().mul_(mf_c)
            ratio_sum[i0:i1] = x.sum(1)
            torch.mul(x, scale[i0:i1, None], out=coef[i0:i1])

    stats_out: dict[str, float] = {}
    notes: list[str] = []
    if call.stats:
        n_adm = int(admitted.sum())
        n_local = float(L.sum())
        adm_tokens = float(L[admitted].sum()) if n_adm else 0.0
        mean_ratio = float(ratio_sum[admitted].sum()) / adm_tokens if n_adm else math.nan
        capped = float(capped_rows[admitted].sum())
        stats_out = {
            "mean_reward": float(baseline),
            "trajectories": float(n_global),
            "action_tokens": float(sums[2]),
            "admitted_share": n_adm / B,
            "mean_sequence_kl": float(drift.mean()),
            "max_sequence_kl": float(drift.max()),
            "mean_ratio": mean_ratio,
            "capped_token_share": capped / n_local if n_local else 0.0,
        }
        gated = ~admitted if fresh is None else ~admitted & fresh  # refused by the trust gate, not for staleness
        rejected = torch.nonzero(gated & (L > 0)).flatten().tolist()
        if rejected:
            worst = float(drift[rejected].max())
            notes.append(
                f"rejected {len(rejected)} of {B} trajectories whose mean per-token drift exceeded trust={sig(trust)} "
                f"(indices {fmt_indices(rejected)}; largest {sig(worst)}): they still count in B. Check that "
                "behavior_logprobs are the sampler's log-probs of these tokens, lower the lag, or raise trust."
            )
        if stale:
            notes.append(
                f"rejected {len(stale)} trajectories older than off_policy_steps={method.off_policy_steps} "
                f"(indices {fmt_indices(stale)}); they still count in B."
            )
        if n_adm == 0:
            notes.append("no trajectory was admitted: this update moves nothing.")
        elif bool((A == 0).all()):
            notes.append(
                f"every reward is {sig(float(R[0]), 4)}, so every advantage is 0 and this update moves nothing: "
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
                f"{clamped} admitted tokens had |logp - behavior_logp| > {clamp_at:g}; their log-ratio was clamped "
                "before exp."
            )
        if red.note:
            notes.append(red.note)
    return Update(
        method=method.name,
        coefficients=coef,
        advantages=expand_rows(A, T),
        admitted=admitted,
        mask=b.mask,
        stats=stats_out,
        notes=notes,
        row_stats={"drift": drift, "mean_ratio": ratio_sum / L1},
        normalizer="1/(T_i * B): each trajectory weighs 1/B, spread over its action tokens",
    )
