"""Distillation rules: OPD (a served teacher) and OPSD (the student's own anchored weights, shown privileged text).

Two forms of the same per-token loss:

* **Sampled-token form** (``OPD.update`` / ``OPSD.update``): only the log-probs of the tokens the
  student sampled are needed, from the student (``logprobs``) and the teacher (``teacher_logprobs``).
  With delta = log pi_T(a) - log pi_S(a), the policy-gradient coefficient of each action token is
  the score-function gradient of the chosen divergence, estimated on the student's own samples:

  - reverse_kl  KL(S || T):   c = delta                                 (Thinking Machines; prime-rl ref_kl)
  - forward_kl  KL(T || S):   c = exp(delta) - 1   (importance weight pi_T/pi_S, baseline 1)
  - jsd         JSD(S, T):    c = (softplus(delta) - log 2) / 2 = 1/2 log((pi_S + pi_T)/(2 pi_S))

  delta is clamped to +-20 before exp, and forward_kl's importance weight pi_T/pi_S is capped at
  ``ratio_cap`` (default 20), so c <= ratio_cap - 1. c = 0 when the teacher agrees with the student. The
  coefficients are ``c / N`` with N the action tokens of the global batch (token-weighted mean, as
  every rule here). Rewards are not read.

* **Top-k form** (``OPD.topk_loss`` / ``topk_divergence``): the student's log-probs gathered at the
  teacher's top-k token ids ``[B, T, K]`` and the teacher's own ``[B, T, K]``. The rest of the
  vocabulary is one extra "tail" category (log(1 - sum p), as TRL's tail bucket), so mass the
  student puts off the teacher's support is still penalized. Differentiable in the student's
  log-probs; a token-mean over the mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from pick_a_method.methods import defaults as D
from pick_a_method.methods.rules._common import (
    RuleCall,
    OFF_POLICY_TOLERANCE,
    TOKEN_MEAN,
    checked_batch,
    global_sums,
    indices_note,
    reducer,
    rule,
    sig,
)
from pick_a_method.methods.rules.checks import sub_into
from pick_a_method.methods.rules.grouped import off_policy_rows
from pick_a_method.methods.update import Update

_LOG2 = math.log(2.0)


def sampled_token_coefficients(
    delta: torch.Tensor, divergence: str, ratio_cap: float = D.OPD_RATIO_CAP
) -> torch.Tensor:
    """Per-token coefficient from delta = teacher_lp - student_lp (see the module docstring)."""
    if divergence == "reverse_kl":
        return delta.clone()
    d = delta.clamp(-D.OPD_LOG_RATIO_CLAMP, D.OPD_LOG_RATIO_CLAMP)
    if divergence == "forward_kl":
        if ratio_cap < math.inf:
            d = d.clamp(max=math.log(ratio_cap))  # pi_T/pi_S <= ratio_cap
        return torch.expm1(d)
    if divergence == "jsd":
        return (torch.nn.functional.softplus(d) - _LOG2) * 0.5
    raise ValueError(f"divergence must be one of {', '.join(D.DIVERGENCES)}; got {divergence!r}")


@rule
def distill_update(
    method: Any,
    batch: Any,
    call: RuleCall,
) -> Update:
    """OPD / OPSD in sampled-token form: coefficients ``c(delta) / N`` on every action token.

    ``teacher_logprobs`` must be on every trajectory: for OPD the served teacher's log-probs of the
    student's sampled tokens (prompt log-probs from vLLM), for OPSD the same student weights at the
    configured anchor (ema / initial / live) scored with the privileged text in the prompt.
    Stats: trajectories, action_tokens, admitted_share, reverse_kl (the k1 estimate
    mean(logp - teacher_lp)), reverse_kl_k3 (mean of exp(delta) - 1 - delta, non-negative),
    teacher_prefers_share (tokens where the teacher's log-prob is higher), capped_token_share
    (forward_kl tokens whose pi_T/pi_S hit ratio_cap).
    """
    who = method.info.label
    hint = (
        "Score the student's sampled tokens with the teacher (a server that returns prompt log-probs) and put them "
        "in each trajectory's teacher_logprobs."
        if who == "OPD"
        else f"Score the sampled tokens with the {method.anchor} weights shown the privileged '{method.privileged}' "
        "text, and put them in each trajectory's teacher_logprobs."
    )
    # rewards are not read, so not checked
    host = call.host
    b, dt, L, _, policy = checked_batch(batch, call.dtype, call.device, validate=call.validate, host=host,
                                        rewards=False, needs="teacher_logprobs", method=who, hint=hint)
    B, T = b.logprobs.shape
    teacher = b.teacher_logprobs
    red = reducer(call.distributed, call.process_group)
    sums = global_sums([L.sum(), float(B)], red, b.device)
    n_global = sums[0].clamp_min(1).to(dt)
    c = torch.empty(B, T, dtype=dt, device=b.device)  # the advantages, written chunk by chunk
    coef = torch.empty(B, T, dtype=dt, device=b.device)
    rk_rows = torch.empty(B, dtype=dt, device=b.device)
    if call.stats:  # per row: k3 sum, tokens the teacher prefers, tokens past the cap, past the clamp, max |delta|
        extra = torch.empty(5, B, dtype=dt, device=b.device)
    zero = torch.zeros((), dtype=dt, device=b.device)
    clamp_at = D.OPD_LOG_RATIO_CLAMP
    log_cap = math.log(method.ratio_cap) if method.ratio_cap < math.inf else math.inf

    def chunk(r: slice) -> None:  # a function: its temporaries are freed before the next chunk's
        m = b.mask[r]
        d = sub_into(c[r], teacher[r], b.logprobs[r])
        torch.where(m, d, zero, out=d)  # delta on action tokens, 0 elsewhere (padding may hold anything)
        rk_rows[r] = d.sum(1)
        if call.stats:
            a = d.abs()
            extra[4, r] = a.amax(1)
            extra[3, r] = torch.gt(a, clamp_at).sum(1)
            extra[2, r] = torch.gt(d, log_cap).sum(1)
            extra[1, r] = torch.gt(d, 0).sum(1)
            dm = torch.clamp(d, -clamp_at, clamp_at, out=a)
            extra[0, r] = torch.expm1(dm).sub_(dm).sum(1)  # k3 = exp(delta) - 1 - delta, 0 off the mask
        sampled_token_coefficients_(d, method.divergence, float(method.ratio_cap))
        torch.div(d, n_global, out=coef[r])

    outputs = 2 * dt.itemsize / b.dtype.itemsize  # c and the coefficients, in [B, T] tensors of the input dtype
    for r in policy.chunks(B, T, temps=3 if call.stats else 1.5, compute=dt, given=b.dtype, outputs=outputs):
        chunk(r)
    admitted = torch.ones(B, dtype=torch.bool, device=b.device)
    row_stats = {"reverse_kl": -rk_rows / L.clamp_min(1)}
    upd = Update(method.name, coef, c, admitted, b.mask, row_stats=row_stats, normalizer=TOKEN_MEAN)
    if not call.stats:
        return upd
    got = host.want([sums[0], sums[1], L.sum(), rk_rows.sum(), *extra[:4].sum(1), extra[4].max()])

    def finish() -> None:
        n_tok, n_traj, n_local, rk, k3, prefers, n_capped, n_over, big = got()
        if not (method.divergence == "forward_kl" and method.ratio_cap < math.inf):
            n_capped = 0.0
        upd.stats = {"trajectories": n_traj, "action_tokens": n_tok, "admitted_share": 1.0,
                     "reverse_kl": -rk / n_local, "reverse_kl_k3": k3 / n_local,
                     "teacher_prefers_share": prefers / n_local, "capped_token_share": n_capped / n_local}
        notes = [f"{who} reads no reward: the signal is the teacher's log-probs ({method.divergence}, sampled-token form)."]
        if red.note:
            notes.append(red.note)
        if n_capped:
            notes.append(
                f"the ratio cap bound: {int(n_capped)} action tokens had pi_teacher/pi_student > ratio_cap="
                f"{sig(method.ratio_cap)}; their forward-KL weight was counted at {sig(method.ratio_cap)}."
            )
        upd.notes[:0] = notes
        if who == "OPSD" and method.anchor_parts()[0] == "live":
            upd.notes.append("anchor=live: the teacher moves with the student every step (prime-rl's opsd).")
        if n_over and method.divergence != "reverse_kl":
            upd.notes.append(
                f"|teacher_lp - logp| exceeded {clamp_at:g} on {int(n_over)} action tokens (largest {sig(big)}); "
                f"clamped to {clamp_at:g} before exp."
            )

    if b.behavior_logprobs is not None and not call.within_async:  # read before finish: its note comes after
        indices_note(host, off_policy_rows(b, dt, policy, outputs) > OFF_POLICY_TOLERANCE, lambda n, idx: (
            f"{n} trajectories were sampled by another policy (indices {idx}); the sampled-token estimate "
            "assumes the student's own samples: wrap the method in Async."), upd.notes)
    host.then(finish)
    return upd


def sampled_token_coefficients_(d: torch.Tensor, divergence: str, ratio_cap: float) -> torch.Tensor:
    """``sampled_token_coefficients`` in place on d (the chunk's delta): no temporary but softplus's."""
    if divergence == "reverse_kl":
        return d
    d.clamp_(-D.OPD_LOG_RATIO_CLAMP, D.OPD_LOG_RATIO_CLAMP)
    if divergence == "forward_kl":
        if ratio_cap < math.inf:
            d.clamp_(max=math.log(ratio_cap))  # pi_T/pi_S <= ratio_cap
        return torch.expm1(d, out=d)
    if divergence == "jsd":
        return torch.sub(torch.nn.functional.softplus(d), _LOG2, out=d).mul_(0.5)
    raise ValueError(f"divergence must be one of {', '.join(D.DIVERGENCES)}; got {divergence!r}")


@dataclass(eq=False)
class DivergenceLoss:
    """The top-k distillation loss: ``loss`` (scalar, differentiable), ``per_token`` [B, T] (detached), ``stats``."""

    loss: torch.Tensor
    per_token: torch.Tensor
    stats: dict[str, float] = field(default_factory=dict)


def _tail(logp: torch.Tensor) -> torch.Tensor:
    """log(1 - sum exp(logp)) over the last dim: the tail bucket's log-prob, floored so it stays finite."""
    lse = torch.logsumexp(logp, -1, keepdim=True)
    tiny = torch.finfo(logp.dtype).tiny
    return torch.log((-torch.expm1(lse.clamp(max=0.0))).clamp_min(tiny * 1e6))


def topk_divergence(
    student_topk_logprobs: torch.Tensor,
    teacher_topk_logprobs: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    divergence: str = D.OPD_DIVERGENCE,
    top_k: int | None = None,
    tail: bool = True,
) -> DivergenceLoss:
    """Divergence between student and teacher over the teacher's top-k support (plus a tail bucket).

    ``student_topk_logprobs`` [B, T, K]: the student's log-softmax gathered at the teacher's top-k
    token ids (keep its graph); ``teacher_topk_logprobs`` [B, T, K]: the teacher's log-probs of
    those ids. When K > ``top_k`` the teacher's ``top_k`` most likely ids are kept. ``tail=False``
    renormalizes both over the support instead of adding the tail category. The loss is the mean
    over the masked positions; masked positions may hold anything (never leak into loss or grad).
    """
    s, t = student_topk_logprobs, teacher_topk_logprobs
    if s.dim() != 3 or s.shape != t.shape:
        raise ValueError(
            "student_topk_logprobs and teacher_topk_logprobs must both be [B, T, K] with the same shape; got "
            f"{list(s.shape)} and {list(t.shape)}"
        )
    if divergence not in D.DIVERGENCES:
        raise ValueError(f"divergence must be one of {', '.join(D.DIVERGENCES)}; got {divergence!r}")
    if not s.is_floating_point():
        raise ValueError("student_topk_logprobs must be a floating tensor")
    if s.dtype not in (torch.float32, torch.float64):
        s = s.float()
    t = t.to(s.dtype).detach()
    B, T, K = s.shape
    if mask is None:
        mask = torch.ones(B, T, dtype=torch.bool, device=s.device)
    mask = mask.to(device=s.device, dtype=torch.bool)
    if mask.shape != (B, T):
        raise ValueError(f"mask must be [B, T] = [{B}, {T}], got {list(mask.shape)}")
    if top_k is not None and K > top_k:
        idx = t.topk(top_k, dim=-1).indices
        s, t = s.gather(-1, idx), t.gather(-1, idx)
    m3 = mask[..., None]
    zero = torch.zeros((), dtype=s.dtype, device=s.device)
    s = torch.where(m3, s, torch.full((), -1.0, dtype=s.dtype, device=s.device) - math.log(s.shape[-1] + 1))
    t = torch.where(m3, t, torch.full((), -1.0, dtype=s.dtype, device=s.device) - math.log(s.shape[-1] + 1))
    with torch.no_grad():
        for name, x in (("student", s), ("teacher", t)):
            bad = ~torch.isfinite(x) | (x > 1e-6)
            if bool(bad.any()):
                i, j, k = (int(v) for v in torch.nonzero(bad)[0].tolist())
                raise ValueError(
                    f"trajectory {i}, token {j}: {name} top-k log-prob [{k}] is {float(x[i, j, k])!r}; log-probs must "
                    "be finite and <= 0"
                )
            excess = torch.logsumexp(x, -1)
            if bool((excess > 1e-4).any()):
                i, j = (int(v) for v in torch.nonzero(excess > 1e-4)[0].tolist())
                raise ValueError(
                    f"trajectory {i}, token {j}: the {name}'s top-k probabilities sum to {math.exp(float(excess[i, j])):.4f} > 1; "
                    "pass log-softmax outputs gathered at the teacher's top-k ids"
                )
    if tail:
        S = torch.cat([s, _tail(s)], -1)
        Tt = torch.cat([t, _tail(t)], -1)
    else:
        S = torch.log_softmax(s, -1)
        Tt = torch.log_softmax(t, -1)
    ps = S.exp()
    pt = Tt.exp()
    if divergence == "reverse_kl":
        per = (ps * (S - Tt)).sum(-1)
    elif divergence == "forward_kl":
        per = (pt * (Tt - S)).sum(-1)
    else:
        Mx = torch.logsumexp(torch.stack([S, Tt]), 0) - _LOG2
        per = 0.5 * (ps * (S - Mx)).sum(-1) + 0.5 * (pt * (Tt - Mx)).sum(-1)
    per = torch.where(mask, per, zero)
    n = mask.sum().clamp_min(1)
    loss = per.sum() / n
    with torch.no_grad():
        cover = torch.where(mask, torch.logsumexp(t, -1).exp(), zero).sum() / n
        stats = {
            "divergence": float(loss.detach()),
            "teacher_mass_on_support": float(cover),
            "tokens": float(mask.sum()),
        }
    return DivergenceLoss(loss=loss, per_token=per.detach(), stats=stats)
