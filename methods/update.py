"""``Update``: what an update rule returns.

The contract every rule keeps: ``coefficients[i, t]`` is the number a trainer multiplies
``grad log pi(a_t | h_t)`` of trajectory ``i`` by (held constant), with the method's importance
ratio, mask, clip and batch normalization already applied, so

    loss = update.loss(logprobs)        # = -sum(coefficients * logprobs) over action tokens
    loss.backward()                     # logprobs.grad == -coefficients, exactly

The coefficients never carry autograd history: the rules detach what the batch holds, so the
log-probs a trainer hands to the ``Batch`` may be the very tensor (with its graph) it calls
``loss()`` on.

Micro-batches (gradient accumulation): compute the update once on the whole (global) batch, then
take the loss slice by slice; the summed gradients equal the full batch's, because the batch
normalizer is already inside the coefficients:

    upd = method.update(batch)                      # once, on every row
    for rows in (slice(0, 8), slice(8, 16)):
        upd.loss(policy_logprobs(rows), rows=rows).backward()

Precision: the loss is accumulated in float32 (float64 when the coefficients are), whatever the
log-probs' dtype; its gradient is cast back to theirs. bf16 log-probs therefore get the float32
rule's gradient rounded to bf16. fp16 log-probs get an fp16 gradient, in which coefficients below
about 6e-8 are 0 (a note says how many): use float32 log-probs, or scale the loss.

The stats names are shared across rules (``STATS`` below lists the common ones).

torch is imported only by the methods that need it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Update", "STATS"]

# The stats every rule names the same way (a rule reports those that apply to it; rule-specific stats are in
# each rule's docstring). All are over the global batch where the rule reduces across ranks.
STATS = {
    "trajectories": "B, trajectories in the batch",
    "action_tokens": "N, action tokens in the batch",
    "admitted_share": "share of trajectories that move the policy at all",
    "mean_reward": "mean reward (rules that read rewards)",
    "mean_abs_advantage": "mean |A| over trajectories (one advantage per trajectory)",
    "mean_advantage": "mean A over action tokens (per-token advantages: SAO, BPCO)",
    "mean_ratio": "mean importance ratio pi_train / pi_sampler, after any cap (domain in the rule's docstring)",
    "masked_token_share": "share of action tokens whose coefficient a trust mechanism set to 0 (band, clip, correction)",
    "capped_token_share": "share of action tokens whose ratio the ratio cap lowered",
    "mean_lambda": "mean GAE lambda over trajectories (SAO, BPCO)",
}


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

    def __post_init__(self) -> None:
        # the contract, enforced: a coefficient is a constant (a rule never hands out a graph)
        for name in ("coefficients", "advantages", "value_targets"):
            x = getattr(self, name)
            if x is not None and x.requires_grad:
                setattr(self, name, x.detach())

    def _rows(self, x: "torch.Tensor", rows: Any) -> "torch.Tensor":
        return x if rows is None else x[rows]

    def loss(self, logprobs: "torch.Tensor", rows: Any = None) -> "torch.Tensor":
        """-(sum of coefficients * logprobs) over action tokens; its gradient wrt ``logprobs`` is ``-coefficients``.

        ``rows`` (a slice, or an index tensor/list) takes the loss of those trajectories only, for
        micro-batches: ``logprobs`` is then ``[len(rows), T]``. Summed over slices covering the batch,
        the losses and their gradients equal the full batch's.

        Accumulated in float32 (float64 with float64 coefficients) whatever ``logprobs``' dtype; the
        result is a float32/64 scalar. Masked positions of ``logprobs`` may hold anything (NaN, inf):
        they are selected away with ``torch.where``, so neither the value nor the gradient sees them.
        """
        import torch

        coef = self._rows(self.coefficients, rows)
        mask = self._rows(self.mask, rows)
        if logprobs.shape != coef.shape:
            where = "" if rows is None else f" for rows={rows!r}"
            raise ValueError(
                f"logprobs must have the coefficients' shape {list(coef.shape)}{where}, got {list(logprobs.shape)}"
            )
        if not logprobs.is_floating_point():
            raise ValueError(f"logprobs must be a floating tensor, got {logprobs.dtype}")
        acc = coef.dtype if coef.dtype == torch.float64 else torch.float32
        coef = coef.to(device=logprobs.device, dtype=acc)
        mask = mask.to(logprobs.device)
        safe = torch.where(mask, logprobs, torch.zeros((), dtype=logprobs.dtype, device=logprobs.device))
        return -(safe.to(acc) * coef).sum()

    def value_loss(self, values: "torch.Tensor", rows: Any = None) -> "torch.Tensor":
        """0.5 * mean squared error of ``values`` against ``value_targets`` over the batch's action tokens.

        The mean divides by the action tokens of the whole batch, so with ``rows`` (micro-batches) the
        slices' losses add up to the full batch's. Accumulated in float32 or better.
        """
        import torch

        if self.value_targets is None:
            raise ValueError(f"{self.method} has no critic: there are no value targets")
        target = self._rows(self.value_targets, rows)
        mask = self._rows(self.mask, rows)
        if values.shape != target.shape:
            where = "" if rows is None else f" for rows={rows!r}"
            raise ValueError(f"values must have shape {list(target.shape)}{where}, got {list(values.shape)}")
        acc = target.dtype if target.dtype == torch.float64 else torch.float32
        mask = mask.to(values.device)
        target = target.to(device=values.device, dtype=acc)
        v = values.to(acc)
        err = torch.where(mask, v - target, torch.zeros((), dtype=acc, device=values.device))
        count = self.mask.sum().clamp_min(1).to(values.device)
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
