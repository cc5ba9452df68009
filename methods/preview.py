"""``preview_update``: run a method's update rule on a logged batch and say what it would keep and why.

The question it answers before a GPU run: are these traces fresh enough to learn from with this
method? It reports, per trajectory and for the batch, what the rule admits, the drift between the
sampler and the current policy (mean per-token Bernoulli KL of the sampled token), the importance
ratios, the method's own statistics and notes, and a verdict with the next step.

torch is imported only when ``preview_update`` is called.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from pick_a_method.methods import defaults as D
from pick_a_method.common.paths import expand_user_path
from pick_a_method.common import jsonl
from pick_a_method.common.config_call import config_call
from pick_a_method.common.methods import ASYNC, FLASH_REINFORCE, METHODS, OPD, PRIME_RL, SAO, method_info
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.common.next_step import NextStep

__all__ = ["preview_update", "read_trajectory_file", "UpdatePreview", "PreviewRow", "NextStep", "MAX_TRAJECTORIES", "MAX_ROWS"]

MAX_TRAJECTORIES = 4096  # trajectories read by default; more are dropped with a warning
MAX_ROWS = 50  # per-trajectory rows returned; the rest are counted in rows_omitted


class PreviewRow(BaseModel):
    """One trajectory as the update rule sees it."""

    index: int
    reward: float
    action_tokens: int
    admitted: bool
    advantage: float = Field(description="mean advantage over the trajectory's action tokens")
    weight: float = Field(description="sum of the trajectory's coefficients: its total push on the policy")
    drift: float | None = Field(None, description="mean per-token Bernoulli KL sampler -> policy; null when on-policy")
    mean_ratio: float | None = Field(None, description="mean importance ratio pi/mu over action tokens")
    kept_share: float | None = Field(None, description="share of action tokens the rule kept (band, clip, correction)")


class UpdatePreview(BaseModel):
    """What an update rule would do with a batch of logged trajectories."""

    method: str
    knobs: dict[str, Any]
    n_trajectories: int
    n_admitted: int
    admitted_share: float
    action_tokens: int
    on_policy: bool = Field(description="true when no trajectory carries behavior_logprobs (every ratio is 1)")
    drift: dict[str, float] | None = Field(
        None, description="per-trajectory drift (mean Bernoulli KL): mean, median, p90, max, share_over_trust"
    )
    ratio: dict[str, float] | None = Field(None, description="token importance ratios: mean, min, max, share outside [0.5, 2]")
    stats: dict[str, float]
    rows: list[PreviewRow]
    rows_omitted: int
    notes: list[str]
    verdict: str = Field(description="ok, too_stale, nothing_admitted, no_signal or off_policy")
    summary: str
    next_step: NextStep
    warnings: list[str]


# ------------------------------------------------------------------------------------------------


PREVIEW_TEACHER = "preview-teacher"  # a stand-in name: the batch carries the teacher's log-probs


def _stand_in_teacher(info: Any, knobs: dict[str, Any]) -> bool:
    """OPD is built with a teacher's name; a preview reads only the batch's teacher_logprobs, so a stand-in name does
    (also for OPD inside Async). Returns whether one was put in."""
    if info is OPD and "teacher" not in knobs:
        knobs["teacher"] = PREVIEW_TEACHER
        return True
    inner = knobs.get("method")
    spec = dict(inner) if isinstance(inner, Mapping) else {"name": inner}
    if info is ASYNC and isinstance(spec["name"], str) and method_info(spec["name"])[0] is OPD and "teacher" not in spec:
        knobs["method"] = {**spec, "teacher": PREVIEW_TEACHER}
        return True
    return False


def read_trajectory_file(path: str, max_trajectories: int = MAX_TRAJECTORIES,
                         max_bytes: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """(trajectories, how many more the file held): JSONL (one object a line) or a JSON array.

    A line that is not a JSON object, or not UTF-8, is refused with its line number; a file over
    ``max_bytes`` is refused before it is read.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a file path string; got {type(path).__name__}")
    path = expand_user_path(path, "path")
    if not os.path.exists(path):
        raise ValueError(f"no such file: {path!s}")
    if os.path.isdir(path):
        raise ValueError(f"{path!s} is a directory; give a JSONL file of trajectories")
    if not os.path.isfile(path):  # a pipe blocks the read forever; /dev/zero is one endless line
        raise ValueError(f"{path!s} is not a regular file (a pipe, socket or device); give a JSONL file of trajectories")
    size = os.path.getsize(path)
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{path!s} is {size:,} bytes, over the cap of {max_bytes:,}; raise it with --max-bytes (or "
                         f"PICK_A_METHOD_MAX_BYTES), or pass fewer trajectories")
    out: list[dict[str, Any]] = []
    extra = 0
    try:
        with open(path, "rb") as fh:
            if jsonl.is_array(fh.read(64)):
                fh.seek(0)
                found = [obj for _, obj in jsonl.array_objects(fh.read())]
                out, extra = found[:max_trajectories], max(0, len(found) - max_trajectories)
            else:
                fh.seek(0)
                for _, obj in jsonl.objects(fh):
                    if len(out) < max_trajectories:
                        out.append(obj)
                    else:
                        extra += 1
    except jsonl.JSONLineError as e:
        where = f"{path!s} line {e.line}" if "array" not in e.reason else str(path)
        raise ValueError(f"{where}: {e.reason.replace('a JSON object', 'a JSON object (one trajectory)', 1)}") from None
    if not out:
        raise ValueError(f"{path!s} holds no trajectories")
    return out, extra


def _quantile(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    if not ys:
        return math.nan
    pos = q * (len(ys) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ys) - 1)
    return ys[lo] + (ys[hi] - ys[lo]) * (pos - lo)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def preview_update(
    method: Any,
    knobs: dict[str, Any] | None = None,
    trajectories: Sequence[Mapping[str, Any]] | None = None,
    path: str | None = None,
    max_trajectories: int = MAX_TRAJECTORIES,
    max_bytes: int | None = None,
) -> UpdatePreview:
    """Run ``method`` (a name such as "FlashReinforce", or a method object) with ``knobs`` on a batch, without training.

    Give the batch inline (``trajectories``: a list of dicts with reward, logprobs and, where logged,
    behavior_logprobs, values, teacher_logprobs, action_mask) or as ``path`` (JSONL). At most
    ``max_trajectories`` are read. rae's baselines are not moved. Errors (``ValueError``) say what to fix.
    """
    import torch

    from pick_a_method.methods.batch import Batch

    warnings: list[str] = []
    trajs = _trajectories(trajectories, path, max_trajectories, max_bytes, warnings)
    obj = _method(method, dict(knobs or {}), warnings)
    batch = Batch.from_trajectories(trajs, dtype=torch.float64)
    kwargs: dict[str, Any] = {"distributed": False}
    if obj.stateful:
        kwargs["commit"] = False
    upd = obj.update(batch, **kwargs)

    B = batch.size
    L = batch.mask.to(torch.float64).sum(1)
    n_adm = upd.n_admitted
    on_policy = batch.behavior_logprobs is None
    drift_rows, ratio_summary, drift_summary = _drift(batch, obj, L)
    rows = _rows(batch, upd, L, drift_rows)
    stats = {k: float(v) for k, v in upd.stats.items() if isinstance(v, (int, float)) and math.isfinite(float(v))}
    verdict, summary, next_step = _judge(obj, upd, stats, drift_summary, n_adm, B, on_policy)
    if B < 8:
        warnings.append(f"only {B} trajectories: batch statistics (baseline, shares) are noisy at this size.")
    return UpdatePreview(
        method=upd.method,
        knobs=obj.knobs(),
        n_trajectories=B,
        n_admitted=n_adm,
        admitted_share=n_adm / B,
        action_tokens=int(L.sum()),
        on_policy=on_policy,
        drift=drift_summary,
        ratio=ratio_summary,
        stats=stats,
        rows=rows,
        rows_omitted=max(0, B - MAX_ROWS),
        notes=list(upd.notes),
        verdict=verdict,
        summary=summary,
        next_step=next_step,
        warnings=warnings,
    )


def _trajectories(trajectories: Any, path: str | None, max_trajectories: Any, max_bytes: int | None,
                  warnings: list[str]) -> list[Any]:
    """The batch's trajectory dicts, inline or from a JSONL file, at most max_trajectories of them (said)."""
    if isinstance(max_trajectories, bool) or not isinstance(max_trajectories, int) or max_trajectories < 1:
        raise ValueError(f"max_trajectories must be an integer >= 1; got {max_trajectories!r}")
    if (trajectories is None) == (path is None):
        raise ValueError("give the batch either inline (trajectories) or as a JSONL file (path), not both and not neither")
    if path is not None:
        trajs, extra = read_trajectory_file(path, max_trajectories, max_bytes)
    else:
        if isinstance(trajectories, (str, bytes, Mapping)) or not isinstance(trajectories, Sequence):
            raise ValueError("trajectories must be a list of objects, one per trajectory")
        trajs = list(trajectories[:max_trajectories])
        extra = max(0, len(trajectories) - max_trajectories)
    if extra:
        warnings.append(f"read the first {len(trajs)} trajectories; {extra} more were left out (max_trajectories).")
    return trajs


def _method(method: Any, knobs: dict[str, Any], warnings: list[str]) -> Any:
    """The method object to preview, from any spelling or an object, with its knobs."""
    from pick_a_method.methods.objects import Method, make_method

    if isinstance(method, Method):
        return make_method(method, **knobs)
    info, inner = method_info(method)
    if not info.rule:  # a trainer's own method (SFT, DPO): nothing here to preview
        raise ValueError(f"unknown method {method!r} for an update rule: {info.label} has none here; preview "
                         f"one of {', '.join(m.name for m in METHODS.values() if m.rule)}")
    if inner is not None:  # "async opd": Async with the inner method as its knob
        knobs.setdefault("method", inner.name)
    if _stand_in_teacher(info, knobs):
        warnings.append("no teacher named: a preview reads only the batch's teacher_logprobs, so none is needed.")
    return make_method(info.name, **knobs)


def _drift(batch: Any, obj: Any, L: Any) -> tuple[list[float] | None, dict | None, dict | None]:
    """(each row's drift from its sampler, the ratio's summary, the drift's summary); None for on-policy rows."""
    import torch

    from pick_a_method.methods.rules.single_rollout import bernoulli_kl

    mask, blp = batch.mask, batch.behavior_logprobs
    if blp is None:
        return None, None, None
    zero = torch.zeros((), dtype=torch.float64)
    kl = torch.where(mask, bernoulli_kl(torch.where(mask, blp, zero), torch.where(mask, batch.logprobs, zero)), zero)
    drift_t = kl.sum(1) / L
    drift_rows = drift_t.tolist()
    rv = torch.where(mask, batch.logprobs - blp, zero).clamp(-30, 30).exp()[mask]
    ratio_summary = {"mean": float(rv.mean()), "min": float(rv.min()), "max": float(rv.max()),
                     "share_outside_0.5_2": float(((rv < 0.5) | (rv > 2.0)).double().mean())}
    trust = float(getattr(obj, "trust", D.FLASH_REINFORCE_TRUST))
    drift_summary = {"mean": float(drift_t.mean()), "median": _quantile(drift_rows, 0.5),
                     "p90": _quantile(drift_rows, 0.9), "max": float(drift_t.max()), "trust": trust,
                     "share_over_trust": float((drift_t > trust).double().mean())}
    return drift_rows, ratio_summary, drift_summary


def _rows(batch: Any, upd: Any, L: Any, drift_rows: list[float] | None) -> list[PreviewRow]:
    """The first MAX_ROWS trajectories, each with what the rule made of it."""
    import torch

    mask, blp = batch.mask, batch.behavior_logprobs
    zero = torch.zeros((), dtype=torch.float64)
    adv_rows = (torch.where(mask, upd.advantages.to(torch.float64), zero).sum(1) / L).tolist()
    weight_rows = upd.coefficients.to(torch.float64).sum(1).tolist()
    ratio_rows = upd.row_stats.get("mean_ratio")
    kept_rows = upd.row_stats.get("kept_share")
    if kept_rows is None and "clipped_share" in upd.row_stats:
        kept_rows = 1.0 - upd.row_stats["clipped_share"]
    if ratio_rows is None and blp is not None:
        ratio_rows = torch.where(mask, (batch.logprobs - blp).clamp(-30, 30).exp(), zero).sum(1) / L
    rewards, admitted = batch.rewards.tolist(), upd.admitted.tolist()
    return [PreviewRow(index=i, reward=rewards[i], action_tokens=int(L[i]), admitted=bool(admitted[i]),
                       advantage=adv_rows[i], weight=weight_rows[i],
                       drift=None if drift_rows is None else drift_rows[i],
                       mean_ratio=None if ratio_rows is None else _finite(float(ratio_rows[i])),
                       kept_share=None if kept_rows is None else _finite(float(kept_rows[i])))
            for i in range(min(batch.size, MAX_ROWS))]


def _judge(
    obj: Any,
    upd: Any,
    stats: dict[str, float],
    drift: dict[str, float] | None,
    n_adm: int,
    B: int,
    on_policy: bool,
) -> tuple[str, str, NextStep]:
    label = type(obj).__name__
    moved = bool((upd.coefficients != 0).any())
    share = n_adm / B
    drift_text = "" if drift is None else f"; mean drift {drift['mean']:.3g} (max {drift['max']:.3g})"

    # how much of the batch this rule threw away for staleness
    lost = max(1.0 - share, stats.get("masked_token_share", 0.0))  # SAO, BPCO, Async also mask tokens

    if n_adm == 0:
        step = _stale_step(obj, drift)
        return (
            "nothing_admitted",
            f"{label} would admit none of the {B} trajectories{drift_text}: this batch moves nothing.",
            step,
        )
    if not on_policy and lost >= D.PREVIEW_STALE_SHARE and obj.off_policy_guard:
        step = _stale_step(obj, drift)
        return (
            "too_stale",
            f"{label} would lose {lost:.0%} of this batch to its off-policy guard{drift_text}: the traces are too "
            "stale to learn much from.",
            step,
        )
    if (
        not on_policy
        and obj.name in ASYNC.wraps  # no importance correction of its own, and Async can add one
        and drift is not None
        and drift["share_over_trust"] >= D.PREVIEW_OFF_POLICY_SHARE
    ):
        return (
            "off_policy",
            f"these traces were not sampled by the current policy{drift_text}, and {label} applies no importance "
            "correction on its own.",
            NextStep(
                tool="preview_update",
                arguments={"method": ASYNC.label, "knobs": {"method": obj.name, "correction": "icepop"}},
                why=f"wrap {label} in Async so stale tokens are reweighted or masked, and preview that instead.",
            ),
        )
    if not moved:
        return (
            "no_signal",
            f"{label} admits {n_adm} of {B} trajectories but every coefficient is 0 (every advantage is 0): "
            "the rewards do not split.",
            NextStep(
                tool="band",
                arguments={},
                why="check the pass-rate band of these tasks: train on tasks the model passes 20-80% of the time.",
            ),
        )
    prime_rl = TRAINERS[PRIME_RL]
    if prime_rl.name in obj.info.trainers and prime_rl.name in getattr(obj, "inner", obj).info.trainers:
        step = config_call(prime_rl, obj.name, taskset=None, model=None, knobs=obj.knobs() if obj.info is ASYNC else None,
                           why=f"{label} runs in prime-rl: write its config.")
    else:
        step = NextStep(
            tool=None,
            arguments={},
            why=f"call {label}().update(batch) in your own trainer and minimise update.loss(logprobs); prime-rl cannot run {label}.",
        )
    return (
        "ok",
        f"{label} would admit {n_adm} of {B} trajectories ({share:.0%}){drift_text}.",
        step,
    )


def _looser_trust(obj: Any, drift: dict[str, float] | None) -> NextStep | None:
    median = drift["median"] if drift is not None else 0.0
    if not (median > 0 and math.isfinite(median)):
        return None
    trust = float(f"{median * 1.5:.2g}")
    return NextStep(
        tool="preview_update",
        arguments={"method": FLASH_REINFORCE.label, "knobs": {"trust": trust}},
        why=(
            f"resample with a smaller policy lag, or see what trust={trust:g} (1.5 times the batch's median drift) "
            "would admit; a trust far above the paper's 1e-3..1e-2 trades bias for data."
        ),
    )


def _wider_band(obj: Any, drift: dict[str, float] | None) -> NextStep:
    return NextStep(
        tool="preview_update",
        arguments={"method": SAO.label, "knobs": {"ratio": list(D.SAO_RATIO_CODING)}},
        why="resample with a smaller policy lag, or preview the wider coding band (0.2, 4.0).",
    )


# What to preview next when a method's guard throws most of a batch away: a looser setting of that guard.
_LOOSER = {FLASH_REINFORCE: _looser_trust, SAO: _wider_band}


def _stale_step(obj: Any, drift: dict[str, float] | None) -> NextStep:
    looser = _LOOSER.get(obj.info)
    step = looser(obj, drift) if looser else None
    if step is not None:
        return step
    return NextStep(
        tool=None,
        arguments={},
        why="resample these prompts with the current policy (or lower the off-policy lag): the logged traces are too far from it.",
    )
