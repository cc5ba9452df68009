"""Length-adaptive GAE over action tokens only (SAO, BPCO): the closed form and the textbook loop it equals.

gamma = 1, a terminal reward on the last action token, observation tokens skipped (their values never enter
the recursion). ``lagae_reference`` is the backward loop over T (the tests' reference); ``lagae`` /
``LaGae`` compute the same advantages in closed form, a few row-chunked passes, no loop over tokens.
"""

from __future__ import annotations

import math
import functools
from typing import Callable, NamedTuple

import torch

from pick_a_method.methods.rules.policy import CPU, Policy, Scratch

# log of the smallest lambda^k the closed form divides by (about 1e-35 in float32, 1e-304 in float64): rows
# whose lambda^(L-1) is below it take an exact fallback
_FLOOR = {torch.float32: -80.0, torch.float64: -700.0}


@functools.lru_cache(maxsize=64)
def device_exact(alpha: float, dt: torch.dtype) -> bool:
    """Whether the device path (no host read) is exact for this gae_alpha: no row with lambda > 0 can underflow
    lambda^(L-1), and the rows with lambda = 0 (L <= 1/alpha) are short enough to run with lambda = eps^2 in its
    place (which changes A by eps^2 relative: below rounding). True for every alpha above about 1/4 (SAO 1.5,
    BPCO 0.4); below, the rule reads which rows are special, as on a CPU."""
    floor = _FLOOR.get(dt, -80.0)
    tiny = math.log(torch.finfo(dt).eps ** 2)
    l_zero = math.floor(1.0 / alpha + 1e-12)  # the longest row with lambda = 0
    if (l_zero - 1) * tiny < floor:
        return False
    worst = -1.0 / alpha  # the limit of (L - 1) log(lambda) as L grows
    for L in range(max(1, l_zero), l_zero + 4096):
        lam = 1.0 - 1.0 / (alpha * L)
        if lam > 0:
            worst = min(worst, (L - 1) * math.log(lam))
    return worst >= floor


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
    B, T = values.shape
    for r in CPU.chunks(B, T, temps=4, compute=values.dtype, given=values.dtype):
        gae.rows(r, clean)
    return gae.out


class LaGae:
    """The closed-form LA-GAE of a batch, filled into ``out`` chunk by chunk: ``rows(r, clean)`` computes rows r
    and returns them (with -V on their action tokens) for the caller to use while they are still in cache (SAO
    and BPCO build their coefficients there). ``clean``: the values are finite everywhere (else they are masked
    NaN-safely). ``mask_rows(r)``: the float mask of rows r (default: ``mf[r]``).

    Under the device policy (``policy.host_reads`` False) nothing is read back: lambda^k from the action rank
    (a cumsum of the mask, not the prefix-mask table, which needs to know the mask is a prefix), the reverse
    sum always (not the forward one where it is accurate enough, which needs a per-chunk read), and the rows
    with lambda = 0 through lambda = eps^2 (``device_exact(alpha)``; for an alpha where that is not exact, the
    special rows are read and fixed as on a CPU)."""

    def __init__(
        self,
        values: torch.Tensor,
        mf: torch.Tensor | None,
        L: torch.Tensor,
        lam: torch.Tensor,
        rewards: torch.Tensor,
        out: torch.Tensor | None = None,
        *,
        dtype: torch.dtype | None = None,
        policy: Policy = CPU,
        alpha: float | None = None,
        mask_rows: Callable[[slice], torch.Tensor] | None = None,
    ) -> None:
        B, T = values.shape
        dt = dtype or values.dtype
        dev = values.device
        f64 = torch.float64
        self.values, self.mf, self.lam, self.rewards, self.dt = values, mf, lam, rewards, dt
        self.mask_rows = mask_rows or (lambda r: mf[r])  # type: ignore[index]
        self.out = torch.empty(B, T, dtype=dt, device=dev) if out is None else out
        # per-row constants, computed once for the batch (per chunk they would cost ~0.5 ms of op overhead)
        lam64, L64 = lam.to(f64), L.to(f64)
        floor = _FLOOR.get(dt, -80.0)
        self.reads = policy.host_reads or alpha is None or not device_exact(float(alpha), dt)
        if self.reads:
            special = (lam64 == 0) | ((L64 - 1) * torch.log(lam64) < floor)
            safe_lam = torch.where(special, 0.5, lam64)
        else:  # lambda = 0 rows run with eps^2 (exact to rounding); no row underflows (device_exact)
            special = torch.zeros_like(lam64, dtype=torch.bool)
            safe_lam = torch.where(lam64 == 0, torch.finfo(dt).eps ** 2, lam64)
        log2_lam = torch.where(special, 0.0, torch.log2(safe_lam))
        last = (L64 - 1).clamp_min(0)  # rank of the last action token
        if policy.host_reads and is_prefix_mask(mf, L):
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
        self.any_special = self.reads and bool(special.any())
        self.forward_ok = self.reads  # the forward sum is taken only where a read says it is accurate

    def rows(self, r: slice, clean: bool, scratch: Scratch | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows r: their advantages (a view of ``out``) and -V on their action tokens (0 elsewhere). ``scratch``:
        where the chunk's temporaries go (3 of [n, T + 2 sqrt(T) + 2] at most)."""
        scratch = scratch or Scratch(None, self.dt, self.out.device)
        return _lagae_rows(self.values[r], self.mask_rows(r), self.lam[r], self.rewards[r], clean, self.out[r],
                           self.consts.slice(r), self.weights.slice(r), self.any_special, self.forward_ok, scratch)


class _Weights(NamedTuple):
    """How a chunk gets lambda^k: [n, K] x [n, M] tables on a prefix mask, else log2(lambda) as an [n, 1] column."""

    hi: torch.Tensor | None
    lo: torch.Tensor | None
    log2_lam: torch.Tensor | None

    def slice(self, r: slice) -> "_Weights":
        return _Weights(*(None if x is None else x[r] for x in self))

    def compute(self, mf: torch.Tensor, last_w: torch.Tensor, scratch: Scratch) -> torch.Tensor:
        n, T = mf.shape
        if self.hi is None:  # action rank k (0 before the first action token, at most L-1)
            return torch.cumsum(mf, 1, out=scratch.take(n, T)).sub_(1).clamp_(min=0).mul_(self.log2_lam).exp2_()
        K, M = self.hi.shape[1], self.lo.shape[1]
        w = scratch.take(n, K * M)
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
    forward_ok: bool,
    scratch: Scratch,
) -> tuple[torch.Tensor, torch.Tensor]:
    dt = out.dtype
    zero = torch.zeros((), dtype=dt, device=values.device)
    # nv = -V on action tokens, 0 elsewhere: negated so that the last step is one addcdiv (nv + numerator / w)
    if clean:
        nv = torch.addcmul(zero, values, mf, value=-1.0, out=scratch.take(*values.shape))
    else:  # a half chunk is widened into nv first (where would keep its dtype)
        nv = scratch.take(*values.shape).copy_(values)
        nv = torch.where(mf.bool(), nv, zero, out=nv).neg_()
    w = weights.compute(mf, rows.last_w, scratch)  # lambda^k (k the action rank), >= lambda^(L-1) > 0
    W = torch.mul(w, nv, out=scratch.take(*nv.shape))  # -lambda^k V_k on action tokens, 0 elsewhere
    # out = lambda^(L-1) R + tail * (sum of lambda^j V_j strictly after t)  (mul + add_ beat one addcmul 3x here)
    if forward_ok and bool(rows.forward.all()):
        # well-conditioned rows: the sum after t is total - (inclusive prefix sum), which spares the two
        # [n, T] flips of the reverse cumsum (~1 ms at B = 2048, T = 1024)
        torch.cumsum(W, 1, out=out)
        const = rows.head - rows.tail * out[:, -1:]  # out[:, -1] is minus the row total (W is 0 past the end)
        out.mul_(rows.tail).add_(const)
    else:
        Wf = W.flip(1)
        del W
        S = Wf.cumsum_(1).flip(1)  # minus the inclusive reverse sum
        del Wf
        torch.mul(S[:, 1:], -rows.tail, out=out[:, :-1])
        out[:, -1] = 0
        out.add_(rows.head)
    torch.addcdiv(nv, out, w, out=out).mul_(mf)  # A = out / lambda^k - V on action tokens, 0 elsewhere
    if any_special and bool(rows.special.any()):
        sel = torch.nonzero(rows.special).flatten()
        m = mf[sel].bool()
        if bool((lam[sel] == 0).all()):
            out[sel] = _lagae_delta(values[sel].to(dt), m, rewards[sel])
        else:
            f64 = torch.float64
            ref = lagae_reference(values[sel].to(f64), m, rewards[sel].to(f64), lam[sel].to(f64))
            out[sel] = ref.to(dt)
    return out, nv
