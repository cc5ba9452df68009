"""Async: a staleness bound and a per-token off-policy correction around an inner update.

The inner method (grpo, max_rl, rae, OPD, OPSD) computes its coefficients as if on-policy. For each
action token, with rho = pi_train(a)/pi_sampler(a) = exp(clamp(logp - behavior_logp, -20, 20)):

* ``ipo``     keep rho * c where |pi_train(a) - pi_sampler(a)| <= ipo_threshold (a probability
              difference, prime-rl's ``ipo_threshold``), else 0. This is prime-rl's ipo *mask*
              only: prime-rl's loss also adds ``kl_tau * (log rho)^2`` (kl_tau = 1e-3) on every
              loss token, a separate penalty term that a coefficient rule does not carry. Add it
              to your loss yourself if you want prime-rl's exact objective;
* ``icepop``  keep rho * c where low <= rho <= high (inclusive, as verl and OpenRLHF), else 0;
* ``tis``     c * min(rho, cap) (truncated importance sampling, verl's token level).

Every kept rho is then capped at ``ratio_cap`` (default 20, verl's DPPO truncation): under ipo a token
whose sampler probability was tiny can pass the probability-difference test with rho near e^20.

A trajectory whose ``staleness`` (policy versions behind the trainer) exceeds ``off_policy_steps``
is dropped whole (it still counts in the inner normalizer). Corrections multiply the inner
coefficients, so the inner normalization (1/N over the global batch) is kept: masked tokens still
count in N, as in SAO. Without behavior_logprobs every ratio is 1 and nothing is masked.
"""

from __future__ import annotations

from typing import Any

import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    RuleCall,
    compute_dtype,
    indices_note,
    on_policy_notes,
    policy_for,
    prepare,
    rule,
    sig,
    staleness_gate,
)
from pick_a_method.methods.rules.checks import check_token_field, token_field_bad, verify, widened_diff
from pick_a_method.methods.update import Update


def correction_weights(
    logprobs: torch.Tensor,
    behavior_logprobs: torch.Tensor,
    mask: torch.Tensor,
    correction: str,
    *,
    ipo_threshold: float = D.ASYNC_IPO_THRESHOLD,
    ratio: tuple[float, float] = D.ASYNC_ICEPOP_RATIO,
    cap: float = D.ASYNC_TIS_CAP,
    ratio_cap: float = D.ASYNC_RATIO_CAP,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(weights [B, T], kept [B, T] bool, rho [B, T]): the factor each inner coefficient is multiplied by.

    ``rho`` is the uncapped ratio (0 off the mask); the weights carry min(rho, ratio_cap).

    Masked positions get weight 0 and never produce NaN (inputs there may be garbage).
    """
    dt = logprobs.dtype
    zero = torch.zeros((), dtype=dt, device=logprobs.device)
    lp = torch.where(mask, logprobs, zero)
    blp = torch.where(mask, behavior_logprobs, zero)
    x = (lp - blp).clamp_(-D.ASYNC_LOG_RATIO_CLAMP, D.ASYNC_LOG_RATIO_CLAMP)
    rho = x.exp()
    held = rho.clamp(max=ratio_cap)
    if correction == "ipo":
        kept = ((lp.exp() - blp.exp()).abs() <= ipo_threshold) & mask
        weights = torch.where(kept, held, zero)
    elif correction == "icepop":
        low, high = ratio
        kept = (rho >= low) & (rho <= high) & mask
        weights = torch.where(kept, held, zero)
    elif correction == "tis":
        kept = mask.clone()
        weights = torch.where(mask, held.clamp(max=cap), zero)
    else:
        raise ValueError(f"correction must be one of {', '.join(D.ASYNC_CORRECTIONS)}; got {correction!r}")
    return weights, kept, torch.where(mask, rho, zero)


@rule
def async_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """The inner update, then the staleness gate and the per-token correction (see the module docstring).

    Stats: the inner method's, plus masked_token_share (tokens the correction zeroed), capped_token_share,
    mean_ratio (uncapped, over action tokens), max_prob_diff (largest |pi_train - pi_sampler|),
    mean_weight (mean correction factor over action tokens), stale_trajectories, admitted_share.
    ``commit=False`` leaves rae's baselines where they were. The correction multiplies the inner rule's
    coefficients in place, chunk by chunk (the inner Update is not returned): one pass over lp and blp.
    """
    host = call.host
    b = prepare(batch, call.dtype, call.device)
    policy = policy_for(b.device)
    B, T = b.logprobs.shape
    dt = compute_dtype(b.dtype)
    inner = method.inner
    base = inner.update(b, **call.inner())
    blp = b.behavior_logprobs
    if blp is not None and call.validate:
        verify(policy, host, lambda: token_field_bad(b, blp, True),
               lambda: check_token_field(b, "behavior_logprobs", blp, nonpositive=True))
    mask = b.mask
    corr = method.correction
    if corr not in D.ASYNC_CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(D.ASYNC_CORRECTIONS)}; got {corr!r}")
    fresh = staleness_gate(b, method.off_policy_steps)
    coef = base.coefficients
    L = torch.sum(mask, 1, dtype=dt)
    if blp is None:
        kept_rows, ratio_rows = L, L
        if fresh is not None:
            coef.mul_(fresh[:, None])
    else:
        kept_rows, ratio_rows = torch.empty(B, dtype=dt, device=b.device), torch.empty(B, dtype=dt, device=b.device)
        if call.stats:  # per row: weight sum, tokens past ratio_cap, tokens past tis's cap, largest |p - q|
            extra = torch.empty(4, B, dtype=dt, device=b.device)
        zero = torch.zeros((), dtype=dt, device=b.device)
        low, high = method.ratio
        clamp_at = D.ASYNC_LOG_RATIO_CLAMP

        def chunk(r: slice) -> None:  # a function: its temporaries are freed before the next chunk's
            m = mask[r]
            x = widened_diff(b.logprobs[r], blp[r], dt)
            rho = torch.where(m, x, zero, out=x).clamp_(-clamp_at, clamp_at).exp_()
            rho = torch.where(m, rho, zero, out=rho)  # the ratio on action tokens, 0 elsewhere
            ratio_rows[r] = rho.sum(1)
            pd = None
            if corr == "ipo" or call.stats:  # |pi_train - pi_sampler| on action tokens
                pd = b.logprobs[r].to(dt, copy=True).exp_().sub_(torch.exp(blp[r].to(dt))).abs_()
                pd = torch.where(m, pd, zero, out=pd)
            if corr == "ipo":
                keep = torch.le(pd, method.ipo_threshold).to(dt).mul_(m)
            elif corr == "icepop":  # low <= rho <= high, inclusive: rho is unchanged by the clamp into the band
                kr = torch.clamp(rho, low, high)
                keep = torch.eq(kr, rho, out=kr).mul_(m)
            else:  # tis keeps every action token
                keep = None
            kept_rows[r] = L[r] if keep is None else keep.sum(1)
            if call.stats:
                extra[3, r] = pd.amax(1)
                over = torch.gt(rho, method.ratio_cap)
                extra[1, r] = over.sum(1) if keep is None else over.to(dt).mul_(keep).sum(1)
                extra[2, r] = torch.gt(rho, method.cap).sum(1)
            w = rho.clamp_(max=method.ratio_cap)
            if corr == "tis":
                w.clamp_(max=method.cap)
            else:
                w.mul_(keep)
            if fresh is not None:
                w.mul_(fresh[r, None])
            if call.stats:
                extra[0, r] = w.sum(1)
            coef[r].mul_(w)

        temps = (4 if corr == "ipo" else 3) + call.stats  # a stats pass holds one more
        for r in policy.chunks(B, T, temps=temps, compute=dt, given=b.dtype, outputs=2 * dt.itemsize / b.dtype.itemsize):
            chunk(r)
    admitted = base.admitted & (kept_rows > 0)
    if fresh is not None:
        admitted &= fresh
    row_stats = dict(base.row_stats)
    L1 = L.clamp_min(1)
    row_stats["kept_share"] = kept_rows / L1
    row_stats["mean_ratio"] = ratio_rows / L1
    upd = Update(f"async {inner.name}", coef, base.advantages, admitted, mask, value_targets=base.value_targets,
                 row_stats=row_stats, normalizer=base.normalizer)
    if not call.stats:
        return upd
    parts = [L.sum(), kept_rows.sum(), ratio_rows.sum(), admitted.sum()]
    if blp is not None:
        parts += [extra[0].sum(), extra[1].sum(), extra[2].sum(), extra[3].max()]
    got = host.want(parts)

    def finish() -> None:
        vals = got()
        n_tok, n_kept, ratio_sum, n_adm = vals[:4]
        w_sum, n_capped, tis_capped, max_pd = vals[4:] if blp is not None else (n_tok, 0.0, 0.0, 0.0)
        notes = list(base.notes)
        if blp is None:
            notes.append("no trajectory has behavior_logprobs: taken as on-policy, so the correction changes nothing.")
        else:
            notes += on_policy_notes(b)
        upd.stats = {**base.stats, "masked_token_share": 1.0 - n_kept / n_tok, "capped_token_share": n_capped / n_tok,
                     "mean_ratio": ratio_sum / n_tok, "max_prob_diff": max_pd, "mean_weight": w_sum / n_tok,
                     "stale_trajectories": float(n_stale()), "admitted_share": n_adm / B}
        if blp is not None and n_kept < n_tok:
            if corr == "ipo":
                what = f"|pi_train - pi_sampler| > ipo_threshold={sig(method.ipo_threshold)}"
            else:
                what = f"a ratio outside [{sig(method.ratio[0])}, {sig(method.ratio[1])}]"
            notes.append(f"{corr} masked {int(n_tok - n_kept)} of {int(n_tok)} action tokens with {what}.")
        if blp is not None and corr == "tis" and tis_capped:
            notes.append(f"tis capped the ratio of {int(tis_capped)} tokens at {sig(method.cap)}.")
        if n_capped and (corr != "tis" or method.ratio_cap < method.cap):
            notes.append(
                f"the ratio cap bound: {int(n_capped)} kept tokens had pi_train/pi_sampler > ratio_cap="
                f"{sig(method.ratio_cap)} and were counted at {sig(method.ratio_cap)}."
            )
        upd.notes = notes + upd.notes

    stale_flags = torch.zeros(B, dtype=torch.bool, device=b.device) if fresh is None else ~fresh
    n_stale = host.want(stale_flags.sum())
    host.then(finish)
    indices_note(host, stale_flags, lambda n, idx: (
        f"dropped {n} trajectories older than off_policy_steps={method.off_policy_steps} (indices {idx})."), upd.notes)
    lost_rows = base.admitted & ~admitted
    if fresh is not None:  # the stale ones are reported above
        lost_rows &= fresh
    indices_note(host, lost_rows, lambda n, idx: (
        f"{n} trajectories lost every token to the correction (indices {idx})."), upd.notes)
    return upd
