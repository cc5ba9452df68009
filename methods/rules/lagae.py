"""Length-adaptive GAE over action tokens only (SAO, BPCO): the closed form and the textbook loop it equals.

gamma = 1, a terminal reward on the last action token, observation tokens skipped (their values never enter
the recursion). ``lagae_reference`` is the backward loop over T (the tests' reference); ``lagae`` /
``lagae_chunks`` compute the same advantages in closed form, a few row-chunked passes, no loop over tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import torch

CHUNK_ROWS = 256  # rows per chunk: keeps each temporary near 1 MiB at T = 1024 (cache resident)


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
