"""Trajectory dicts -> one ``Batch``: read once, checked field by field, padded to the longest.

A trajectory is a mapping with these fields (only ``reward`` and ``logprobs`` are required):

=====================  ==========================================================================
``reward``             scalar (terminal) reward; bool is read as 1/0; NaN, inf and None are refused
``logprobs``           log-prob of each generated token under the policy being trained
``behavior_logprobs``  the same tokens' log-probs under the sampler (alias ``token_logprobs``);
                       absent means on-policy (ratio 1)
``values``             critic value per token (SAO, BPCO)
``teacher_logprobs``   the teacher's log-prob of each sampled token (OPD, OPSD)
``action_mask``        False on tokens the environment wrote (alias ``mask``); absent = all True
``group``              which prompt the rollout answered (first present of ``group``, ``group_id``,
                       ``task_id``, ``scenario_id``, ``prompt``), for the grouped methods; the field
                       and the value's kind count (``group=1`` and ``task_id="1"`` are two groups)
``agent``              whose EMA baseline the trajectory uses (rae)
``staleness``          how many policy versions old the trajectory is (alias ``lag``), for Async
=====================  ==========================================================================

Every per-token field must have as many entries as ``logprobs``: a list, a numpy array, or a torch
tensor of any float dtype (bf16 included, read exactly; a tensor's grad is never followed). Rewards keep
their precision (float32, or float64 when asked), never the half dtype of the log-probs. Other keys
are kept in ``info``.
This module imports torch only inside functions.
"""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from pick_a_method.methods.batch import Batch

TOKEN_FIELDS = ("logprobs", "behavior_logprobs", "values", "teacher_logprobs")
_ALIASES = {"behavior_logprobs": ("behavior_logprobs", "token_logprobs"), "mask": ("action_mask", "mask")}
GROUP_KEYS = ("group", "group_id", "task_id", "scenario_id", "prompt")
_STALENESS_KEYS = ("staleness", "lag")
_SKIP_INFO = set(TOKEN_FIELDS) | {"token_logprobs", "action_mask", "mask"}


def _first_key(traj: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        if key in traj and traj[key] is not None:
            return key
    return None


def _as_row(value: Any, index: int, name: str) -> Any:
    """A per-token field as a 1-D numpy array (or a list the caller copies); errors name the field."""
    if type(value) is list or type(value) is tuple:  # the common case, checked first
        return value
    import numpy as np

    if isinstance(value, (str, bytes)) or isinstance(value, Mapping):
        raise ValueError(f"trajectory {index}: {name} must be a sequence of numbers, got {type(value).__name__}")
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor (it may carry grad, be on a GPU, be bf16)
        value = _tensor_row(value, index, name)
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(f"trajectory {index}: {name} must be one-dimensional, got shape {tuple(value.shape)}")
        if value.dtype.kind not in "fiub" or (value.dtype.kind == "b" and name not in ("action_mask", "mask")):
            raise ValueError(
                f"trajectory {index}: {name} is a numpy array of {value.dtype}; it must hold real numbers"
            )
        return value
    if not isinstance(value, Sequence):
        raise ValueError(f"trajectory {index}: {name} must be a sequence of numbers, got {type(value).__name__}")
    return value


def _tensor_row(value: Any, index: int, name: str) -> Any:
    """A torch tensor field as a numpy array, its values exact: bf16 (which numpy cannot hold) and fp16 widen to
    float64; a complex or bool tensor (bool only as a mask) is refused naming the trajectory and the field."""
    import torch

    t = value.detach()
    if t.is_complex() or (t.dtype == torch.bool and name not in ("action_mask", "mask")):
        raise ValueError(f"trajectory {index}: {name} is a {t.dtype} tensor; it must hold real numbers")
    if t.is_floating_point() and t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float64)  # every bf16 / fp16 / fp8 value is exact in float64
    try:
        return t.cpu().numpy()
    except (TypeError, RuntimeError) as exc:
        raise ValueError(
            f"trajectory {index}: {name} is a {t.dtype} tensor that cannot be read as numbers ({exc})"
        ) from None


def _reward_value(r: Any, index: int) -> float:
    """A trajectory's reward as a float, kept at full precision: a number, a bool, or a one-element tensor/array."""
    if isinstance(r, bool):
        return float(r)
    if hasattr(r, "shape") and hasattr(r, "dtype") and not isinstance(r, numbers.Real):  # a tensor or a numpy array
        size = getattr(r, "numel", None)
        n = size() if callable(size) else getattr(r, "size", None)
        if n != 1 or getattr(r, "is_complex", lambda: False)():
            raise ValueError(f"trajectory {index}: reward must be one finite number, got an array of shape "
                             f"{tuple(r.shape)}")
        item = r.detach().to("cpu").double().item() if hasattr(r, "detach") else float(r.reshape(()))
        r = item
    try:
        finite = isinstance(r, numbers.Real) and math.isfinite(float(r))
    except OverflowError:  # an int past 1.8e308
        finite = False
    if not finite:
        raise ValueError(f"trajectory {index}: reward must be a finite number, got {r!r}")
    return float(r)


def _bad_entry(row: Sequence[Any], index: int, name: str) -> ValueError:
    for t, x in enumerate(row):
        if (isinstance(x, bool) and name != "action_mask") or not isinstance(x, numbers.Real):
            return ValueError(f"trajectory {index}: {name}[{t}] must be a number, got {x!r}")
        if abs(float(x)) > 3.4e38 and math.isfinite(float(x)):
            return ValueError(f"trajectory {index}: {name}[{t}] = {x!r} does not fit the batch's float type")
    return ValueError(f"trajectory {index}: {name} must be a sequence of numbers")





def read_trajectories(
    cls: "type[Batch]",
    trajectories: Sequence[Mapping[str, Any]],
    *,
    dtype: "torch.dtype | None" = None,
    device: Any = None,
) -> "Batch":
    """Convert a list of trajectory dicts once, padding to the longest.

    Errors name the trajectory (its index) and the field: a missing or non-finite reward, an
    empty or non-numeric ``logprobs``, a per-token field whose length differs from ``logprobs``.
    """
    import numpy as np
    import torch

    from pick_a_method.methods.batch import reward_dtype

    if isinstance(trajectories, Mapping) or isinstance(trajectories, (str, bytes)):
        raise ValueError("trajectories must be a list of mappings (one per trajectory)")
    trajectories = list(trajectories)
    if not trajectories:
        raise ValueError("the batch is empty: give at least one trajectory")
    dtype = dtype or torch.get_default_dtype()
    np_dtype = {torch.float32: np.float32, torch.float64: np.float64}.get(dtype, np.float32)
    r = _read(trajectories)
    B, T = len(trajectories), int(r.lengths.max())

    def tensor(arr: Any) -> "torch.Tensor":
        return torch.from_numpy(arr).to(device=device, dtype=dtype if arr.dtype.kind == "f" else None)

    logprobs = tensor(_pad(r, "logprobs", np_dtype, T))
    mask_arr = np.arange(T)[None, :] < r.lengths[:, None]
    if r.present["mask"]:
        given = _pad(r, "mask", np.float64, T)
        if len(r.present["mask"]) < B:  # a trajectory without a mask is all action tokens
            unmasked = np.ones(B, dtype=bool)
            unmasked[r.present["mask"]] = False
            given[unmasked] = 1.0
        if np.isnan(given).any():
            bad = np.argwhere(np.isnan(given))[0]
            raise ValueError(f"trajectory {bad[0]}: action_mask[{bad[1]}] is NaN (must be true/false)")
        mask_arr &= given != 0
    missing: dict[str, list[int]] = {}
    optional: dict[str, Any] = {}
    for name in ("behavior_logprobs", "values", "teacher_logprobs"):
        if not r.present[name]:
            continue
        if len(r.present[name]) < B:
            have = set(r.present[name])
            missing[name] = [i for i in range(B) if i not in have]
        arr = _pad(r, name, np_dtype, T)
        if name == "behavior_logprobs" and name in missing:
            # a trajectory without sampler log-probs is read as on-policy: behavior = logprobs
            for i in missing[name]:
                arr[i, : r.lengths[i]] = r.rows["logprobs"][i]
        optional[name] = tensor(arr)

    ids = _group_ids(r.group_keys)
    return cls(
        rewards=torch.from_numpy(r.rewards).to(device=device, dtype=reward_dtype(dtype)),
        logprobs=logprobs,
        mask=torch.from_numpy(mask_arr).to(device),
        lengths=torch.from_numpy(r.lengths).to(device),
        groups=None if ids is None else torch.tensor(ids, dtype=torch.int64).to(device),
        agents=r.agents if r.has_agent else None,
        staleness=torch.from_numpy(r.staleness).to(device) if r.has_staleness else None,
        info=r.info,
        missing=missing,
        **optional,
    )


@dataclass
class _Read:
    """What one pass over the trajectory dicts found: the rewards, each per-token field's rows and which
    trajectories have it, the lengths, the group keys, the agents, the staleness and every other field."""

    rewards: Any
    rows: dict[str, list[Any]]
    present: dict[str, list[int]]
    lengths: Any
    group_keys: list[Any] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    has_agent: bool = False
    staleness: Any = None
    has_staleness: bool = False
    info: list[dict[str, Any]] = field(default_factory=list)


def _read(trajectories: list[Any]) -> _Read:
    """Each trajectory checked and its fields taken, in one pass; errors name the trajectory and the field."""
    import numpy as np

    B = len(trajectories)
    r = _Read(rewards=np.empty(B, dtype=np.float64), rows={name: [None] * B for name in (*TOKEN_FIELDS, "mask")},
              present={name: [] for name in (*TOKEN_FIELDS, "mask")}, lengths=np.empty(B, dtype=np.int64),
              staleness=np.zeros(B, dtype=np.int64))
    for i, traj in enumerate(trajectories):
        if not isinstance(traj, Mapping):
            raise ValueError(
                f"trajectory {i} is a {type(traj).__name__}; each trajectory must be a mapping with "
                "'reward' and 'logprobs'"
            )
        if "reward" not in traj:
            raise ValueError(f"trajectory {i} has no 'reward' (a finite number, or a bool)")
        r.rewards[i] = _reward_value(traj["reward"], i)

        if traj.get("logprobs") is None:
            raise ValueError(f"trajectory {i} has no 'logprobs' (one log-prob per generated token)")
        lp = _as_row(traj["logprobs"], i, "logprobs")
        n = len(lp)
        if n == 0:
            raise ValueError(f"trajectory {i}: logprobs is empty")
        r.lengths[i] = n
        r.rows["logprobs"][i] = lp
        r.present["logprobs"].append(i)
        for name in ("behavior_logprobs", "values", "teacher_logprobs", "mask"):
            key = _first_key(traj, _ALIASES.get(name, (name,)))
            if key is None:
                continue
            row = _as_row(traj[key], i, key)
            if len(row) != n:
                raise ValueError(
                    f"trajectory {i}: {key} has {len(row)} entries but logprobs has {n}; "
                    "every per-token field must have one entry per generated token"
                )
            r.rows[name][i] = row
            r.present[name].append(i)

        gkey = _first_key(traj, GROUP_KEYS)
        r.group_keys.append(None if gkey is None else (gkey, _hashable(traj[gkey])))
        if traj.get("agent") is not None:
            r.has_agent = True
        r.agents.append(str(traj.get("agent", "")) if traj.get("agent") is not None else "")
        skey = _first_key(traj, _STALENESS_KEYS)
        if skey is not None:
            s = traj[skey]
            if isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s) or s < 0:
                raise ValueError(f"trajectory {i}: {skey} must be a number >= 0 (policy versions), got {s!r}")
            r.staleness[i] = int(s)
            r.has_staleness = True
        r.info.append({k: v for k, v in traj.items() if k not in _SKIP_INFO})
    return r


def _pad(r: _Read, name: str, np_type: Any, T: int) -> Any:
    """[B, T] zero-padded array of one field. Lists are packed with struct (about twice as fast as numpy's
    per-element conversion); a non-number raises struct.error and is reported by index."""
    import numpy as np

    B = len(r.lengths)
    code = "f" if np_type == np.float32 else "d"
    itemsize = 4 if code == "f" else 8
    buf = bytearray(B * T * itemsize)
    out = np.frombuffer(buf, dtype=np_type).reshape(B, T)
    label = name if name != "mask" else "action_mask"
    structs: dict[int, struct.Struct] = {}
    for i in r.present[name]:
        row = r.rows[name][i]
        n = int(r.lengths[i])
        if isinstance(row, np.ndarray):
            try:
                out[i, :n] = row
            except (TypeError, ValueError):
                raise _bad_entry(list(row), i, label) from None
            continue
        packer = structs.get(n)
        if packer is None:
            packer = structs[n] = struct.Struct(f"{n}{code}")
        try:
            packer.pack_into(buf, i * T * itemsize, *row)
        except (struct.error, TypeError, OverflowError):
            raise _bad_entry(row, i, label) from None
    return out


def _group_ids(group_keys: list[Any]) -> list[int] | None:
    """Each trajectory's group as a number, or None where no trajectory names one."""
    if not any(k is not None for k in group_keys):
        return None
    if any(k is None for k in group_keys):
        first = next(i for i, k in enumerate(group_keys) if k is None)
        raise ValueError(
            f"trajectory {first} names no group (one of {', '.join(GROUP_KEYS)}) while others do; "
            "give every trajectory the same group field, or none"
        )
    ids: dict[Any, int] = {}
    # a group is its field and its value's kind and value: group=1, task_id="1" and task_id=1 are three groups
    return [ids.setdefault(k, len(ids)) for k in group_keys]


def _hashable(value: Any) -> Any:
    """A group key that keeps the value's kind: ``1`` and ``"1"`` are different groups (a number and a string),
    ``1`` and ``1.0`` the same number; ``True`` is a bool, not the number 1."""
    if value is None or isinstance(value, (str, bool)):
        return (type(value).__name__, value)
    if isinstance(value, numbers.Real):
        return ("number", float(value) if not isinstance(value, int) else value)
    try:
        import json

        return ("json", json.dumps(value, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return ("repr", repr(value))
