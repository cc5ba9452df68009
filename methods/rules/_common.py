"""Shared pieces of the update rules: batch preparation, validation, distributed sums, notes."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import Any, Callable, NamedTuple, Sequence

import torch

from pick_a_method.methods.batch import Batch, as_batch
from pick_a_method.methods.update import Update

FLOATS = (torch.float32, torch.float64)

# The normalizer of every token-weighted rule (all but FlashReinforce), as Update.normalizer says it.
TOKEN_MEAN = "1/N: each action token of the global batch weighs 1/N"

# A trajectory whose logprobs differ from its behavior_logprobs by more than this on some action token
# was sampled by another policy (the on-policy rules say so in a note). Well above float32 round-off.
OFF_POLICY_TOLERANCE = 1e-3


HALF = (torch.float16, torch.bfloat16)


def compute_dtype(dtype: torch.dtype | None) -> torch.dtype | None:
    """The dtype a rule computes in: a requested half dtype is computed in float32 (exp and log need the range)."""
    return torch.float32 if dtype in HALF else dtype


def prepare(batch: Any, dtype: torch.dtype | None = None, device: Any = None) -> Batch:
    """The batch a rule reads: detached from autograd, in float32 or float64 (half precision is promoted).

    Detaching is the rule's contract, not the caller's: a trainer hands over the log-probs it will call
    ``loss()`` on, still carrying their graph, and coefficients built from them must be constants.
    """
    b = as_batch(batch, dtype=compute_dtype(dtype), device=device).detached()
    if b.dtype not in FLOATS:
        b = b.to(dtype=torch.float32)
    return b


def source_dtype(batch: Any, dtype: torch.dtype | None) -> torch.dtype | None:
    """The dtype the caller's log-probs come in (the one their gradient will have)."""
    if dtype is not None:
        return dtype
    return batch.logprobs.dtype if isinstance(batch, Batch) else None


class Reducer(NamedTuple):
    """Where batch statistics are summed: over ``group``'s ranks when ``enabled``, else this process only."""

    enabled: bool
    group: Any = None
    note: str | None = None  # said when a process group exists but none was asked for


def reducer(distributed: bool | None, process_group: Any = None) -> Reducer:
    """Decide where the rule's global sums (batch size, reward sum, action tokens) are taken.

    * ``process_group=<group>``: over that group's ranks (the data-parallel group; this rank must be in it);
    * ``distributed=True``: over the default (world) group;
    * neither (the default): this process's batch only, even when torch.distributed is initialized, because
      the world group may hold ranks that are not running this update (tensor or pipeline parallel, or
      ranks that skip it), and an all-reduce they never join hangs. A note says so when a group exists.
    """
    ready = torch.distributed.is_available() and torch.distributed.is_initialized()
    if process_group is not None:
        if distributed is False:
            raise ValueError("distributed=False contradicts process_group=...: give one of them")
        if not ready:
            raise ValueError("process_group given but torch.distributed is not initialized (call init_process_group)")
        if torch.distributed.get_rank(process_group) < 0:
            raise ValueError(
                f"this rank ({torch.distributed.get_rank()}) is not a member of process_group: only the ranks of "
                "the group may call the update with it"
            )
        return Reducer(True, process_group)
    if distributed is True:
        if not ready:
            raise ValueError(
                "distributed=True but torch.distributed is not initialized (call init_process_group first)"
            )
        return Reducer(True, None)
    note = None
    if distributed is None and ready and torch.distributed.get_world_size() > 1:
        note = (
            "torch.distributed is initialized but no process_group was given: batch statistics (baseline, B, N) "
            "are this rank's batch only. Pass process_group=<your data-parallel group> (or distributed=True for "
            "the world group) to take them over the global batch."
        )
    return Reducer(False, None, note)


def global_sums(values: Sequence[Any], red: Reducer, device: torch.device) -> torch.Tensor:
    """Each value summed over the reducer's ranks, as one float64 tensor on ``device`` (one all-reduce, no host sync)."""
    t = torch.stack([torch.as_tensor(v, dtype=torch.float64, device=device).reshape(()) for v in values])
    if red.enabled:
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM, group=red.group)
    return t


def first_true(flags: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(x) for x in torch.nonzero(flags)[0].tolist())


# Rewards past this size overflow a batch mean or variance (float32 squares overflow near 1.8e19), so the
# baselines would turn to inf/NaN; no grader's reward is that large.
REWARD_LIMIT = 1e15


def check_rewards(b: Batch) -> None:
    r = b.rewards
    if not bool(torch.isfinite(r).all()):
        i = first_true(~torch.isfinite(r))[0]
        raise ValueError(f"trajectory {i}: reward is {float(r[i])!r}; rewards must be finite numbers")
    if bool((r.abs() > REWARD_LIMIT).any()):
        i = first_true(r.abs() > REWARD_LIMIT)[0]
        raise ValueError(f"trajectory {i}: reward is {float(r[i])!r}; rewards beyond +-{REWARD_LIMIT:g} overflow "
                         f"the baseline: rescale them")


def check_token_field(b: Batch, name: str, x: torch.Tensor, *, nonpositive: bool) -> bool:
    """Check a [B, T] field on the action tokens; return True when it is finite everywhere.

    Log-probs must be finite and <= 0 on action tokens; values must be finite there. Masked positions
    are not checked (they may hold padding garbage, NaN included). The common case costs one pass:
    an aminmax for log-probs (both finite means every entry is), a sum for values (a finite sum means
    every entry is finite).
    """
    if nonpositive:
        # one pass instead of a sum and a max: min and max are finite iff every entry is (NaN propagates);
        # x is never empty (Batch refuses B = 0 or T = 0)
        lo, hi = (float(v) for v in torch.aminmax(x))
        clean = math.isfinite(lo) and math.isfinite(hi)
        if clean and hi <= 0.0:
            return True
    else:
        clean = bool(torch.isfinite(x.sum()))
        if clean:
            return True
    if clean:
        bad = b.mask & (x > 0)
    else:
        ok = torch.isfinite(x)
        if nonpositive:
            ok &= x <= 0
        bad = b.mask & ~ok
    if bool(bad.any()):
        i, t = first_true(bad)
        need = "finite and <= 0 (a log-probability)" if nonpositive else "finite"
        raise ValueError(f"trajectory {i}: {name}[{t}] is {float(x[i, t])!r} on an action token; it must be {need}")
    return clean


def field_clean(b: Batch, name: str, x: torch.Tensor, *, validate: bool, nonpositive: bool) -> bool:
    """``check_token_field`` when validating; otherwise whether x is finite everywhere, which picks the faster
    masking. On a GPU without validation it answers False (the NaN-safe path) rather than pay a host sync."""
    if validate:
        return check_token_field(b, name, x, nonpositive=nonpositive)
    if x.is_cuda:
        return False
    return bool(torch.isfinite(x.sum()))


def action_counts(b: Batch, mf: torch.Tensor, validate: bool = True) -> torch.Tensor:
    """Action tokens per trajectory [B] (float); a trajectory without one is refused by name (when validating;
    otherwise the rules divide by max(L, 1), so such a row gets zero coefficients, never NaN)."""
    L = mf.sum(1)
    if validate and bool((L == 0).any()):
        i = first_true(L == 0)[0]
        raise ValueError(
            f"trajectory {i} has no action token (its action_mask is all false): nothing in it was generated by "
            "the policy, so it cannot be trained on; drop it from the batch"
        )
    return L


class Checked(NamedTuple):
    """A batch ready for a rule: ``mf`` its float mask, ``L`` its action tokens per trajectory [B], and
    ``clean`` True when every checked token field is finite everywhere (padding included)."""

    b: Batch
    mf: torch.Tensor
    L: torch.Tensor
    clean: bool


def checked_batch(
    batch: Any,
    dtype: torch.dtype | None,
    device: Any,
    *,
    validate: bool,
    rewards: bool = True,
    behavior: bool = False,
    needs: str | None = None,
    method: str = "",
    hint: str = "",
) -> Checked:
    """The start every rule shares: the batch in float32/64, its fields checked, its action tokens counted.

    The checks run in this order, so the first problem is the one reported: the field the method
    ``needs`` is present (``hint`` says how to get it); rewards are finite (``rewards``); logprobs,
    then the needed field, then behavior_logprobs (``behavior``) are finite on action tokens, and
    <= 0 where they are log-probs; every trajectory has an action token.
    """
    b = prepare(batch, dtype, device)
    if needs is not None:
        require(b, needs, method, hint)
    if validate and rewards:
        check_rewards(b)
    clean = field_clean(b, "logprobs", b.logprobs, validate=validate, nonpositive=True)
    if needs is not None:
        clean &= field_clean(b, needs, getattr(b, needs), validate=validate, nonpositive=needs.endswith("logprobs"))
    if behavior and b.behavior_logprobs is not None:
        clean &= field_clean(b, "behavior_logprobs", b.behavior_logprobs, validate=validate, nonpositive=True)
    mf = b.float_mask(b.dtype)
    return Checked(b, mf, action_counts(b, mf, validate), clean)


def global_action_tokens(L: torch.Tensor, red: Reducer, device: torch.device) -> torch.Tensor:
    """N: the action tokens of the global batch (summed over the reducer's ranks), a float64 0-d tensor."""
    return global_sums([L.sum()], red, device)[0]


def advantage_update(
    method: str,
    b: Batch,
    mf: torch.Tensor,
    A: torch.Tensor,
    n_global: torch.Tensor,
    stats: dict[str, float],
    notes: list[str],
) -> Update:
    """The Update of a rule with one advantage per trajectory: A_i / N on each of its action tokens, all admitted."""
    B, T = b.logprobs.shape
    return Update(
        method=method,
        coefficients=torch.mul(mf, (A / n_global.clamp_min(1))[:, None]),
        advantages=expand_rows(A, T),
        admitted=torch.ones(B, dtype=torch.bool, device=b.device),
        mask=b.mask,
        stats=stats,
        notes=notes,
        row_stats={"advantage": A},
        normalizer=TOKEN_MEAN,
    )


def require(b: Batch, name: str, method: str, hint: str) -> torch.Tensor:
    x = getattr(b, name)
    if x is None:
        raise ValueError(f"{method} needs {name} on every trajectory; none has it. {hint}")
    missing = b.missing.get(name)
    if missing:
        raise ValueError(f"trajectory {missing[0]} has no {name}; {method} needs {name} on every trajectory. {hint}")
    return x


def fmt_indices(indices: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(i) for i in indices[:limit])
    extra = len(indices) - limit
    return shown + (f" ... and {extra} more" if extra > 0 else "")


def sig(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}"


def staleness_gate(b: Batch, limit: int, want_indices: bool = True) -> tuple[torch.Tensor | None, list[int]]:
    """[B] bool of trajectories within ``limit`` policy versions (None when the batch has no lag), and the
    indices of the stale ones (only when ``want_indices``: listing them is a host sync)."""
    if b.staleness is None:
        return None, []
    fresh = b.staleness <= limit
    stale = [int(i) for i in torch.nonzero(~fresh).flatten().tolist()] if want_indices else []
    return fresh, stale


def on_policy_notes(b: Batch) -> list[str]:
    """The note on trajectories read as on-policy because they carried no behavior_logprobs (none when all did)."""
    n = b.size if b.behavior_logprobs is None else len(b.missing.get("behavior_logprobs", []))
    return [f"{n} trajectories have no behavior_logprobs and were taken as on-policy (ratio 1)."] if n else []


def expand_rows(x: torch.Tensor, T: int) -> torch.Tensor:
    return x[:, None].expand(x.shape[0], T)


def row_values_on_valid(b: Batch, per_row: torch.Tensor) -> torch.Tensor:
    """[B, T]: the row's number on every position inside the trajectory, 0 on padding."""
    B, T = b.logprobs.shape
    if b.lengths is None or bool((b.lengths == T).all()):
        return expand_rows(per_row, T)  # a broadcast view: no [B, T] memory
    valid = torch.arange(T, device=b.device)[None, :] < b.lengths[:, None]
    return per_row[:, None] * valid.to(per_row.dtype)


# ------------------------------------------------------------------------------------------------
# The wrapper every update rule runs under
# ------------------------------------------------------------------------------------------------

# fp16's smallest subnormal and smallest normal: a gradient entry below the first is 0, below the second it
# keeps fewer than 10 significant bits.
FP16_ZERO = 2.0**-24
FP16_NORMAL = 2.0**-14


def fp16_note(coefficients: torch.Tensor) -> str | None:
    """What an fp16 gradient does to these coefficients (None when nothing is lost)."""
    a = coefficients.abs()
    nonzero = a > 0
    n = int(nonzero.sum())
    lost = int((nonzero & (a < FP16_ZERO)).sum())
    coarse = int((nonzero & (a < FP16_NORMAL)).sum())
    if not coarse:
        return None
    smallest = float(torch.where(nonzero, a, torch.full_like(a, math.inf)).min())
    scale = 2.0 ** math.ceil(math.log2(FP16_NORMAL / smallest)) if smallest > 0 else 1.0
    return (
        f"fp16 log-probs: their gradient is fp16, so {lost} of {n} nonzero coefficients (|c| < {FP16_ZERO:.1e}) "
        f"become 0 in it and {coarse} lose precision (|c| < {FP16_NORMAL:.1e}). The loss value is float32 and "
        f"exact; for the gradient take float32 log-probs, or scale the loss (torch.amp.GradScaler, or multiply "
        f"by about {scale:g} and divide the gradients back)."
    )


@dataclass(frozen=True)
class RuleCall:
    """What a caller asks of an update rule beside the batch: the keyword arguments ``Method.update`` takes, one typed
    object (as prime-rl hands its losses one LossInputs dataclass, src/prime_rl/trainer/rl/loss.py at 559b44772)."""

    dtype: torch.dtype | None = None  # the batch's, when converting lists
    device: Any = None
    validate: bool = True  # check the inputs (False: the caller vouches for them)
    distributed: bool | None = None  # True: batch statistics over the world group
    process_group: Any = None  # batch statistics over this group's ranks
    stats: bool = True  # compute stats and notes (False is the hot path)
    commit: bool = True  # move state kept on the method (rae's baselines); False for a preview
    within_async: bool = False  # the inner rule of Async, whose correction handles off-policy tokens

    def inner(self) -> dict[str, Any]:
        """The keyword arguments for a wrapped method's rule, on a batch already converted."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}  # shallow: a process group is not copied
        return {**given, "dtype": None, "device": None, "within_async": True}


def rule(fn: Callable[..., Update]) -> Callable[..., Update]:
    """Run an update rule without autograd and finish its Update the same way for every method.

    * the rule's arithmetic runs under ``torch.no_grad()`` on a detached batch (``prepare``), so the
      coefficients are constants whatever the caller's tensors carry;
    * ``stats=False`` (the hot path) drops the stats and the notes, which cost host syncs; the
      coefficients, advantages, masks and row_stats are the same;
    * fp16 log-probs get a note on what their (fp16) gradient loses.
    """

    @functools.wraps(fn)
    def wrapper(method: Any, batch: Any, **kwargs: Any) -> Update:
        call = RuleCall(**kwargs)  # an unknown keyword is a TypeError naming it, as a signature's would be
        with torch.no_grad():
            upd = fn(method, batch, call)
            if call.stats:
                if source_dtype(batch, call.dtype) == torch.float16:
                    note = fp16_note(upd.coefficients)
                    if note:
                        upd.notes.append(note)
            else:
                upd.stats = {}
                upd.notes = []
        return upd

    return wrapper
