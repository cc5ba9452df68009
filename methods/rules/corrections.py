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
    field_clean,
    fmt_indices,
    on_policy_notes,
    prepare,
    rule,
    sig,
    staleness_gate,
)
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
    ``commit=False`` leaves rae's baselines where they were.
    """
    b = prepare(batch, call.dtype, call.device)
    B, T = b.logprobs.shape
    dt = b.dtype
    inner = method.inner
    base = inner.update(b, **call.inner())
    blp = b.behavior_logprobs
    if blp is not None and call.validate:
        field_clean(b, "behavior_logprobs", blp, validate=True, nonpositive=True)
    mask = b.mask
    notes = list(base.notes)
    stats_out = dict(base.stats)
    if blp is None:
        weights = mask.to(dt)
        kept = mask
        rho = mask.to(dt)
        notes.append("no trajectory has behavior_logprobs: taken as on-policy, so the correction changes nothing.")
    else:
        weights, kept, rho = correction_weights(
            b.logprobs,
            blp,
            mask,
            method.correction,
            ipo_threshold=method.ipo_threshold,
            ratio=method.ratio,
            cap=method.cap,
            ratio_cap=method.ratio_cap,
        )
        notes += on_policy_notes(b)
    fresh, stale = staleness_gate(b, method.off_policy_steps, want_indices=call.stats)
    if fresh is not None:
        weights = weights * fresh[:, None].to(dt)
    coef = base.coefficients * weights
    kept_rows = (kept & mask).sum(1)
    admitted = base.admitted & (kept_rows > 0)
    if fresh is not None:
        admitted &= fresh

    mf = mask.to(dt)
    row_stats = dict(base.row_stats)
    L1 = mf.sum(1).clamp_min(1)
    row_stats["kept_share"] = kept_rows.to(dt) / L1
    row_stats["mean_ratio"] = (rho * mf).sum(1) / L1
    if not call.stats:
        return Update(f"async {inner.name}", coef, base.advantages, admitted, mask,
                      value_targets=base.value_targets, row_stats=row_stats, normalizer=base.normalizer)
    n_tok = float(mf.sum())
    zero = torch.zeros((), dtype=dt, device=b.device)
    if blp is not None:
        pdiff = torch.where(mask, (b.logprobs.exp() - blp.exp()).abs(), zero)
        max_pd = float(pdiff.max())
    else:
        max_pd = 0.0
    n_kept = float((kept & mask).sum())
    n_capped = int(((rho > method.ratio_cap) & kept & mask).sum()) if blp is not None else 0
    stats_out.update(
        {
            "masked_token_share": 1.0 - n_kept / n_tok,
            "capped_token_share": n_capped / n_tok,
            "mean_ratio": float((rho * mf).sum()) / n_tok,
            "max_prob_diff": max_pd,
            "mean_weight": float((weights * mf).sum()) / n_tok,
            "stale_trajectories": float(len(stale)),
            "admitted_share": float(admitted.sum()) / B,
        }
    )
    if blp is not None and n_kept < n_tok:
        if method.correction == "ipo":
            rule = f"|pi_train - pi_sampler| > ipo_threshold={sig(method.ipo_threshold)}"
        else:
            rule = f"a ratio outside [{sig(method.ratio[0])}, {sig(method.ratio[1])}]"
        notes.append(f"{method.correction} masked {int(n_tok - n_kept)} of {int(n_tok)} action tokens with {rule}.")
    if blp is not None and method.correction == "tis":
        capped = int(((rho > method.cap) & mask).sum())
        if capped:
            notes.append(f"tis capped the ratio of {capped} tokens at {sig(method.cap)}.")
    if n_capped and (method.correction != "tis" or method.ratio_cap < method.cap):
        notes.append(
            f"the ratio cap bound: {n_capped} kept tokens had pi_train/pi_sampler > ratio_cap={sig(method.ratio_cap)} "
            f"and were counted at {sig(method.ratio_cap)}."
        )
    if stale:
        notes.append(
            f"dropped {len(stale)} trajectories older than off_policy_steps={method.off_policy_steps} "
            f"(indices {fmt_indices(stale)})."
        )
    lost_rows = base.admitted & ~admitted
    if fresh is not None:  # the stale ones are reported above
        lost_rows &= fresh
    lost = torch.nonzero(lost_rows).flatten().tolist()
    if lost:
        notes.append(f"{len(lost)} trajectories lost every token to the correction (indices {fmt_indices(lost)}).")
    return Update(
        method=f"async {inner.name}",
        coefficients=coef,
        advantages=base.advantages,
        admitted=admitted,
        mask=mask,
        stats=stats_out,
        notes=notes,
        value_targets=base.value_targets,
        row_stats=row_stats,
        normalizer=base.normalizer,
    )
