"""``Batch``: a padded ``[B, T]`` batch of trajectories, the one input every update rule reads.

Build one from tensors, or from a list of trajectory dicts (``Batch.from_trajectories``, read by
``methods.trajectories``, which documents the fields). This module imports torch only inside functions.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pick_a_method.methods.trajectories import GROUP_KEYS, TOKEN_FIELDS

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Batch", "as_batch", "TOKEN_FIELDS", "GROUP_KEYS"]


@dataclass(eq=False)
class Batch:
    """A padded batch: ``rewards`` [B], ``logprobs`` [B, T], ``mask`` [B, T] bool (True on action tokens).

    Optional: ``behavior_logprobs``, ``values``, ``teacher_logprobs`` [B, T]; ``lengths`` [B] (each
    trajectory's unpadded length, default T); ``groups`` [B] int64; ``agents`` (list of str);
    ``staleness`` [B]; ``info`` (the other fields of each trajectory); ``missing`` (field -> indices
    of trajectories that lacked a field others had: a missing ``behavior_logprobs`` reads as
    on-policy, a missing ``values``/``teacher_logprobs`` is refused by the methods that need it).

    Build it from a list of dicts with ``Batch.from_trajectories`` or directly from tensors.
    """

    rewards: "torch.Tensor"
    logprobs: "torch.Tensor"
    mask: "torch.Tensor | None" = None
    behavior_logprobs: "torch.Tensor | None" = None
    values: "torch.Tensor | None" = None
    teacher_logprobs: "torch.Tensor | None" = None
    lengths: "torch.Tensor | None" = None
    groups: "torch.Tensor | None" = None
    agents: list[str] | None = None
    staleness: "torch.Tensor | None" = None
    info: list[dict[str, Any]] | None = None
    missing: dict[str, list[int]] = field(default_factory=dict)
    _float_mask: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import torch

        if not isinstance(self.logprobs, torch.Tensor) or self.logprobs.dim() != 2:
            raise ValueError("Batch.logprobs must be a [B, T] tensor")
        if not self.logprobs.is_floating_point():
            raise ValueError(f"Batch.logprobs must be a floating tensor, got {self.logprobs.dtype}")
        B, T = self.logprobs.shape
        if B == 0 or T == 0:
            raise ValueError(f"Batch is empty (logprobs has shape {(B, T)})")
        device = self.logprobs.device
        # rewards keep their precision: a list or an integer tensor becomes float32/64, never a half dtype
        if not isinstance(self.rewards, torch.Tensor):
            try:
                self.rewards = torch.as_tensor(self.rewards, dtype=reward_dtype(self.logprobs.dtype), device=device)
            except (TypeError, ValueError, RuntimeError) as exc:
                raise ValueError(f"Batch.rewards must be [B] numbers ({exc})") from None
        if self.rewards.shape != (B,):
            raise ValueError(f"Batch.rewards must have shape [B] = [{B}], got {list(self.rewards.shape)}")
        if self.rewards.is_complex():
            raise ValueError(f"Batch.rewards must be real numbers, got {self.rewards.dtype}")
        if not self.rewards.is_floating_point():
            self.rewards = self.rewards.to(reward_dtype(self.logprobs.dtype))
        for name in ("behavior_logprobs", "values", "teacher_logprobs"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, torch.Tensor) or value.shape != (B, T):
                shape = list(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
                raise ValueError(f"Batch.{name} must be a [B, T] = [{B}, {T}] tensor like logprobs, got {shape}")
            if value.is_complex():
                raise ValueError(f"Batch.{name} must be real numbers, got {value.dtype}")
            if not value.is_floating_point():
                setattr(self, name, value.to(self.logprobs.dtype))
        if self.lengths is not None:
            self.lengths = torch.as_tensor(self.lengths, dtype=torch.int64, device=device)
            if self.lengths.shape != (B,) or bool((self.lengths < 0).any()) or bool((self.lengths > T).any()):
                raise ValueError(f"Batch.lengths must be [B] integers in [0, {T}]")
        if self.mask is None:
            if self.lengths is None:
                self.mask = torch.ones(B, T, dtype=torch.bool, device=device)
            else:
                self.mask = torch.arange(T, device=device)[None, :] < self.lengths[:, None]
        else:
            if not isinstance(self.mask, torch.Tensor) or self.mask.shape != (B, T):
                raise ValueError(f"Batch.mask must be a [B, T] = [{B}, {T}] tensor")
            if self.mask.dtype != torch.bool:
                self.mask = self.mask != 0
            if self.lengths is not None:
                self.mask = self.mask & (torch.arange(T, device=device)[None, :] < self.lengths[:, None])
        if self.groups is not None:
            self.groups = torch.as_tensor(self.groups, device=device)
            if self.groups.shape != (B,) or self.groups.is_floating_point():
                raise ValueError(f"Batch.groups must be [B] = [{B}] integer group ids")
        if self.staleness is not None:
            self.staleness = torch.as_tensor(self.staleness, device=device)
            if self.staleness.shape != (B,):
                raise ValueError(f"Batch.staleness must have shape [B] = [{B}]")
        if self.agents is not None and len(self.agents) != B:
            raise ValueError(f"Batch.agents must have B = {B} entries, got {len(self.agents)}")
        if self.info is not None and len(self.info) != B:
            raise ValueError(f"Batch.info must have B = {B} entries, got {len(self.info)}")

    # -- shape helpers -------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return int(self.logprobs.shape[0])

    def __len__(self) -> int:
        return self.size

    @property
    def T(self) -> int:
        return int(self.logprobs.shape[1])

    @property
    def dtype(self) -> "torch.dtype":
        return self.logprobs.dtype

    @property
    def device(self) -> "torch.device":
        return self.logprobs.device

    def float_mask(self, dtype: "torch.dtype | None" = None) -> "torch.Tensor":
        """The mask as 0/1 in ``dtype`` (cached: converting a bool mask costs a full pass)."""
        dtype = dtype or self.dtype
        cached = self._float_mask
        if cached is None or cached.dtype != dtype:
            cached = self.mask.to(dtype)
            self._float_mask = cached
        return cached

    def valid(self) -> "torch.Tensor":
        """[B, T] bool: positions inside each trajectory (not padding), action or observation."""
        import torch

        if self.lengths is None:
            return torch.ones_like(self.mask)
        return torch.arange(self.T, device=self.device)[None, :] < self.lengths[:, None]

    def to(self, dtype: "torch.dtype | None" = None, device: Any = None) -> "Batch":
        """A copy with floating tensors cast to ``dtype`` and everything moved to ``device``."""

        def move(x: Any, floating: bool) -> Any:
            if x is None:
                return None
            return x.to(device=device, dtype=dtype if (floating and dtype is not None) else None)

        rewards = self.rewards.to(device=device)
        if dtype is not None:
            rewards = rewards.to(reward_dtype(dtype))
        return Batch(
            rewards=rewards,
            logprobs=move(self.logprobs, True),
            mask=move(self.mask, False),
            behavior_logprobs=move(self.behavior_logprobs, True),
            values=move(self.values, True),
            teacher_logprobs=move(self.teacher_logprobs, True),
            lengths=move(self.lengths, False),
            groups=move(self.groups, False),
            agents=self.agents,
            staleness=move(self.staleness, False),
            info=self.info,
            missing=dict(self.missing),
        )

    def detached(self) -> "Batch":
        """The same batch with every tensor detached from autograd (views: no copy). The update rules read this:
        a trainer's log-probs carry their graph, and a rule must never differentiate through its own coefficients."""
        if not any(
            x is not None and x.requires_grad
            for x in (self.rewards, self.logprobs, self.behavior_logprobs, self.values, self.teacher_logprobs)
        ):
            return self
        out = copy.copy(self)
        for name in ("rewards", "logprobs", "behavior_logprobs", "values", "teacher_logprobs"):
            x = getattr(self, name)
            if x is not None:
                setattr(out, name, x.detach())
        out._float_mask = None
        return out

    @classmethod
    def from_trajectories(
        cls,
        trajectories: Any,
        *,
        dtype: "torch.dtype | None" = None,
        device: Any = None,
    ) -> "Batch":
        """Convert a list of trajectory dicts once, padding to the longest (see ``methods.trajectories``).

        Errors name the trajectory (its index) and the field: a missing or non-finite reward, an
        empty or non-numeric ``logprobs``, a per-token field whose length differs from ``logprobs``.
        """
        from pick_a_method.methods.trajectories import read_trajectories

        return read_trajectories(cls, trajectories, dtype=dtype, device=device)


def reward_dtype(dtype: "torch.dtype | None") -> "torch.dtype":
    """The dtype rewards are kept in: float64 stays float64, anything else (half precision included) is float32."""
    import torch

    return torch.float64 if dtype == torch.float64 else torch.float32


def as_batch(batch: Any, *, dtype: "torch.dtype | None" = None, device: Any = None) -> Batch:
    """A ``Batch`` as is (cast when ``dtype``/``device`` are given), or a list of trajectory dicts converted."""
    if isinstance(batch, Batch):
        if dtype is not None or device is not None:
            return batch.to(dtype=dtype, device=device)
        return batch
    if batch is None:
        raise ValueError("no batch: give a list of trajectory dicts or a methods.Batch")
    return Batch.from_trajectories(batch, dtype=dtype, device=device)
