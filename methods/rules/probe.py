"""What an update costs beside its time, measured on any device: operators dispatched, host synchronisations,
peak extra memory. The tests hold the rules to these on CPU (so CI keeps them without a GPU); ``bench/gpu_bench.py``
reports them.

* ``OpCounter``: a ``TorchDispatchMode`` that counts every aten operator dispatched (on CUDA each one that
  computes is a kernel launch) and those that make the host wait for the device: ``_local_scalar_dense`` (``item``,
  ``float``, ``bool`` of a tensor), ``nonzero``, ``equal``, ``unique``, ``masked_select``, an index by a bool mask
  (a ``nonzero`` inside), plus ``Tensor.tolist`` / ``Tensor.numpy`` (which copy without dispatching on CPU).
* ``MemoryTracker``: the live bytes of the storages operators allocate (not their views, not the in-place and
  ``out=`` results, which alias an input), freed when the storage is; ``peak`` is the most held at once.
"""

from __future__ import annotations

import weakref
from collections import Counter
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["OpCounter", "MemoryTracker", "SYNC_OPS"]

aten = torch.ops.aten

# operators whose result the host must wait for (their output is a host value, or its size depends on the data)
SYNC_OPS = {
    "_local_scalar_dense", "nonzero", "equal", "is_nonzero", "_unique2", "unique_dim", "unique_consecutive",
    "masked_select", "_assert_async",
}


def _name(func: Any) -> str:
    return func.overloadpacket.__name__


def _bool_index(func: Any, args: tuple) -> bool:
    if _name(func) not in ("index", "index_put", "index_put_"):
        return False
    indices = args[1] if len(args) > 1 else []
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or [])


class OpCounter(TorchDispatchMode):
    """Count the operators dispatched (``ops``, ``by_name``) and the host synchronisations (``syncs``, ``sync_names``)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_name: Counter[str] = Counter()
        self.sync_names: Counter[str] = Counter()
        self._saved: dict[str, Any] = {}

    @property
    def ops(self) -> int:
        return sum(self.by_name.values())

    @property
    def syncs(self) -> int:
        return sum(self.sync_names.values())

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        name = _name(func)
        self.by_name[name] += 1
        if name in SYNC_OPS or _bool_index(func, args):
            self.sync_names[name] += 1
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> "OpCounter":
        # tolist / numpy copy a CPU tensor without dispatching; on CUDA they wait for the device
        for attr in ("tolist", "numpy"):
            original = getattr(torch.Tensor, attr)
            self._saved[attr] = original

            def counted(t: torch.Tensor, *a: Any, _orig: Any = original, _attr: str = attr, **k: Any) -> Any:
                self.sync_names[_attr] += 1
                return _orig(t, *a, **k)

            setattr(torch.Tensor, attr, counted)
        return super().__enter__()

    def __exit__(self, *exc: Any) -> Any:
        for attr, original in self._saved.items():
            setattr(torch.Tensor, attr, original)
        self._saved.clear()
        return super().__exit__(*exc)


class MemoryTracker(TorchDispatchMode):
    """Peak bytes of the storages allocated by the operators run under it (``peak``), and those still live (``live``)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._held: set[int] = set()

    def _free(self, key: int, nbytes: int) -> None:
        self._held.discard(key)
        self.live -= nbytes

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        returns = func._schema.returns
        if any(r.alias_info is not None for r in returns):
            return out  # a view, or an in-place / out= result: no new storage
        inputs = {x.untyped_storage().data_ptr() for x in tree_flatten((args, kwargs))[0] if isinstance(x, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            s = t.untyped_storage()
            key = s.data_ptr()
            if key in self._held or key in inputs or s.nbytes() == 0:
                continue
            self._held.add(key)
            self.live += s.nbytes()
            self.peak = max(self.peak, self.live)
            weakref.finalize(s, self._free, key, s.nbytes())
        return out
