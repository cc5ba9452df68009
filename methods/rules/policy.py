"""How a rule walks the batch where it runs (the policy), and the one host read of its stats and verdicts.

Two policies:

* ``cpu``: row chunks sized for a core's cache (``CPU_CHUNK_ELEMENTS`` per temporary), and the rule may read a
  value back to pick a faster path (is this field finite? is the mask a prefix?): on a CPU that costs nothing.
* ``device`` (CUDA and every other accelerator): as few chunks as memory allows. A chunk's temporaries take what
  the rule's outputs leave of ``RULE_EXTRA_TENSORS`` [B, T] tensors of the input dtype, and at most
  ``RULE_CHUNK_BYTES``; so the number of chunks, hence of kernel launches, does not grow with B. Nothing in the
  hot path reads a value back (no host synchronisation); the default path reads its stats, notes and
  validation verdicts once, in one copy (``HostRead``).

``use_policy("device")`` forces a policy (the tests count a CUDA update's operators on CPU this way).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from pick_a_method.methods import defaults as D

__all__ = ["Policy", "CPU", "DEVICE", "use_policy", "policy_for", "HostRead", "first_true_k", "fmt_first"]


@dataclass(frozen=True)
class Policy:
    name: str
    host_reads: bool  # may read a device value on the host to choose a faster path

    def chunks(self, B: int, T: int, *, temps: float, compute: torch.dtype, given: torch.dtype,
               outputs: float = 0.0) -> list[slice]:
        """Row chunks for a rule holding ``temps`` [rows, T] temporaries of dtype ``compute`` per chunk, whose
        outputs take ``outputs`` [B, T] tensors of the input dtype ``given``. Balanced: chunk sizes differ by <= 1."""
        if self.host_reads:
            rows = max(1, D.CPU_CHUNK_ELEMENTS // T)
        else:
            unit = B * T * given.itemsize  # one [B, T] tensor of the input dtype
            # half a tensor is left for the per-row vectors and a stats pass's transients
            budget = min(float(D.RULE_CHUNK_BYTES), max(D.RULE_EXTRA_TENSORS - outputs - 0.5, 0.5) * unit)
            per_row = max(temps, 1.0) * T * compute.itemsize
            rows = max(1, int(budget // per_row))
        n = -(-B // min(rows, B))
        edges = [B * i // n for i in range(n + 1)]
        return [slice(edges[i], edges[i + 1]) for i in range(n)]


CPU = Policy("cpu", host_reads=True)
DEVICE = Policy("device", host_reads=False)
_POLICIES = {"cpu": CPU, "device": DEVICE}
_forced: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("pick_a_method_policy", default=None)


@contextlib.contextmanager
def use_policy(name: str) -> Iterator[Policy]:
    """Run the rules under the named policy ("cpu" or "device") whatever device their tensors are on."""
    token = _forced.set(_POLICIES[name])
    try:
        yield _POLICIES[name]
    finally:
        _forced.reset(token)


def policy_for(device: torch.device) -> Policy:
    forced = _forced.get()
    if forced is not None:
        return forced
    return CPU if torch.device(device).type == "cpu" else DEVICE


class HostRead:
    """Device values the host needs once the update is computed (stats, notes, validation verdicts), read in one
    copy. ``want(x)`` registers a tensor (or a number) and returns a getter, valid after ``read()``; ``then(fn)``
    runs fn after the read, in the order registered (verdicts first: ``checked_batch`` registers them first)."""

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._then: list[Callable[[], None]] = []
        self._values: list[float] | None = None

    def want(self, x: Any) -> Callable[[], Any]:
        i = len(self._items)
        self._items.append(x)
        width = x.numel() if isinstance(x, torch.Tensor) else 1
        scalar = not isinstance(x, torch.Tensor) or x.dim() == 0

        def get() -> Any:
            start = self._offsets[i]
            vals = self._values[start:start + width]  # type: ignore[index]
            return vals[0] if scalar else vals

        return get

    def then(self, fn: Callable[[], None]) -> None:
        self._then.append(fn)

    def read(self) -> None:
        tensors = [x for x in self._items if isinstance(x, torch.Tensor)]
        flat: list[float] = []
        if tensors:
            dev = tensors[0].device
            flat = torch.cat([t.detach().reshape(-1).to(device=dev, dtype=torch.float64) for t in tensors]).tolist()
        self._values, self._offsets, k = [], [], 0
        for x in self._items:
            self._offsets.append(len(self._values))
            if isinstance(x, torch.Tensor):
                self._values.extend(flat[k:k + x.numel()])
                k += x.numel()
            else:
                self._values.append(float(x))
        for fn in self._then:
            fn()


def first_true_k(flags: torch.Tensor, k: int = 8) -> torch.Tensor:
    """[1 + k] float64 on the device: how many of ``flags`` [B] are true, then the first k of their indices
    (-1 past the last), without a host read (a fixed-size ``topk`` in place of ``nonzero``)."""
    B = flags.shape[0]
    pos = torch.where(flags, torch.arange(B, device=flags.device), B)
    first = torch.topk(pos, min(k, B), largest=False).values
    first = torch.where(first < B, first, -1)
    pad = torch.full((k - first.numel(),), -1, device=flags.device, dtype=first.dtype)
    return torch.cat([flags.sum().reshape(1), first, pad]).to(torch.float64)


def fmt_first(values: list[float], limit: int = 8) -> tuple[int, str]:
    """(count, the indices as ``fmt_indices`` writes them) from a read ``first_true_k``."""
    count = int(values[0])
    shown = [int(v) for v in values[1:1 + limit] if v >= 0]
    extra = count - len(shown)
    return count, ", ".join(str(i) for i in shown) + (f" ... and {extra} more" if extra > 0 else "")

