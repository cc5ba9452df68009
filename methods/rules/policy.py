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
import threading
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


    def workspace(self, n: int, rows: int, T: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """[n, rows, T] scratch for a rule's chunk buffers. On a CPU it is kept for the next update of the same shape
        (one per thread): freeing and re-taking a few MiB each update makes glibc hand the pages back to the OS
        and fault them in again, about 1 ms at B = 256. On a device the caching allocator already reuses them."""
        if not self.host_reads:
            return torch.empty(n, rows, T, dtype=dtype, device=device)
        key = (n, rows, T, dtype, torch.device(device))
        kept = getattr(_scratch, "kept", None)
        if kept is None or len(kept) > 4:
            kept = _scratch.kept = {}
        if key not in kept:
            kept[key] = torch.empty(n, rows, T, dtype=dtype, device=device)
        return kept[key]

    def scratch(self, rows: int, width: int, dtype: torch.dtype, device: torch.device) -> "Scratch":
        """Room for a chunk's temporaries: ``width`` elements a row (sum of their widths), kept on a CPU."""
        return Scratch(self.workspace(1, rows, width, dtype, device) if self.host_reads else None, dtype, device)


class Scratch:
    """A chunk's temporaries taken in turn from one kept buffer (cpu; ``reset()`` before each chunk), or fresh
    from the allocator (device, or when the buffer is used up)."""

    def __init__(self, buf: torch.Tensor | None, dtype: torch.dtype, device: torch.device) -> None:
        self.buf = None if buf is None else buf.view(-1)
        self.dtype, self.device, self.pos = dtype, device, 0

    def reset(self) -> None:
        self.pos = 0

    def take(self, n: int, T: int) -> torch.Tensor:
        k = n * T
        if self.buf is None or self.pos + k > self.buf.numel():
            return torch.empty(n, T, dtype=self.dtype, device=self.device)
        view = self.buf[self.pos:self.pos + k].view(n, T)
        self.pos += k
        return view


_scratch = threading.local()
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
    copy. ``want(x)`` registers a tensor, a number, or a list of them (0-d tensors of any dtype) and returns a
    getter, valid after ``read()``: a float for a 0-d tensor or a number, a list otherwise; ``then(fn)`` runs fn
    after the read, in the order registered (verdicts first: ``checked_batch`` registers them first)."""

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._then: list[Callable[[], None]] = []
        self._values: list[Any] = []

    def want(self, x: Any) -> Callable[[], Any]:
        i = len(self._items)
        self._items.append(x)
        return lambda: self._values[i]

    def then(self, fn: Callable[[], None]) -> None:
        self._then.append(fn)

    def read(self) -> None:
        flat = [t for x in self._items for t in (x if isinstance(x, (list, tuple)) else [x])]
        tensors = [t for t in flat if isinstance(t, torch.Tensor)]
        if tensors and not policy_for(tensors[0].device).host_reads:  # one copy to the host: the update's one wait
            dev = tensors[0].device
            got = iter(torch.cat([t.reshape(-1).to(device=dev, dtype=torch.float64) for t in tensors]).tolist())
            host = {id(t): [next(got) for _ in range(t.numel())] for t in tensors}
        else:  # on a CPU a read costs nothing: no cat, no conversions
            host = {id(t): [float(v) for v in t.reshape(-1).tolist()] for t in tensors}

        def value(x: Any) -> Any:
            if isinstance(x, torch.Tensor):
                return host[id(x)][0] if x.dim() == 0 else host[id(x)]
            return float(x)

        self._values = [[value(t) for t in x] if isinstance(x, (list, tuple)) else value(x) for x in self._items]
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

