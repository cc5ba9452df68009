"""Single-rollout update rules: SAO and BPCO here, FlashReinforce in ``rules.flash_reinforce`` (re-exported).

Normalization convention (all three, and the grouped and distillation rules too): the coefficients
already carry the batch normalizer, so ``loss = -sum(c * logp)`` is a *mean* over the global batch
(all data-parallel ranks) whose scale does not grow with batch size or length:

* FlashReinforce is trajectory-weighted: each trajectory weighs 1/B, spread over its T_i action
  tokens (``1/(T_i * B)``). The 1/T weighting is part of the method (Hu et al.), so it stays.
* SAO and BPCO are token-weighted: each action token weighs ``1/N``, N = action tokens in the
  global batch (band-masked tokens and rejected trajectories included).

Against the anchor SDK (whileai 0.131): FlashReinforce (1/(T*B)) and SAO (1/N) are identical;
BPCO differs: the anchor applies no normalizer at all, so its step grew with batch size and length
while its docs promised the factors were "already applied". Multiply our BPCO coefficients by N
(``stats['action_tokens']``) to recover the anchor's numbers.

Validation is the same for the three (the anchor checked only in FlashReinforce): a non-finite
reward, a non-finite or positive log-prob on an action token, and a trajectory with no action
token are refused with the trajectory index and the field.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    RuleCall,
    TOKEN_MEAN,
    checked_batch,
    first_true,
    fmt_indices,
    global_sums,
    on_policy_notes,
    reducer,
    row_values_on_valid,
    rule,
    sig,
)
from pick_a_method.methods.rules.flash_reinforce import bernoulli_kl, flash_reinforce_update
from pick_a_method.methods.rules.lagae import CHUNK_ROWS, LaGae, gae_lambdas, lagae, lagae_reference, row_chunks
from pick_a_method.methods.update import Update

__all__ = [
    "bernoulli_kl", "flash_reinforce_update", "sao_update", "bpco_update",
    # re-exported: FlashReinforce lives in rules.flash_reinforce, the GAE in rules.lagae
    "gae_lambdas", "lagae", "lagae_reference", "LaGae", "CHUNK_ROWS",
]


# ------------------------------------------------------------------------------------------------
# SAO
# ------------------------------------------------------------------------------------------------

_CRITIC_HINT = "Run the critic over the batch first, or use FlashReinforce, which needs no critic."
_ALL_ON_POLICY = "no trajectory has behavior_logprobs: taken as on-policy, every ratio is 1."


@rule
def sao_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """SAO (Hou et al. 2026, arXiv:2607.07508): skip-observation LA-GAE and a strict ratio band.

    * lambda_i = max(0, 1 - 1/(gae_alpha * L_i)), gamma = 1; advantages by GAE over action tokens
      only (observation tokens get 0 and are skipped: their values never enter the recursion);
    * rho = exp(lp - behavior_lp) (log-ratio clamped at +-40 before exp, which changes no decision);
      a token keeps rho * A only when low < rho < high (strict, both signs of A), else 0;
    * coefficients = kept rho * A / N, N = action tokens of the global batch (all ranks; masked
      tokens and rejected trajectories included): a token-weighted mean, as in the anchor SDK;
    * admitted iff at least one action token is inside the band;
    * value targets: the Monte Carlo return, which with gamma = 1 and a terminal reward is R on
      every token of the trajectory (observation tokens included; 0 on padding).

    The band is SAO's ratio cap: a kept ratio is below ``ratio[1]`` (6 by default), so there is no
    separate ``ratio_cap``. Stats: trajectories, action_tokens (N), admitted_share, masked_token_share,
    mean_ratio (over in-band tokens; 0 when none), mean_advantage (over action tokens), mean_lambda.
    """
    b, mf, L, clean = checked_batch(
        batch, call.dtype, call.device, validate=call.validate, behavior=True, needs="values", method="SAO", hint=_CRITIC_HINT
    )
    B, T = b.logprobs.shape
    dt = b.dtype
    values = b.values
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    lam = gae_lambdas(L, method.gae_alpha)
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(B)], red, b.device)
    n_global = sums[0].clamp_min(1).to(dt)
    inv_n = None if n_global.is_cuda else 1.0 / float(n_global)
    low, high = method.ratio
    A = torch.empty(B, T, dtype=dt, device=b.device)
    coef = torch.empty(B, T, dtype=dt, device=b.device)
    kept = torch.empty(B, dtype=dt, device=b.device)
    ratio_kept_rows = torch.empty(B, dtype=dt, device=b.device)
    adv_rows = torch.empty(B, dtype=dt, device=b.device)  # summed while each chunk is in cache
    zero = torch.zeros((), dtype=dt, device=b.device)
    # the strict band low < rho < high as the closed band [low+, high-] of the next floats inside it, so one
    # clamp and one compare (written to a float tensor: bool outputs are ~6x slower here) test it exactly
    band_lo, band_hi = (float(torch.nextafter(torch.tensor(x, dtype=dt), torch.tensor(y, dtype=dt)))
                        for x, y in ((low, high), (high, low)))
    # the log-ratio clamp (+-40) can only change a decision when the band reaches past exp(+-40); inside that
    # band a kept ratio never needed it, and an unclamped exp (inf or 0) is outside the band all the same
    clamp_at = D.SAO_LOG_RATIO_CLAMP
    needs_clamp = not (math.exp(-clamp_at) < low and high < math.exp(clamp_at))
    gae = LaGae(values, mf, L, lam, R, out=A)
    for r in row_chunks(B):
        A_c, _ = gae.rows(r, clean)
        mf_c = mf[r]
        if call.stats:
            adv_rows[r] = A_c.sum(1)
        if blp is None:
            # on-policy: rho = 1 on every action token, inside any band with low < 1 < high
            torch.mul(A_c, mf_c, out=coef[r]).div_(n_global)
            kept[r] = L[r]
            ratio_kept_rows[r] = L[r]
            continue
        x = torch.sub(b.logprobs[r], blp[r])
        if not clean:
            x = torch.where(mf_c.bool(), x, zero)
        if needs_clamp:
            x.clamp_(-clamp_at, clamp_at)
        ratio = x.exp_()
        # kr = the ratio clamped into the band: equal to the ratio exactly when it is inside, and finite, so
        # kr * keep is the kept ratio (0 outside the band, never inf * 0)
        kr = torch.clamp(ratio, band_lo, band_hi)
        keep_f = torch.eq(kr, ratio, out=ratio).mul_(mf_c)  # 1.0 inside the band on action tokens, else 0.0
        kept[r] = keep_f.sum(1)
        kr.mul_(keep_f)
        if call.stats:
            ratio_kept_rows[r] = kr.sum(1)
        if inv_n is None:  # on a GPU: no host sync for 1/N
            torch.mul(kr, A_c, out=coef[r]).div_(n_global)
        else:
            torch.addcmul(zero, kr, A_c, value=inv_n, out=coef[r])  # kept rho * A / N in one pass
    admitted = kept > 0
    row_stats = {"kept_share": kept / L.clamp_min(1), "lambda": lam}
    if not call.stats:
        return Update(method.name, coef, A, admitted, b.mask, value_targets=row_values_on_valid(b, R),
                      row_stats=row_stats, normalizer=TOKEN_MEAN)

    n_local = float(L.sum())
    n_kept = float(kept.sum())
    masked_tokens = n_local - n_kept
    ratio_kept = float(ratio_kept_rows.sum())
    stats_out = {
        "trajectories": float(sums[1]),
        "action_tokens": float(sums[0]),
        "admitted_share": float(admitted.sum()) / B,
        "masked_token_share": masked_tokens / n_local,
        "mean_ratio": ratio_kept / n_kept if n_kept else 0.0,
        "mean_advantage": float(adv_rows.sum()) / n_local,
        "mean_lambda": float(lam.mean()),
    }
    notes: list[str] = [red.note] if red.note else []
    if blp is None:
        notes.append(_ALL_ON_POLICY)
    else:
        notes += on_policy_notes(b)
        if masked_tokens:
            notes.append(
                f"masked {int(masked_tokens)} of {int(n_local)} action tokens whose current/rollout ratio left "
                f"({sig(low)}, {sig(high)}); they still count in N."
            )
    out = [int(i) for i in torch.nonzero(~admitted).flatten().tolist()]
    if out:
        notes.append(f"{len(out)} trajectories have every action token outside the band (indices {fmt_indices(out)}).")
    return Update(
        method=method.name,
        coefficients=coef,
        advantages=A,
        admitted=admitted,
        mask=b.mask,
        stats=stats_out,
        notes=notes,
        value_targets=row_values_on_valid(b, R),
        row_stats=row_stats,
        normalizer=TOKEN_MEAN,
    )


# ------------------------------------------------------------------------------------------------
# BPCO
# ------------------------------------------------------------------------------------------------


@rule
def bpco_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """BPCO (Qi et al. 2026, arXiv:2608.23566): bounded critic, LA-GAE, sign-dependent DPPO clip.

    * values must lie in ``reward_range`` on every action token (the critic's head is bounded by
      ``BPCO.bound``); value targets are R on every token of the trajectory (Monte Carlo, VC-PPO);
    * lambda_i = max(0, 1 - 1/(gae_alpha * L_i)) (clamped to 0 below L = 1/alpha, with a note);
      GAE over action tokens only, gamma = 1, not normalized;
    * rho = exp(clamp(lp - mu_lp, -20, 20)), mu_lp = behavior_logprobs (or lp: on-policy),
      mu = exp(mu_lp); DPPO binary-TV test on the probability difference: a token with A > 0 stays
      active iff mu * (rho - 1) <= clip, with A < 0 iff mu * (rho - 1) >= -clip, A = 0 always; the
      same as the anchor's rho <= 1 + clip/mu, written without dividing by mu;
    * coefficients = active min(rho, ratio_cap) * A / N, N = action tokens of the global batch (the
      ranks of ``process_group``). The test reads the uncapped rho; the cap (default 20, verl's
      dppo_tv truncation) bounds what a negative-advantage token whose probability rose can weigh.

    Normalization: token-weighted mean 1/N, like SAO. The anchor SDK applies none (its coefficients
    are ours times N); we divide so the three single-rollout methods share one convention and BPCO's
    step does not grow with batch size. Every trajectory with an action token is admitted (the clip
    never un-admits). Stats: trajectories, action_tokens (N), admitted_share, masked_token_share
    (clipped tokens), capped_token_share, mean_ratio (all action tokens, after the cap),
    mean_advantage, mean_clip_range (mean clip/mu), mean_lambda, explained_variance (1 - Var(R -
    V)/Var(R) over the action tokens, population variances; omitted when Var(R) = 0).
    """
    b, mf, L, clean = checked_batch(
        batch, call.dtype, call.device, validate=call.validate, behavior=True, needs="values", method="BPCO", hint=_CRITIC_HINT
    )
    B, T = b.logprobs.shape
    dt = b.dtype
    values = b.values
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    lo_r, hi_r = method.reward_range
    if call.validate:
        vmin, vmax = torch.aminmax(values) if clean else (math.nan, math.nan)
        if not (float(vmin) >= lo_r and float(vmax) <= hi_r):
            vmin, vmax = torch.aminmax(torch.where(b.mask, values, torch.full((), lo_r, dtype=dt, device=b.device)))
        if float(vmin) < lo_r or float(vmax) > hi_r:
            bad = b.mask & ((values < lo_r) | (values > hi_r))
            i, t = first_true(bad)
            raise ValueError(
                f"trajectory {i}: values[{t}] is {float(values[i, t])!r}, outside reward_range {method.reward_range}; "
                "BPCO's critic is bounded (pass raw head outputs through BPCO.bound)"
            )
    lam = gae_lambdas(L, method.gae_alpha)
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(B)], red, b.device)
    n_global = sums[0].clamp_min(1).to(dt)
    clip = float(method.clip)
    cap = float(method.ratio_cap)
    capped_rows = torch.zeros(B, dtype=dt, device=b.device)
    mu_lp = blp if blp is not None else b.logprobs
    A = torch.empty(B, T, dtype=dt, device=b.device)
    coef = torch.empty(B, T, dtype=dt, device=b.device)
    active_rows = torch.empty(B, dtype=dt, device=b.device)
    ratio_rows = torch.empty(B, dtype=dt, device=b.device)
    adv_rows = torch.empty(B, dtype=dt, device=b.device)
    inv_mu_rows = torch.empty(B, dtype=dt, device=b.device)
    v_rows = torch.empty(B, dtype=dt, device=b.device)
    v2_rows = torch.empty(B, dtype=dt, device=b.device)
    zero = torch.zeros((), dtype=dt, device=b.device)
    inv_n = None if n_global.is_cuda else 1.0 / float(n_global)
    tiny = torch.finfo(dt).tiny
    gae = LaGae(values, mf, L, lam, R, out=A)
    for r in row_chunks(B):
        A_c, nv = gae.rows(r, clean)  # nv = -V on action tokens, 0 elsewhere
        mf_c = mf[r]
        mu_c = mu_lp[r]
        x = torch.sub(b.logprobs[r], mu_c)
        if not clean:
            m_c = mf_c.bool()
            x = torch.where(m_c, x, zero)
            mu_c = torch.where(m_c, mu_c, zero)
        ratio = x.clamp_(-D.BPCO_LOG_RATIO_CAP, D.BPCO_LOG_RATIO_CAP).exp_()
        # DPPO binary-TV test: sign(A) * mu * (rho - 1) <= clip  (A = 0 is always active)
        mu = torch.exp(mu_c)
        g = torch.sub(ratio, 1.0).mul_(mu).mul_(torch.sign(A_c))
        act = torch.le(g, clip, out=g).mul_(mf_c)  # 1.0 iff the test passes, on action tokens
        if cap < math.inf:  # truncate after the test, as verl's dppo_tv: the test reads the true ratio
            if call.stats and float(ratio.max()) > cap:
                capped_rows[r] = (ratio > cap).to(dt).mul_(act).sum(1)
            ratio.clamp_(max=cap)
        active_rows[r] = act.sum(1)
        ratio_rows[r] = torch.mul(ratio, mf_c).sum(1)
        if call.stats:
            adv_rows[r] = A_c.sum(1)
            inv_mu_rows[r] = torch.div(mf_c, mu.clamp_(min=tiny)).sum(1)  # sum of 1/mu
            v_rows[r] = nv.sum(1).neg_()
            v2_rows[r] = nv.mul_(nv).sum(1)
        if inv_n is None:  # on a GPU: no host sync for 1/N
            torch.mul(ratio, A_c, out=coef[r]).mul_(act).div_(n_global)
        else:
            torch.addcmul(zero, ratio, A_c, value=inv_n, out=coef[r]).mul_(act)
    admitted = L > 0
    L1 = L.clamp_min(1)
    row_stats = {"clipped_share": 1.0 - active_rows / L1, "lambda": lam, "mean_ratio": ratio_rows / L1}
    if not call.stats:
        return Update(method.name, coef, A, admitted, b.mask, value_targets=row_values_on_valid(b, R),
                      row_stats=row_stats, normalizer=TOKEN_MEAN)

    n_local = float(L.sum())
    n_active = float(active_rows.sum())
    capped = float(capped_rows.sum())
    stats = {
        "trajectories": float(sums[1]),
        "action_tokens": float(sums[0]),
        "admitted_share": float(admitted.sum()) / B,
        "masked_token_share": (n_local - n_active) / n_local,
        "capped_token_share": capped / n_local,
        "mean_ratio": float(ratio_rows.sum()) / n_local,
        "mean_advantage": float(adv_rows.sum()) / n_local,
        "mean_clip_range": clip * float(inv_mu_rows.sum()) / n_local,
        "mean_lambda": float(lam[admitted].mean()),
    }
    notes: list[str] = [red.note] if red.note else []
    if capped:
        notes.append(
            f"the ratio cap bound: {int(capped)} active tokens had pi_train/pi_sampler > ratio_cap={sig(cap)} and "
            f"were counted at {sig(cap)}."
        )
    # explained variance over the (R_i, V_t) pairs of every action token (population variances)
    f64 = torch.float64
    R64, L64, v64 = R.to(f64), L.to(f64), v_rows.to(f64)
    sum_r = float((R64 * L64).sum())
    sum_r2 = float((R64 * R64 * L64).sum())
    var_r = sum_r2 / n_local - (sum_r / n_local) ** 2
    if var_r > 1e-12 * max(1.0, sum_r2 / n_local):
        # residual e = R - V: sum e = sum R L - sum V; sum e^2 = sum R^2 L - 2 sum R (row sum V) + sum V^2
        sum_e = sum_r - float(v64.sum())
        sum_e2 = sum_r2 - 2.0 * float((R64 * v64).sum()) + float(v2_rows.to(f64).sum())
        var_e = sum_e2 / n_local - (sum_e / n_local) ** 2
        stats["explained_variance"] = 1.0 - var_e / var_r
    else:
        notes.append("explained_variance not computed: every action token has the same reward.")
    notes += [_ALL_ON_POLICY] if blp is None else on_policy_notes(b)
    all_clipped = [int(i) for i in torch.nonzero(active_rows == 0).flatten().tolist()]
    if all_clipped:
        notes.append(f"{len(all_clipped)} trajectories have every action token clipped (indices {fmt_indices(all_clipped, 5)}).")
    short = [int(i) for i in torch.nonzero(lam == 0).flatten().tolist()]
    if short:
        notes.append(
            f"{len(short)} trajectories are shorter than 1/gae_alpha = {sig(1 / method.gae_alpha)} action tokens, so "
            f"their lambda was clamped to 0 (indices {fmt_indices(short, 5)})."
        )
    return Update(
        method=method.name,
        coefficients=coef,
        advantages=A,
        admitted=admitted,
        mask=b.mask,
        stats=stats,
        notes=notes,
        value_targets=row_values_on_valid(b, R),
        row_stats=row_stats,
        normalizer=TOKEN_MEAN,
    )
