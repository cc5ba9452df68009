"""One step's rollouts, read as the trainer wrote them: the group each row belongs to, its reward, whether it was cut
off (where the trainer says), and its reply (a hash and a length, as question 0 reads it: readers/replies.py).

Only one step's rows are ever held: each is summarised (summary.py) and dropped.

- verl (`_dump_generations` in verl/trainer/ppo/ray_trainer.py): `{step}.jsonl`, `input`, `output`, `score`,
  `step`; the v1 trainer's `uid` is `{prompt uid}_{session}_{i}` (verl/trainer/ppo/v1/agent_loop_tq.py), the group
  its first part; the legacy trainer writes no group id and `balance_batch` reorders rows, so the group is the
  `input` text.
- TRL `GRPOTrainer(log_completions=True)` (PR #4818, v0.28): `completions_{step:05d}.parquet`, `prompt`,
  `completion`, one column per reward function, `advantage`; groups are consecutive blocks of `num_generations`
  rows (the trainer's own `view(-1, num_generations)` in trl/trainer/grpo_trainer.py).
- prime-rl (src/prime_rl/monitors/file.py): `rollouts/step_{N}/train/all/traces.jsonl`, verifiers' episode records;
  reward = sum of score x weight, cut off = a stop_condition at a cap or the last call's finish_reason "length".
- NeMo-RL (nemo_rl/algorithms/grpo.py): `train_data_step{N}.jsonl`, `content`, `rewards`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import orjson

from ..readers.replies import measure, python_reply

# prime-rl's truncation rule (src/prime_rl/orchestrator: is_truncated): these stop conditions are caps.
PRIME_CAP_STOPS = frozenset(("max_turns", "max_input_tokens", "max_output_tokens", "max_total_tokens",
                             "context_length"))


class NotThisFormat(ValueError):
    """A step file whose rows are not what its name says (a verl name holding other rows, say)."""


@dataclass
class StepRows:
    """One step's rows: group codes 0..G-1, reward (NaN: ungraded), cut off (None: not recorded), the reply."""

    step: int
    group: np.ndarray  # int64
    reward: np.ndarray  # float64
    truncated: np.ndarray | None
    reply_hash: np.ndarray | None
    reply_len: np.ndarray | None
    lines: np.ndarray  # where each row is: the 1-based line (JSONL), the 0-based row (parquet)
    source: str
    group_names: list[str] = field(default_factory=list)  # a group's id, where the trainer names one
    notes: list[str] = field(default_factory=list)
    step_inside: int | None = None  # the step the rows themselves carry, where it differs from the name's

    def __len__(self) -> int:
        return len(self.reward)


def complete_lines(data: bytes) -> tuple[list[bytes], bool]:
    """The whole lines of a file being written (a half-written last line is left for the next read), and whether
    a partial line was left."""
    cut = data.rfind(b"\n")
    partial = cut != len(data) - 1 and bool(data.strip())
    whole = data[: cut + 1] if cut >= 0 else b""
    return [line for line in whole.split(b"\n") if line.strip()], partial


def _objects(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    lines, _ = complete_lines(path.read_bytes())
    out, at = [], []
    for n, line in enumerate(lines, start=1):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise NotThisFormat(f"line {n} is not JSON") from None
        if isinstance(value, dict):
            out.append(value)
            at.append(n)
    return out, at


def _codes(keys: list[Any]) -> tuple[np.ndarray, list[str]]:
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(k, len(index)) for k in keys), dtype=np.int64, count=len(keys))
    return codes, [str(k) for k in index]


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return float("nan")


def read_verl(path: Path, step: int) -> StepRows:
    rows, at = _objects(path)
    if rows and not all(k in rows[0] for k in ("output", "score")):
        raise NotThisFormat(f"its rows have no `output` and `score` (keys: {', '.join(list(rows[0])[:8])})")
    uid = [r.get("uid") for r in rows]
    names: list[str] = []
    if rows and all(isinstance(u, str) and u.count("_") >= 2 for u in uid):
        group, names = _codes([u.rsplit("_", 2)[0] for u in uid])
    else:  # the legacy trainer: the prompt text is the group (balance_batch reordered the rows)
        group, _ = _codes([hash(r.get("input")) if isinstance(r.get("input"), str) else i for i, r in enumerate(rows)])
    hashes, lengths = measure((python_reply(r.get("output")) for r in rows), len(rows))
    inside = {r.get("step") for r in rows if isinstance(r.get("step"), int)}
    out = StepRows(step, group, np.array([_number(r.get("score")) for r in rows]), None, hashes, lengths,
                   np.array(at, dtype=np.int64), str(path), names)
    if inside and inside != {step}:
        out.step_inside = min(inside)
    return out


def trl_group_size(prompts: list[Any], given: int | None) -> int:
    """num_generations: given, or read off the prompts (TRL repeats each prompt num_generations times in a row,
    trl RepeatSampler): the greatest common divisor of the runs of one prompt."""
    if given:
        return given
    runs, size = [], 1
    for a, b in zip(prompts, prompts[1:]):
        if a == b:
            size += 1
        else:
            runs.append(size)
            size = 1
    runs.append(size)
    return int(np.gcd.reduce(np.array(runs))) if prompts else 1


# TRL's own columns beside the reward functions' (grpo_trainer.py _log_completions)
TRL_COLUMNS = frozenset(("step", "prompt", "completion", "advantage", "image", "images"))


def read_trl(path: Path, step: int, group_size: int | None = None) -> StepRows:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 -- pyarrow raises several kinds for a file still being written
        raise NotThisFormat(f"not a whole parquet file yet ({type(e).__name__})") from None
    names = set(table.column_names)
    if not {"prompt", "completion"} <= names:
        raise NotThisFormat(f"no `prompt` and `completion` columns (columns: {', '.join(sorted(names)[:8])})")
    import pyarrow.types as pt

    rewards = [c for c in table.column_names if c not in TRL_COLUMNS
               and (pt.is_floating(table.schema.field(c).type) or pt.is_integer(table.schema.field(c).type))]
    n = table.num_rows
    reward = np.zeros(n)
    for c in rewards:  # TRL sums the functions' rewards (nansum; reward_weights 1 unless set: said in the notes)
        reward += np.nan_to_num(table.column(c).to_numpy(zero_copy_only=False).astype(np.float64))
    if not rewards:
        reward[:] = np.nan
    prompts = [orjson.dumps(p) if not isinstance(p, str) else p for p in table.column("prompt").to_pylist()]
    k = trl_group_size(prompts, group_size)
    group = np.arange(n, dtype=np.int64) // max(k, 1)
    hashes, lengths = measure((python_reply(c) for c in table.column("completion").to_pylist()), n)
    out = StepRows(step, group, reward, None, hashes, lengths, np.arange(n, dtype=np.int64), str(path))
    if len(rewards) > 1:
        out.notes.append(f"reward = the sum of TRL's reward columns ({', '.join(rewards)}); with reward_weights set, "
                         f"TRL weighs them")
    if n % max(k, 1):
        out.notes.append(f"{n} rows do not split into groups of {k}")
    return out


def _prime_reward(record: dict[str, Any]) -> float:
    total, seen = 0.0, False
    for trace in record.get("traces") or []:
        for value in ((trace or {}).get("rewards") or {}).values():
            if isinstance(value, dict) and isinstance(value.get("score"), (int, float)):
                weight = value.get("weight", 1.0)
                total += float(value["score"]) * float(weight if isinstance(weight, (int, float)) else 1.0)
                seen = True
    return total if seen else float("nan")


def _prime_cut(record: dict[str, Any]) -> bool:
    if record.get("stop_condition") in PRIME_CAP_STOPS:
        return True
    traces = record.get("traces") or []
    calls = (traces[-1] or {}).get("calls") or [] if traces else []
    return bool(calls) and isinstance(calls[-1], dict) and calls[-1].get("finish_reason") == "length"


def _prime_reply(record: dict[str, Any]) -> Any:
    traces = [t for t in record.get("traces") or [] if isinstance(t, dict)]
    trainable = [t for t in traces if (t.get("agent") or {}).get("trainable", True)] or traces
    return python_reply(trainable[-1].get("nodes")) if trainable else None


def read_prime(path: Path, step: int) -> StepRows:
    rows, at = _objects(path)
    if rows and "traces" not in rows[0]:
        raise NotThisFormat(f"its rows are not verifiers episode records (keys: {', '.join(list(rows[0])[:8])})")
    keys = [((r.get("group") or {}).get("id") if isinstance(r.get("group"), dict) else None) for r in rows]
    keys = [k if k is not None else f"row {i}" for i, k in enumerate(keys)]
    group, names = _codes(keys)
    hashes, lengths = measure((_prime_reply(r) for r in rows), len(rows))
    return StepRows(step, group, np.array([_prime_reward(r) for r in rows]), np.array([_prime_cut(r) for r in rows],
                    dtype=bool), hashes, lengths, np.array(at, dtype=np.int64), str(path), names)


def _nemo_prompt_reply(content: Any) -> tuple[Any, Any]:
    """A message log: the messages before the last assistant turn (the prompt) and that turn (the reply)."""
    if isinstance(content, list) and content and all(isinstance(m, dict) for m in content):
        last = max((i for i, m in enumerate(content) if m.get("role") == "assistant"), default=len(content))
        return orjson.dumps(content[:last]), python_reply(content[last:] or [])
    return None, content if isinstance(content, str) else None


def read_nemo(path: Path, step: int, group_size: int | None = None) -> StepRows:
    rows, at = _objects(path)
    if rows and "rewards" not in rows[0]:
        raise NotThisFormat(f"its rows have no `rewards` (keys: {', '.join(list(rows[0])[:8])})")
    pairs = [_nemo_prompt_reply(r.get("content")) for r in rows]
    out_notes = []
    if group_size:
        group = np.arange(len(rows), dtype=np.int64) // group_size
    elif all(p is not None for p, _ in pairs):
        group, _ = _codes([p for p, _ in pairs])
    else:
        group = np.arange(len(rows), dtype=np.int64)
        out_notes.append("NeMo-RL's `content` is text here, so the prompt is unknown: pass group_size "
                         "(num_generations_per_prompt) to read the band")
    hashes, lengths = measure((r for _, r in pairs), len(rows))
    reward = np.array([_number(r.get("rewards")[0] if isinstance(r.get("rewards"), list) and r.get("rewards")
                               else r.get("rewards")) for r in rows])
    out = StepRows(step, group, reward, None, hashes, lengths, np.array(at, dtype=np.int64), str(path))
    out.notes.extend(out_notes)
    return out


READERS: dict[str, Callable[..., StepRows]] = {"verl": read_verl, "trl": read_trl, "prime-rl": read_prime,
                                               "nemo-rl": read_nemo}
