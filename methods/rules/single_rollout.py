"""Single-rollout update rules: FlashReinforce, SAO, BPCO (one rollout per prompt, no group baseline).

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
from collections.abc import Iterator
from typing import Any, NamedTuple

import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    TOKEN_MEAN,
    checked_batch,
    expand_rows,
    first_true,
    fmt_indices,
    global_sums,
    on_policy_notes,
    reducer,
    row_values_on_valid,
    rule,
    sig,
    staleness_gate,
)
from pick_a_method.methods.update import Update

CHUNK_ROWS = 256  # rows per chunk: keeps each temporary near 1 MiB at T = 1024 (cache resident)

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
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    validate: bool = True,
    distributed: bool | None = None,
    process_group: Any = None,
    stats: bool = True,
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
    b, mf, L, clean = checked_batch(batch, dtype, device, validate=validate, behavior=True)
    B, T = b.logprobs.shape
    dt = b.dtype
    lp = b.logprobs
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    red = reducer(distributed, process_group)

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
            l1q = torch.log1p(q.neg_(), out=b1)  # log(1 - q)
            l1p = torch.log1p(torch.neg(p, out=b4), out=b4)  # log(1 - p)
            l1p.sub_(l1q).mul_(p.neg_().add_(1))  # (1 - p) * log((1 - p) / (1 - q))
            d.add_(l1p).clamp_(min=0)
            if clean:
                d.mul_(mf_c)
            else:
                d = torch.where(mf_c.bool(), d, zero)
            drift_sum[i0:i1] = d.sum(1)
        drift = drift_sum / L1
    admitted = drift <= trust  # NaN compares False: a non-finite drift is rejected
    fresh, stale = staleness_gate(b, method.off_policy_steps, want_indices=stats)
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
            if stats:  # one reduction per chunk; the counts below run only when something is out of range
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
    if stats:
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


# ------------------------------------------------------------------------------------------------
# Length-adaptive GAE over action tokens only (SAO, BPCO)
# ------------------------------------------------------------------------------------------------


def gae_lambdas(L: torch.Tensor, alpha: float) -> torch.Tensor:
    """lambda(L) = max(0, 1 - 1/(alpha * L)) per trajectory (0 where L < 1)."""
    lam = 1.0 - 1.0 / (alpha * L.clamp_min(1))
    return torch.where(L >= 1, lam.clamp_min(0.0), torch.zeros_like(lam))


def lagae_reference(values: torch.Tensor, mask: torch.Tensor, rewards: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """Skip-observation GAE (gamma = 1) by the textbook backward loop over T; the tests' reference.

    On action tokens in order a_1..a_L: delta_k = r_k + V(a_{k+1}) - V(a_k), r = R on the last
    action token only, V past the end = 0; A_k = delta_k + lambda * A_{k+1}. Observation tokens
    get 0 and do not break the chain (their values and rewards are never read).
    """
    B, T = values.shape
    dt = values.dtype
    zero = torch.zeros((), dtype=dt, device=values.device)
    A = torch.zeros(B, T, dtype=dt, device=values.device)
    carry_a = torch.zeros(B, dtype=dt, device=values.device)
    carry_v = torch.zeros(B, dtype=dt, device=values.device)
    seen = torch.zeros(B, dtype=torch.bool, device=values.device)
    for t in range(T - 1, -1, -1):
        m = mask[:, t]
        v = torch.where(m, values[:, t], zero)
        r = torch.where(m & ~seen, rewards, zero)
        a = r + carry_v - v + lam * carry_a
        A[:, t] = torch.where(m, a, zero)
        carry_a = torch.where(m, a, carry_a)
        carry_v = torch.where(m, v, carry_v)
        seen = seen | m
    return A


def _lagae_delta(values: torch.Tensor, mask: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
    """lambda = 0: A = delta = r + V(next action token) - V, vectorized with a reverse cummin."""
    B, T = values.shape
    pos = torch.arange(T, device=values.device).expand(B, T)
    idx = torch.where(mask, pos, torch.full_like(pos, T))
    # next action position strictly after t: reverse running minimum, shifted by one
    nxt = torch.flip(torch.cummin(torch.flip(idx, [1]), 1).values, [1])
    nxt = torch.cat([nxt[:, 1:], torch.full((B, 1), T, device=values.device, dtype=nxt.dtype)], 1)
    padded = torch.cat([torch.where(mask, values, torch.zeros_like(values)), values.new_zeros(B, 1)], 1)
    v_next = padded.gather(1, nxt)
    last = torch.where(mask, pos, torch.full_like(pos, -1)).max(1).values
    r = torch.where(pos == last[:, None], rewards[:, None], torch.zeros_like(values))
    v = torch.where(mask, values, torch.zeros_like(values))
    return torch.where(mask, r + v_next - v, torch.zeros_like(values))


def lagae(
    values: torch.Tensor,
    mf: torch.Tensor,
    L: torch.Tensor,
    lam: torch.Tensor,
    rewards: torch.Tensor,
    *,
    clean: bool = True,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Skip-observation LA-GAE (gamma = 1) in closed form, equal to ``lagae_reference``.

    With action ranks k = 0..L-1 and w_k = lambda^k, the recursion unrolls to
    ``A_k = lambda^(L-1-k) R - V_k + (1 - lambda)/lambda * lambda^-k * sum_{j>k} lambda^j V_j``,
    one reverse cumulative sum. lambda^(L-1) >= exp(-1/alpha) roughly, so this is well conditioned
    for every usual alpha; rows where lambda = 0 (A = delta) or where lambda^(L-1) would underflow
    the dtype (alpha below about 1/80 in float32) take exact fallbacks. Processed in row chunks so
    the temporaries stay cache-sized.
    """
    if out is None:
        out = torch.empty_like(values)
    for _ in lagae_chunks(values, mf, L, lam, rewards, clean, out):
        pass
    return out


def lagae_chunks(
    values: torch.Tensor,
    mf: torch.Tensor,
    L: torch.Tensor,
    lam: torch.Tensor,
    rewards: torch.Tensor,
    clean: bool,
    out: torch.Tensor,
) -> Iterator[tuple[slice, torch.Tensor]]:
    """Fill ``out`` with LA-GAE advantages CHUNK_ROWS rows at a time, yielding (rows, their advantages).

    A caller uses each chunk while it is still in cache (SAO and BPCO build their coefficients there).
    """
    B, T = values.shape
    dt = values.dtype
    prefix = is_prefix_mask(mf, L)
    # per-row constants, computed once for the batch (per chunk they would cost ~0.5 ms of op overhead)
    log_lam = torch.log(lam)  # -inf where lam == 0
    floor = -80.0 if dt == torch.float32 else -700.0
    special = (lam == 0) | ((L - 1) * log_lam < floor)
    zero = torch.zeros((), dtype=dt, device=values.device)
    safe_log = torch.where(special, zero, log_lam)
    safe_lam = torch.where(special, torch.full_like(lam, 0.5), lam)
    log2_lam = torch.where(special, zero, torch.log2(safe_lam))
    last_w = torch.exp(safe_log * (L - 1))  # lambda^(L-1), the smallest weight on the row
    tail = (1.0 - safe_lam) / safe_lam
    rows = _GaeRows(
        log2_lam=log2_lam[:, None],
        last_rank=((L - 1) * log2_lam)[:, None],  # log2 of lambda^(L-1)
        tail=tail[:, None],
        head=(last_w * rewards)[:, None],  # lambda^(L-1) R
        # the forward-sum form errs by about 2 eps * tail * L / lambda^(L-1) * max|V|: allowed up to 8 eps
        # (SAO's alpha = 1.5 gives about 2.6 eps; BPCO's 0.4 about 60, so BPCO keeps the reverse sum)
        forward=special | (tail * L <= 4.0 * last_w),
        special=special,
    )
    positions = torch.arange(T, dtype=dt, device=values.device) if prefix else None
    any_special = bool(special.any())
    for i0 in range(0, B, CHUNK_ROWS):
        r = slice(i0, min(i0 + CHUNK_ROWS, B))
        yield r, _lagae_rows(values[r], mf[r], lam[r], rewards[r], clean, out[r], rows.slice(r), positions, any_special)


class _GaeRows(NamedTuple):
    """Per-row constants of the closed-form LA-GAE, as [n, 1] columns (``special`` as [n] flags)."""

    log2_lam: torch.Tensor
    last_rank: torch.Tensor
    tail: torch.Tensor
    head: torch.Tensor
    forward: torch.Tensor
    special: torch.Tensor

    def slice(self, r: slice) -> "_GaeRows":
        return _GaeRows(*(x[r] for x in self))


def is_prefix_mask(mf: torch.Tensor, L: torch.Tensor) -> bool:
    """True when every row's action tokens are exactly positions 0..L-1 (no observation tokens).

    L distinct positions sum to at least L(L-1)/2, with equality only for the prefix.
    """
    T = mf.shape[1]
    if bool((L == T).all()):  # every token is an action token
        return True
    # integer sums below 2**24 are exact in float32
    dt = mf.dtype if (mf.dtype == torch.float64 or T * T < 2**25) else torch.float64
    positions = torch.arange(T, dtype=dt, device=mf.device)
    got = torch.mv(mf.to(dt), positions)
    Ld = L.to(dt)
    return bool(torch.equal(got, Ld * (Ld - 1) / 2))


def _lagae_rows(
    values: torch.Tensor,
    mf: torch.Tensor,
    lam: torch.Tensor,
    rewards: torch.Tensor,
    clean: bool,
    out: torch.Tensor,
    rows: _GaeRows,
    positions: torch.Tensor | None,
    any_special: bool,
) -> torch.Tensor:
    dt = values.dtype
    v = values if clean else torch.where(mf.bool(), values, torch.zeros((), dtype=dt, device=values.device))
    if positions is not None:  # prefix mask: action tokens are positions 0..L-1, so the rank is the position
        w = torch.mul(positions, rows.log2_lam)
        # past the last action token (padding) use lambda^(L-1): lambda^k could underflow to 0 there, and
        # the division below needs w > 0; on action tokens this changes nothing (rounding is monotone)
        w.clamp_(min=rows.last_rank)
    else:  # action rank k (0 before the first action token, at most L-1)
        w = torch.cumsum(mf, 1).sub_(1).clamp_(min=0).mul_(rows.log2_lam)
    # lambda^k as exp2(k log2 lambda): torch's exp2 is ~3x faster than exp on CPU. Prefix and observation-token
    # batches agree to rounding, not bit for bit: the suffix sums below run over rows of different lengths
    # (observation tokens add zeros in other places), so their last bits can differ. w >= lambda^(L-1) > 0.
    w.exp2_()
    W = torch.mul(w, v).mul_(mf)  # lambda^k V_k on action tokens, 0 elsewhere
    # out = lambda^(L-1) R + tail * (sum of W strictly after t)  (mul + add_ beat one addcmul 3x here)
    if bool(rows.forward.all()):
        # well-conditioned rows: the sum after t is total - (inclusive prefix sum), which spares the two
        # [n, T] flips of the reverse cumsum (~1 ms at B = 2048, T = 1024)
        torch.cumsum(W, 1, out=out)
        const = rows.head + rows.tail * out[:, -1:]  # out[:, -1] is the row total: W is 0 past the last action
        out.mul_(-rows.tail).add_(const)
    else:
        S = torch.cumsum(W.flip(1), 1).flip(1)  # inclusive reverse sum
        torch.mul(S[:, 1:], rows.tail, out=out[:, :-1])
        out[:, -1] = 0
        out.add_(rows.head)
    out.div_(w).sub_(v).mul_(mf)
    if any_special and bool(rows.special.any()):
        sel = torch.nonzero(rows.special).flatten()
        m = mf[sel].bool()
        if bool((lam[sel] == 0).all()):
            out[sel] = _lagae_delta(values[sel], m, rewards[sel])
        else:
            f64 = torch.float64
            ref = lagae_reference(values[sel].to(f64), m, rewards[sel].to(f64), lam[sel].to(f64))
            out[sel] = ref.to(dt)
    return out


# ------------------------------------------------------------------------------------------------
# SAO
# ------------------------------------------------------------------------------------------------

_CRITIC_HINT = "Run the critic over the batch first, or use FlashReinforce, which needs no critic."
_ALL_ON_POLICY = "no trajectory has behavior_logprobs: taken as on-policy, every ratio is 1."


@rule
def sao_update(
    method: Any,
    batch: Any,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    validate: bool = True,
    distributed: bool | None = None,
    process_group: Any = None,
    stats: bool = True,
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
        batch, dtype, device, validate=validate, behavior=True, needs="values", method="SAO", hint=_CRITIC_HINT
    )
    B, T = b.logprobs.shape
    dt = b.dtype
    values = b.values
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    lam = gae_lambdas(L, method.gae_alpha)
    red = reducer(distributed, process_group)
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
    clamp_at = D.SAO_LOG_RATIO_CLAMP
    for r, A_c in lagae_chunks(values, mf, L, lam, R, clean, A):
        mf_c = mf[r]
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
        ratio = x.clamp_(-clamp_at, clamp_at).exp_().mul_(mf_c)  # 0 off action tokens: outside the band
        keep_f = torch.clamp(ratio, band_lo, band_hi)
        torch.eq(keep_f, ratio, out=keep_f)  # 1.0 inside the band, 0.0 outside
        kept[r] = keep_f.sum(1)
        ratio.mul_(keep_f)
        ratio_kept_rows[r] = ratio.sum(1)
        if inv_n is None:  # on a GPU: no host sync for 1/N
            torch.mul(ratio, A_c, out=coef[r]).div_(n_global)
        else:
            torch.addcmul(zero, ratio, A_c, value=inv_n, out=coef[r])  # kept rho * A / N in one pass
    admitted = kept > 0
    row_stats = {"kept_share": kept / L.clamp_min(1), "lambda": lam}
    if not stats:
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
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    validate: bool = True,
    distributed: bool | None = None,
    process_group: Any = None,
    stats: bool = True,
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
        batch, dtype, device, validate=validate, behavior=True, needs="values", method="BPCO", hint=_CRITIC_HINT
    )
    B, T = b.logprobs.shape
    dt = b.dtype
    values = b.values
    blp = b.behavior_logprobs
    R = b.rewards.to(dt)
    lo_r, hi_r = method.reward_range
    if validate:
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
    red = reducer(distributed, process_group)
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
    inv_mu_rows = torch.empty(B, dtype=dt, device=b.device)
    v_rows = torch.empty(B, dtype=dt, device=b.device)
    v2_rows = torch.empty(B, dtype=dt, device=b.device)
    zero = torch.zeros((), dtype=dt, device=b.device)
    tiny = torch.finfo(dt).tiny
    for r, A_c in lagae_chunks(values, mf, L, lam, R, clean, A):
        mf_c = mf[r]
        v_c = values[r]
        mu_c = mu_lp[r]
        x = torch.sub(b.logprobs[r], mu_c)
        if not clean:
            m_c = mf_c.bool()
            x = torch.where(m_c, x, zero)
            mu_c = torch.where(m_c, mu_c, zero)
            v_c = torch.where(m_c, v_c, zero)
        ratio = x.clamp_(-D.BPCO_LOG_RATIO_CAP, D.BPCO_LOG_RATIO_CAP).exp_()
        # DPPO binary-TV test: sign(A) * mu * (rho - 1) <= clip  (A = 0 is always active)
        mu = torch.exp(mu_c)
        g = torch.sub(ratio, 1.0).mul_(mu).mul_(torch.sign(A_c))
        act = torch.rsub(g, clip).sign_().add_(1.0).clamp_(max=1.0).mul_(mf_c)  # 1 iff g <= clip
        if cap < math.inf:  # truncate after the test, as verl's dppo_tv: the test reads the true ratio
            if stats and float(ratio.max()) > cap:
                capped_rows[r] = (ratio > cap).to(dt).mul_(act).sum(1)
            ratio.clamp_(max=cap)
        active_rows[r] = act.sum(1)
        inv_mu_rows[r] = mu.clamp_(min=tiny).reciprocal_().mul_(mf_c).sum(1)  # sum of 1/mu
        vm = torch.mul(v_c, mf_c)
        v_rows[r] = vm.sum(1)
        v2_rows[r] = vm.mul_(v_c).sum(1)
        ratio_rows[r] = ratio.mul_(mf_c).sum(1)
        torch.mul(ratio, A_c, out=coef[r]).mul_(act).div_(n_global)
    admitted = L > 0
    L1 = L.clamp_min(1)
    row_stats = {"clipped_share": 1.0 - active_rows / L1, "lambda": lam, "mean_ratio": ratio_rows / L1}
    if not stats:
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
        "mean_advantage": float(A.sum()) / n_local,
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
