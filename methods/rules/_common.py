"""Shared pieces of the update rules: batch preparation, validation, distributed sums, notes."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, NamedTuple, Sequence

import torch

from pick_a_method.methods.batch import Batch, as_batch
from pick_a_method.methods.rules.checks import (  # noqa: F401 - re-exported for the rules
    checked_batch,
    compute_dtype,
    first_true,
)
from pick_a_method.methods.rules.policy import HostRead, first_true_k, fmt_first, policy_for  # noqa: F401
from pick_a_method.methods.update import Update

# The normalizer of every token-weighted rule (all but FlashReinforce), as Update.normalizer says it.
TOKEN_MEAN = "1/N: each action token of the global batch weighs 1/N"

# A trajectory whose logprobs differ from its behavior_logprobs by more than this on some action token
# was sampled by another policy (the on-policy rules say so in a note). Well above float32 round-off.
OFF_POLICY_TOLERANCE = 1e-3


def prepare(batch: Any, dtype: torch.dtype | None = None, device: Any = None) -> Batch:
    """The batch a rule reads, detached from autograd. A half batch stays half: each rule widens its [B, T] fields
    to float32 chunk by chunk (``checks.compute_dtype``), so no float32 copy of the batch is ever held; a dtype
    asked for is converted to (a half one as float32, as the rule computes in it).

    Detaching is the rule's contract, not the caller's: a trainer hands over the log-probs it will call
    ``loss()`` on, still carrying their graph, and coefficients built from them must be constants.
    """
    return as_batch(batch, dtype=compute_dtype(dtype), device=device).detached()


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


def global_action_tokens(L: torch.Tensor, red: Reducer, device: torch.device) -> torch.Tensor:
    """N: the action tokens of the global batch (summed over the reducer's ranks), a float64 0-d tensor."""
    return global_sums([L.sum()], red, device)[0]


def advantage_update(
    method: str,
    b: Batch,
    A: torch.Tensor,
    n_global: torch.Tensor,
    stats: dict[str, float],
    notes: list[str],
) -> Update:
    """The Update of a rule with one advantage per trajectory: A_i / N on each of its action tokens, all admitted.
    One pass writes the coefficients (a select on the bool mask: no float mask is read or kept)."""
    B, T = b.logprobs.shape
    scale = (A / n_global.clamp_min(1).to(A.dtype))[:, None]
    return Update(
        method=method,
        coefficients=torch.where(b.mask, scale, torch.zeros((), dtype=A.dtype, device=A.device)),
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


def staleness_gate(b: Batch, limit: int) -> torch.Tensor | None:
    """[B] bool of trajectories within ``limit`` policy versions (None when the batch has no lag)."""
    return None if b.staleness is None else b.staleness <= limit


def indices_note(host: HostRead, flags: torch.Tensor, write: Callable[[int, str], str | None],
                 notes: list[str], limit: int = 8) -> None:
    """After the host read, append ``write(count, indices text)`` to notes when some of ``flags`` [B] are true (the
    indices are found on the device: no ``nonzero``, no read of their own; on a CPU, where a read is free, a
    ``nonzero`` after the read is a tenth of the operators)."""
    if policy_for(flags.device).host_reads:
        def listed() -> None:
            idx = torch.nonzero(flags).flatten().tolist()
            line = write(len(idx), fmt_indices(idx, limit)) if idx else None
            if line:
                notes.append(line)

        host.then(listed)
        return
    got = host.want(first_true_k(flags, limit))

    def note() -> None:
        count, text = fmt_first(got(), limit)
        if count:
            line = write(count, text)
            if line:
                notes.append(line)

    host.then(note)


def on_policy_notes(b: Batch) -> list[str]:
    """The note on trajectories read as on-policy because they carried no behavior_logprobs (none when all did)."""
    n = b.size if b.behavior_logprobs is None else len(b.missing.get("behavior_logprobs", []))
    return [f"{n} trajectories have no behavior_logprobs and were taken as on-policy (ratio 1)."] if n else []


def expand_rows(x: torch.Tensor, T: int) -> torch.Tensor:
    return x[:, None].expand(x.shape[0], T)


def row_values_on_valid(b: Batch, per_row: torch.Tensor) -> torch.Tensor:
    """[B, T]: the row's number on every position inside the trajectory, 0 on padding."""
    B, T = b.logprobs.shape
    if b.lengths is None:
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


def fp16_note(coefficients: torch.Tensor, host: HostRead, notes: list[str]) -> None:
    """After the host read, note what an fp16 gradient does to these coefficients (nothing when nothing is lost)."""
    a = coefficients.abs()
    nonzero = a > 0
    counts = torch.stack([nonzero.sum(), (nonzero & (a < FP16_ZERO)).sum(), (nonzero & (a < FP16_NORMAL)).sum()])
    got_counts = host.want(counts)
    got_small = host.want(torch.where(nonzero, a, torch.full_like(a, math.inf)).min())

    def note() -> None:
        n, lost, coarse = (int(x) for x in got_counts())
        if not coarse:
            return
        smallest = got_small()
        scale = 2.0 ** math.ceil(math.log2(FP16_NORMAL / smallest)) if smallest > 0 else 1.0
        notes.append(
            f"fp16 log-probs: their gradient is fp16, so {lost} of {n} nonzero coefficients (|c| < {FP16_ZERO:.1e}) "
            f"become 0 in it and {coarse} lose precision (|c| < {FP16_NORMAL:.1e}). The loss value is float32 and "
            f"exact; for the gradient take float32 log-probs, or scale the loss (torch.amp.GradScaler, or multiply "
            f"by about {scale:g} and divide the gradients back)."
        )

    host.then(note)


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
    host: Any = None  # the outer rule's HostRead, when this rule runs inside another (Async): one read for both

    def inner(self) -> dict[str, Any]:
        """The keyword arguments for a wrapped method's rule, on a batch already converted."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}  # shallow: a process group is not copied
        return {**given, "dtype": None, "device": None, "within_async": True}


def rule(fn: Callable[..., Update]) -> Callable[..., Update]:
    """Run an update rule without autograd and finish its Update the same way for every method.

    * the rule's arithmetic runs under ``torch.no_grad()`` on a detached batch (``prepare``), so the
      coefficients are constants whatever the caller's tensors carry;
    * ``stats=False`` (the hot path) drops the stats and the notes; the coefficients, advantages, masks and
      row_stats are the same. The stats, notes and (device policy) validation verdicts are read from the device
      in one copy at the end (``HostRead``): the default path synchronises with the host once;
    * fp16 log-probs get a note on what their (fp16) gradient loses.
    """

    @functools.wraps(fn)
    def wrapper(method: Any, batch: Any, **kwargs: Any) -> Update:
        call = RuleCall(**kwargs)  # an unknown keyword is a TypeError naming it, as a signature's would be
        own = call.host is None
        if own:
            call = replace(call, host=HostRead())
        with torch.no_grad():
            upd = fn(method, batch, call)
            if not call.stats:
                upd.stats = {}
                upd.notes = []
            elif source_dtype(batch, call.dtype) == torch.float16:
                fp16_note(upd.coefficients, call.host, upd.notes)
            if own:
                call.host.read()  # the update's one host synchronisation (none when nothing was asked for)
        return upd

    return wrapper
