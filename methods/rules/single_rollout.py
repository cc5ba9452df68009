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

import functools
import math
from typing import Any

import numpy as np
import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    RuleCall,
    TOKEN_MEAN,
    checked_batch,
    first_true,
    global_sums,
    indices_note,
    on_policy_notes,
    reducer,
    row_values_on_valid,
    rule,
    sig,
)
from pick_a_method.methods.rules.flash_reinforce import bernoulli_kl, flash_reinforce_update
from pick_a_method.methods.rules.checks import sub_into, verify
from pick_a_method.methods.rules.lagae import LaGae, gae_lambdas, lagae, lagae_reference
from pick_a_method.methods.update import Update

__all__ = [
    "bernoulli_kl", "flash_reinforce_update", "sao_update", "bpco_update",
    # re-exported: FlashReinforce lives in rules.flash_reinforce, the GAE in rules.lagae
    "gae_lambdas", "lagae", "lagae_reference", "LaGae",
]


# ------------------------------------------------------------------------------------------------
# SAO
# ------------------------------------------------------------------------------------------------

_CRITIC_HINT = "Run the critic over the batch first, or use FlashReinforce, which needs no critic."
_ALL_ON_POLICY = "no trajectory has behavior_logprobs: taken as on-policy, every ratio is 1."


def _critic_walk(b: Any, values: Any, L: Any, lam: Any, R: Any, A: Any, dt: Any, policy: Any, method: Any, chk: Any,
                 *, scratch_rows: int) -> tuple[Any, list[slice], Any]:
    """What SAO and BPCO walk the batch with: their LA-GAE over the critic's values, the row chunks the policy
    allows (5 temporaries a row, the outputs in the compute dtype) and a scratch of `scratch_rows` rows a chunk row."""
    B, T = A.shape
    gae = LaGae(values, b.float_mask(dt) if policy.host_reads else None, L, lam, R, out=A, dtype=dt, policy=policy,
                alpha=method.gae_alpha, mask_rows=chk.mask_rows)
    chunks = policy.chunks(B, T, temps=5, compute=dt, given=b.dtype, outputs=2 * dt.itemsize / b.dtype.itemsize)
    scratch = policy.scratch(max(r.stop - r.start for r in chunks), scratch_rows * (T + 2 * math.isqrt(T) + 2), dt,
                             b.device)
    return gae, chunks, scratch


def _critic_inputs(method: Any, batch: Any, call: RuleCall, name: str, check: Any = None) -> tuple:
    """What SAO and BPCO start from: the checked batch (it must carry the critic's values), the method's own check of
    it (`check(b, method, call, clean, policy)`, before any collective), each row's GAE lambda, and the global
    action-token count N with 1/N on the host where the policy reads it (both rules weigh each token 1/N)."""
    chk = checked_batch(batch, call.dtype, call.device, validate=call.validate, host=call.host, behavior=True,
                        needs="values", method=name, hint=_CRITIC_HINT)
    b, dt, L, clean, policy = chk
    if check is not None and call.validate:
        check(b, method, call, clean, policy)
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(b.logprobs.shape[0])], red, b.device)
    n_global = sums[0].clamp_min(1).to(dt)
    return chk, gae_lambdas(L, method.gae_alpha), red, sums, n_global, (1.0 / float(n_global) if policy.host_reads
                                                                        else None)


def _values_in_range(b: Any, method: Any, call: RuleCall, clean: bool, policy: Any) -> None:
    """BPCO's bounded critic: every action token's value inside reward_range (one device test; the host walk names
    the rows only when it fails)."""
    lo_r, hi_r = method.reward_range

    def range_bad() -> torch.Tensor:
        vmin, vmax = torch.aminmax(torch.where(b.mask, b.values, torch.full((), lo_r, dtype=b.values.dtype,
                                                                            device=b.device)))
        return ~((vmin >= lo_r) & (vmax <= hi_r))
    verify(policy, call.host, range_bad, lambda: _check_range(b, b.values, method, clean))


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
    host = call.host
    chk, lam, red, sums, n_global, inv_n = _critic_inputs(method, batch, call, "SAO")
    b, dt, L, clean, policy = chk
    B, T = b.logprobs.shape
    values, blp, R = b.values, b.behavior_logprobs, b.rewards.to(dt)
    low, high = method.ratio
    A = torch.empty(B, T, dtype=dt, device=b.device)
    coef = torch.empty(B, T, dtype=dt, device=b.device)
    kept = torch.empty(B, dtype=dt, device=b.device)
    ratio_kept_rows = torch.empty(B, dtype=dt, device=b.device)
    adv_rows = torch.empty(B, dtype=dt, device=b.device)  # summed while each chunk is in cache
    zero = torch.zeros((), dtype=dt, device=b.device)
    # the strict band low < rho < high as the closed band [low+, high-] of the next floats inside it, so one
    # clamp and one compare (written to a float tensor: bool outputs are ~6x slower here) test it exactly
    band_lo, band_hi = next_inside(low, high, dt), next_inside(high, low, dt)
    # the log-ratio clamp (+-40) can only change a decision when the band reaches past exp(+-40); inside that
    # band a kept ratio never needed it, and an unclamped exp (inf or 0) is outside the band all the same
    clamp_at = D.SAO_LOG_RATIO_CLAMP
    needs_clamp = not (math.exp(-clamp_at) < low and high < math.exp(clamp_at))
    gae, chunks, scratch = _critic_walk(b, values, L, lam, R, A, dt, policy, method, chk, scratch_rows=5)

    def chunk(r: slice) -> None:  # a function: its temporaries are freed before the next chunk's
        scratch.reset()
        n = r.stop - r.start
        A_c, _ = gae.rows(r, clean, scratch)  # 0 off the action tokens
        if call.stats:
            adv_rows[r] = A_c.sum(1)
        if blp is None:
            # on-policy: rho = 1 on every action token, inside any band with low < 1 < high
            torch.div(A_c, n_global, out=coef[r])
            kept[r] = L[r]
            ratio_kept_rows[r] = L[r]
            return
        x = sub_into(scratch.take(n, T), b.logprobs[r], blp[r])
        if not clean:
            x = torch.where(b.mask[r], x, zero, out=x)
        if needs_clamp:
            x.clamp_(-clamp_at, clamp_at)
        ratio = x.exp_()
        # kr = the ratio clamped into the band: equal to the ratio exactly when it is inside, and finite, so
        # kr * keep is the kept ratio (0 outside the band, never inf * 0)
        kr = torch.clamp(ratio, band_lo, band_hi, out=scratch.take(n, T))
        keep_f = chk.mask_(torch.eq(kr, ratio, out=ratio), r)  # 1.0 inside the band on action tokens, else 0.0
        kept[r] = keep_f.sum(1)
        kr.mul_(keep_f)
        if call.stats:
            ratio_kept_rows[r] = kr.sum(1)
        if inv_n is None:  # no host read for 1/N
            torch.mul(kr, A_c, out=coef[r]).div_(n_global)
        else:
            torch.addcmul(zero, kr, A_c, value=inv_n, out=coef[r])  # kept rho * A / N in one pass

    for r in chunks:
        chunk(r)
    admitted = kept > 0
    row_stats = {"kept_share": kept / L.clamp_min(1), "lambda": lam}
    upd = Update(method.name, coef, A, admitted, b.mask, value_targets=row_values_on_valid(b, R),
                 row_stats=row_stats, normalizer=TOKEN_MEAN)
    if not call.stats:
        return upd
    got = host.want([sums[1], sums[0], L.sum(), kept.sum(), admitted.sum(), ratio_kept_rows.sum(), adv_rows.sum(),
                     lam.mean()])

    def finish() -> None:
        n_traj, n_tok, n_local, n_kept, n_adm, ratio_kept, adv_sum, mean_lam = got()
        masked_tokens = n_local - n_kept
        upd.stats = {
            "trajectories": n_traj,
            "action_tokens": n_tok,
            "admitted_share": n_adm / B,
            "masked_token_share": masked_tokens / n_local,
            "mean_ratio": ratio_kept / n_kept if n_kept else 0.0,
            "mean_advantage": adv_sum / n_local,
            "mean_lambda": mean_lam,
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
        upd.notes[:0] = notes

    host.then(finish)
    indices_note(host, ~admitted, lambda n, idx: (
        f"{n} trajectories have every action token outside the band (indices {idx})."), upd.notes)
    return upd


@functools.lru_cache(maxsize=64)
def next_inside(x: float, toward: float, dt: torch.dtype) -> float:
    """The float of dt next to x towards ``toward`` (on the host: no tensor, no read)."""
    np_dt = np.float32 if dt == torch.float32 else np.float64
    return float(np.nextafter(np_dt(x), np_dt(toward)))


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
    host = call.host
    chk, lam, red, sums, n_global, inv_n = _critic_inputs(method, batch, call, "BPCO", check=_values_in_range)
    b, dt, L, clean, policy = chk
    B, T = b.logprobs.shape
    values, blp, R = b.values, b.behavior_logprobs, b.rewards.to(dt)
    clip = float(method.clip)
    cap = float(method.ratio_cap)
    mu_lp = blp if blp is not None else b.logprobs
    A = torch.empty(B, T, dtype=dt, device=b.device)
    coef = torch.empty(B, T, dtype=dt, device=b.device)
    # per row: active tokens, ratio sum; with stats: capped, advantage sum, sum of 1/mu, of V, of V^2
    rows_out = torch.zeros(7, B, dtype=dt, device=b.device)
    active_rows, ratio_rows, capped_rows = rows_out[0], rows_out[1], rows_out[2]
    zero = torch.zeros((), dtype=dt, device=b.device)
    tiny = torch.finfo(dt).tiny
    gae, chunks, scratch = _critic_walk(b, values, L, lam, R, A, dt, policy, method, chk, scratch_rows=9)

    def chunk(r: slice) -> None:  # a function: its temporaries are freed before the next chunk's
        scratch.reset()
        n = r.stop - r.start
        A_c, nv = gae.rows(r, clean, scratch)  # nv = -V on action tokens, 0 elsewhere
        mu_c = mu_lp[r]
        own = mu_c.dtype != dt  # a half chunk is widened once, into a tensor of our own
        if own:
            mu_c = scratch.take(n, T).copy_(mu_c)
        x = sub_into(scratch.take(n, T), b.logprobs[r], mu_c)
        if not clean:
            m_c = b.mask[r]
            x = torch.where(m_c, x, zero, out=x)
            mu_c = torch.where(m_c, mu_c, zero, out=mu_c if own else scratch.take(n, T))
            own = True
        ratio = x.clamp_(-D.BPCO_LOG_RATIO_CAP, D.BPCO_LOG_RATIO_CAP).exp_()
        # DPPO binary-TV test: sign(A) * mu * (rho - 1) <= clip  (A = 0 is always active)
        mu = mu_c.exp_() if own else torch.exp(mu_c, out=scratch.take(n, T))
        g = torch.sub(ratio, 1.0, out=scratch.take(n, T)).mul_(mu).mul_(torch.sign(A_c, out=scratch.take(n, T)))
        act = chk.mask_(torch.le(g, clip, out=g), r)  # 1.0 iff the test passes, on action tokens
        if cap < math.inf:  # truncate after the test, as verl's dppo_tv: the test reads the true ratio
            if call.stats and (not policy.host_reads or float(ratio.max()) > cap):  # cpu: count only if any
                capped_rows[r] = torch.gt(ratio, cap).to(dt).mul_(act).sum(1)
            ratio.clamp_(max=cap)
        active_rows[r] = act.sum(1)
        ratio_rows[r] = chk.masked(ratio, r, out=scratch.take(n, T)).sum(1)
        if call.stats:
            rows_out[3, r] = A_c.sum(1)
            rows_out[4, r] = torch.div(chk.mask_rows(r), mu.clamp_(min=tiny), out=scratch.take(n, T)).sum(1)  # 1/mu
            rows_out[5, r] = nv.sum(1).neg_()
            rows_out[6, r] = nv.mul_(nv).sum(1)
        if inv_n is None:  # no host read for 1/N
            torch.mul(ratio, A_c, out=coef[r]).mul_(act).div_(n_global)
        else:
            torch.addcmul(zero, ratio, A_c, value=inv_n, out=coef[r]).mul_(act)

    for r in chunks:
        chunk(r)
    admitted = L > 0
    L1 = L.clamp_min(1)
    row_stats = {"clipped_share": 1.0 - active_rows / L1, "lambda": lam, "mean_ratio": ratio_rows / L1}
    upd = Update(method.name, coef, A, admitted, b.mask, value_targets=row_values_on_valid(b, R),
                 row_stats=row_stats, normalizer=TOKEN_MEAN)
    if not call.stats:
        return upd
    # explained variance over the (R_i, V_t) pairs of every action token (population variances), from row sums:
    # residual e = R - V: sum e = sum R L - sum V; sum e^2 = sum R^2 L - 2 sum R (row sum V) + sum V^2
    f64 = torch.float64
    R64, L64, v64 = R.to(f64), L.to(f64), rows_out[5].to(f64)
    got = host.want(torch.cat([
        torch.stack([sums[1], sums[0], L64.sum(), admitted.sum().to(f64), torch.where(admitted, lam, 0).sum().to(f64),
                     (R64 * L64).sum(), (R64 * R64 * L64).sum(), (R64 * v64).sum()]),
        rows_out[:7].to(f64).sum(1)]))

    def finish() -> None:
        n_traj, n_tok, n_local, n_adm, lam_sum, sum_r, sum_r2, sum_rv, n_active, ratio_sum, capped, adv_sum, \
            inv_mu, sum_v, sum_v2 = got()
        upd.stats = {
            "trajectories": n_traj,
            "action_tokens": n_tok,
            "admitted_share": n_adm / B,
            "masked_token_share": (n_local - n_active) / n_local,
            "capped_token_share": capped / n_local,
            "mean_ratio": ratio_sum / n_local,
            "mean_advantage": adv_sum / n_local,
            "mean_clip_range": clip * inv_mu / n_local,
            "mean_lambda": lam_sum / n_adm if n_adm else math.nan,
        }
        notes: list[str] = [red.note] if red.note else []
        if capped:
            notes.append(
                f"the ratio cap bound: {int(capped)} active tokens had pi_train/pi_sampler > ratio_cap={sig(cap)} and "
                f"were counted at {sig(cap)}."
            )
        var_r = sum_r2 / n_local - (sum_r / n_local) ** 2
        if var_r > 1e-12 * max(1.0, sum_r2 / n_local):
            sum_e = sum_r - sum_v
            sum_e2 = sum_r2 - 2.0 * sum_rv + sum_v2
            var_e = sum_e2 / n_local - (sum_e / n_local) ** 2
            upd.stats["explained_variance"] = 1.0 - var_e / var_r
        else:
            notes.append("explained_variance not computed: every action token has the same reward.")
        notes += [_ALL_ON_POLICY] if blp is None else on_policy_notes(b)
        upd.notes[:0] = notes

    host.then(finish)
    indices_note(host, active_rows == 0, lambda n, idx: (
        f"{n} trajectories have every action token clipped (indices {idx})."), upd.notes, limit=5)
    indices_note(host, lam == 0, lambda n, idx: (
        f"{n} trajectories are shorter than 1/gae_alpha = {sig(1 / method.gae_alpha)} action tokens, so "
        f"their lambda was clamped to 0 (indices {idx})."), upd.notes, limit=5)
    return upd


def _check_range(b: Any, values: torch.Tensor, method: Any, clean: bool) -> None:
    """Values must lie in BPCO's reward_range on every action token; refused by trajectory and token."""
    lo_r, hi_r = method.reward_range
    vmin, vmax = torch.aminmax(values) if clean else (math.nan, math.nan)
    if not (float(vmin) >= lo_r and float(vmax) <= hi_r):
        vmin, vmax = torch.aminmax(torch.where(b.mask, values, torch.full((), lo_r, dtype=values.dtype,
                                                                         device=b.device)))
    if float(vmin) < lo_r or float(vmax) > hi_r:
        bad = b.mask & ((values < lo_r) | (values > hi_r))
        i, t = first_true(bad)
        raise ValueError(
            f"trajectory {i}: values[{t}] is {float(values[i, t])!r}, outside reward_range {method.reward_range}; "
            "BPCO's critic is bounded (pass raw head outputs through BPCO.bound)"
        )
