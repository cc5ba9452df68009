"""Length-adaptive GAE over action tokens only (SAO, BPCO): the closed form and the textbook loop it equals.

gamma = 1, a terminal reward on the last action token, observation tokens skipped (their values never enter
the recursion). ``lagae_reference`` is the backward loop over T (the tests' reference); ``lagae`` /
``LaGae`` compute the same advantages in closed form, a few row-chunked passes, no loop over tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import torch

CHUNK_ROWS = 256  # rows per chunk: keeps each temporary near 1 MiB at T = 1024 (cache resident)


def row_chunks(B: int) -> Iterator[slice]:
    for i0 in range(0, B, CHUNK_ROWS):
        yield slice(i0, min(i0 + CHUNK_ROWS, B))


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
    gae = LaGae(values, mf, L, lam, rewards, out=out)
    for r in row_chunks(values.shape[0]):
        gae.rows(r, clean)
    return gae.out


class LaGae:
    """The closed-form LA-GAE of a batch, filled into ``out`` chunk by chunk: ``rows(r, clean)`` computes rows r
    and returns them (with -V on their action tokens) for the caller to use while they are still in cache (SAO
    and BPCO build their coefficients there). ``clean``: the values are finite everywhere (else they are masked
    NaN-safely)."""

    def __init__(
        self,
        values: torch.Tensor,
        mf: torch.Tensor,
        L: torch.Tensor,
        lam: torch.Tensor,
        rewards: torch.Tensor,
        out: torch.Tensor | None = None,
    ) -> None:
        B, T = values.shape
        dt = values.dtype
        dev = values.device
        f64 = torch.float64
        self.values, self.mf, self.lam, self.rewards = values, mf, lam, rewards
        self.out = torch.empty_like(values) if out is None else out
        # per-row constants, computed once for the batch (per chunk they would cost ~0.5 ms of op overhead)
        lam64, L64 = lam.to(f64), L.to(f64)
        floor = -80.0 if dt == torch.float32 else -700.0
        special = (lam64 == 0) | ((L64 - 1) * torch.log(lam64) < floor)
        safe_lam = torch.where(special, 0.5, lam64)
        log2_lam = torch.where(special, 0.0, torch.log2(safe_lam))
        last = (L64 - 1).clamp_min(0)  # rank of the last action token
        if is_prefix_mask(mf, L):
            # lambda^k = lambda^(M*(k // M)) * lambda^(k % M): a [K, M] outer product per row, one multiply per
            # token instead of an exp2 (3x the cost)
            M = math.isqrt(T - 1) + 1
            K = -(-T // M)
            lo = torch.exp2((torch.arange(M, dtype=f64, device=dev) * log2_lam[:, None]).to(dt))
            hi = torch.exp2((torch.arange(K, dtype=f64, device=dev) * (M * log2_lam)[:, None]).to(dt))
            k = last.long()[:, None]
            last_w = hi.gather(1, k.div(M, rounding_mode="floor")) * lo.gather(1, k.remainder(M))  # w at L - 1
            self.weights = _Weights(hi=hi, lo=lo, log2_lam=None)
        else:
            log2_dt = log2_lam.to(dt)[:, None]
            last_w = torch.exp2(last.to(dt)[:, None] * log2_dt)  # as the rank path computes it
            self.weights = _Weights(hi=None, lo=None, log2_lam=log2_dt)
        tail = (1.0 - safe_lam) / safe_lam
        # the forward-sum form (total - prefix sum, no flips) errs by about 2 eps * tail * L / lambda^(L-1) *
        # max|V|: allowed up to 8 eps (SAO's alpha = 1.5 gives about 2.6 eps; BPCO's 0.4 about 60, so BPCO keeps
        # the reverse sum; float64 prefix sums for a float32 batch would be as accurate, and measured no faster)
        self.consts = _GaeRows(
            last_w=last_w,
            tail=tail.to(dt)[:, None],
            head=last_w * rewards[:, None],  # lambda^(L-1) R
            forward=special | (tail * L64 <= 4.0 * last_w.to(f64)[:, 0]),
            special=special,
        )
        self.any_special = bool(special.any())

    def rows(self, r: slice, clean: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows r: their advantages (a view of ``out``) and -V on their action tokens (0 elsewhere)."""
        return _lagae_rows(self.values[r], self.mf[r], self.lam[r], self.rewards[r], clean, self.out[r],
                           self.consts.slice(r), self.weights.slice(r), self.any_special)


class _Weights(NamedTuple):
    """How a chunk gets lambda^k: [n, K] x [n, M] tables on a prefix mask, else log2(lambda) as an [n, 1] column."""

    hi: torch.Tensor | None
    lo: torch.Tensor | None
    log2_lam: torch.Tensor | None

    def slice(self, r: slice) -> "_Weights":
        return _Weights(*(None if x is None else x[r] for x in self))

    def compute(self, mf: torch.Tensor, last_w: torch.Tensor) -> torch.Tensor:
        n, T = mf.shape
        if self.hi is None:  # action rank k (0 before the first action token, at most L-1)
            return torch.cumsum(mf, 1).sub_(1).clamp_(min=0).mul_(self.log2_lam).exp2_()
        K, M = self.hi.shape[1], self.lo.shape[1]
        w = torch.empty(n, K * M, dtype=mf.dtype, device=mf.device)
        torch.mul(self.hi[:, :, None], self.lo[:, None, :], out=w.view(n, K, M))
        # past the last action token (padding) use lambda^(L-1): lambda^k may underflow to 0 there, and the
        # division needs w > 0; on action tokens this changes nothing (w >= lambda^(L-1) there)
        return w[:, :T].clamp_(min=last_w)


class _GaeRows(NamedTuple):
    """Per-row constants of the closed-form LA-GAE, as [n, 1] columns (the flags as [n])."""

    last_w: torch.Tensor
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
    weights: _Weights,
    any_special: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    dt = values.dtype
    zero = torch.zeros((), dtype=dt, device=values.device)
    # nv = -V on action tokens, 0 elsewhere: negated so that the last step is one addcdiv (nv + numerator / w)
    if clean:
        nv = torch.addcmul(zero, values, mf, value=-1.0)
    else:
        nv = torch.where(mf.bool(), values, zero).neg_()
    w = weights.compute(mf, rows.last_w)  # lambda^k (k the action rank), >= lambda^(L-1) > 0
    W = torch.mul(w, nv)  # -lambda^k V_k on action tokens, 0 elsewhere
    # out = lambda^(L-1) R + tail * (sum of lambda^j V_j strictly after t)  (mul + add_ beat one addcmul 3x here)
    if bool(rows.forward.all()):
        # well-conditioned rows: the sum after t is total - (inclusive prefix sum), which spares the two
        # [n, T] flips of the reverse cumsum (~1 ms at B = 2048, T = 1024)
        torch.cumsum(W, 1, out=out)
        const = rows.head - rows.tail * out[:, -1:]  # out[:, -1] is minus the row total (W is 0 past the end)
        out.mul_(rows.tail).add_(const)
    else:
        S = torch.cumsum(W.flip(1), 1).flip(1)  # minus the inclusive reverse sum
        torch.mul(S[:, 1:], -rows.tail, out=out[:, :-1])
        out[:, -1] = 0
        out.add_(rows.head)
    torch.addcdiv(nv, out, w, out=out).mul_(mf)  # A = out / lambda^k - V on action tokens, 0 elsewhere
    if any_special and bool(rows.special.any()):
        sel = torch.nonzero(rows.special).flatten()
        m = mf[sel].bool()
        if bool((lam[sel] == 0).all()):
            out[sel] = _lagae_delta(values[sel], m, rewards[sel])
        else:
            f64 = torch.float64
            ref = lagae_reference(values[sel].to(f64), m, rewards[sel].to(f64), lam[sel].to(f64))
            out[sel] = ref.to(dt)
    return out, nv
