"""``Update``: what an update rule returns.

The contract every rule keeps: ``coefficients[i, t]`` is the number a trainer multiplies
``grad log pi(a_t | h_t)`` of trajectory ``i`` by (held constant), with the method's importance
ratio, mask, clip and batch normalization already applied, so

    loss = update.loss(logprobs)        # = -sum(coefficients * logprobs) over action tokens
    loss.backward()                     # logprobs.grad == -coefficients, exactly

torch is imported only by the methods that need it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Update"]


@dataclass(eq=False)
class Update:
    """The result of one update rule on one batch.

    ``method``          registry name of the method that produced it
    ``coefficients``    [B, T] per-token policy-gradient coefficients (0 off the mask and on rejected rows)
    ``advantages``      [B, T] advantages before any ratio, mask, clip or normalization
    ``admitted``        [B] bool: the trajectory moves the policy at all
    ``mask``            [B, T] bool: the action tokens the coefficients live on
    ``stats``           named floats (batch statistics; see each rule's docstring)
    ``notes``           sentences a person should read (rejections, clamps, on-policy assumptions)
    ``value_targets``   [B, T] critic regression targets, for the methods with a critic (else None)
    ``row_stats``       per-trajectory [B] tensors (e.g. ``drift``, ``mean_ratio``, ``kept_share``)
    ``normalizer``      the batch normalizer already inside the coefficients, in words
    """

    method: str
    coefficients: "torch.Tensor"
    advantages: "torch.Tensor"
    admitted: "torch.Tensor"
    mask: "torch.Tensor"
    stats: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    value_targets: "torch.Tensor | None" = None
    row_stats: dict[str, "torch.Tensor"] = field(default_factory=dict)
    normalizer: str = ""

    @property
    def n(self) -> int:
        return int(self.admitted.shape[0])

    @property
    def n_admitted(self) -> int:
        return int(self.admitted.sum().item())

    def loss(self, logprobs: "torch.Tensor") -> "torch.Tensor":
        """-(sum of coefficients * logprobs) over action tokens; its gradient wrt ``logprobs`` is ``-coefficients``.

        Masked positions of ``logprobs`` may hold anything (NaN, inf): they are selected away with
        ``torch.where``, so neither the value nor the gradient sees them.
        """
        import torch

        if logprobs.shape != self.coefficients.shape:
            raise ValueError(
                f"logprobs must have the coefficients' shape {list(self.coefficients.shape)}, got {list(logprobs.shape)}"
            )
        coef = self.coefficients.to(device=logprobs.device, dtype=logprobs.dtype)
        mask = self.mask.to(logprobs.device)
        safe = torch.where(mask, logprobs, torch.zeros((), dtype=logprobs.dtype, device=logprobs.device))
        return -(safe * coef).sum()

    def value_loss(self, values: "torch.Tensor") -> "torch.Tensor":
        """0.5 * mean squared error of ``values`` against ``value_targets`` over the action tokens."""
        import torch

        if self.value_targets is None:
            raise ValueError(f"{self.method} has no critic: there are no value targets")
        if values.shape != self.value_targets.shape:
            raise ValueError(f"values must have shape {list(self.value_targets.shape)}, got {list(values.shape)}")
        mask = self.mask.to(values.device)
        target = self.value_targets.to(device=values.device, dtype=values.dtype)
        err = torch.where(mask, values - target, torch.zeros((), dtype=values.dtype, device=values.device))
        count = mask.sum().clamp_min(1)
        return 0.5 * (err * err).sum() / count

    def to_lists(self) -> dict[str, Any]:
        """Plain-Python view (padded rows, one list per trajectory)."""
        return {
            "method": self.method,
            "coefficients": self.coefficients.tolist(),
            "advantages": self.advantages.tolist(),
            "admitted": [bool(x) for x in self.admitted.tolist()],
            "stats": dict(self.stats),
            "notes": list(self.notes),
            "value_targets": None if self.value_targets is None else self.value_targets.tolist(),
        }

    def __str__(self) -> str:
        lines = [f"{self.method} update: {self.n_admitted} of {self.n} trajectories admitted"]
        for key, value in self.stats.items():
            lines.append(f"  {key} = {value:.4g}")
        if self.normalizer:
            lines.append(f"  coefficients carry {self.normalizer}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)
