"""The scalars the trainers log, per step, under one set of names: read beside the rollouts (entropy, KL, TRL's
cut-off share), or alone where no rollouts were kept.

- TRL: `trainer_state.json` `log_history` (trl/trainer/grpo_trainer.py `_metrics`: `reward`,
  `frac_reward_zero_std`, `completions/clipped_ratio`, `completions/mean_length`, `entropy`, `kl`).
- verl: the file logger's `{"step": N, "data": {...}}` lines (verl/utils/tracking.py): `critic/score/mean`,
  `response_length/mean`, `response_length/clip_ratio`, `actor/entropy`, `actor/ppo_kl`.
- prime-rl: `metrics.jsonl` (src/prime_rl/monitors/file.py): `.../reward/mean`, `.../solved_all|none|some`
  (0/1 rewards only, prime-rl #3566), `.../is_truncated/mean`, `.../num_output_tokens/mean`.
- NeMo-RL: `baseline_reward/pct_0|pct_1|pct_mixed` where a metrics log holds them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson

from .rollouts import complete_lines

# our name -> the trainers' keys (a key ending a longer name matches too: prime-rl prefixes train/agg/all/<agent>/)
NAMES: dict[str, tuple[str, ...]] = {
    "reward": ("reward", "critic/score/mean", "reward/mean"),
    "zero_std_share": ("frac_reward_zero_std",),
    "split_share": ("solved_some", "baseline_reward/pct_mixed"),
    "all_pass_share": ("solved_all", "baseline_reward/pct_1"),
    "all_fail_share": ("solved_none", "baseline_reward/pct_0"),
    "cut_off_share": ("completions/clipped_ratio", "response_length/clip_ratio", "is_truncated/mean"),
    "length_tokens": ("completions/mean_length", "response_length/mean", "num_output_tokens/mean"),
    "entropy": ("entropy", "actor/entropy"),
    "kl": ("kl", "actor/ppo_kl", "actor/kl_loss"),
}
EVAL_PREFIXES = ("eval", "val", "val-core", "val-aux")  # held-out scalars: not the training rollouts


def _ours(key: str) -> str | None:
    """Our name for a trainer's key, or None (held-out scalars are not the training rollouts')."""
    if key.split("/", 1)[0] in EVAL_PREFIXES:
        return None
    return next((ours for ours, theirs in NAMES.items() if any(key == t or key.endswith("/" + t) for t in theirs)),
                None)


def _pick(row: dict[str, Any], names: dict[str, str | None]) -> dict[str, float]:
    """The row's scalars under our names (`names` remembers each key's: a log repeats its keys every line)."""
    out: dict[str, float] = {}
    for key, value in row.items():
        ours = names[key] if key in names else names.setdefault(key, _ours(key))
        if ours is None or ours in out or type(value) not in (int, float) or not math.isfinite(value):
            continue
        out[ours] = float(value)
    return out


def read_metrics(path: Path) -> tuple[str, dict[int, dict[str, float]]]:
    """(whose log, {step: {our name: value}}); a half-written last line is left for the next read."""
    if path.name == "trainer_state.json":
        try:
            state = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:  # TRL rewrites it at each save: caught mid-write
            return "trl", {}
        rows = [r for r in state.get("log_history", []) if isinstance(r, dict) and isinstance(r.get("step"), int)]
        names: dict[str, str | None] = {}
        return "trl", {r["step"]: m for r in rows if (m := _pick(r, names))}
    lines, _ = complete_lines(path.read_bytes())
    out: dict[int, dict[str, float]] = {}
    whose, names = "prime-rl", {}
    for line in lines:
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(row, dict) or not isinstance(row.get("step"), int):
            continue
        if isinstance(row.get("data"), dict):
            whose, row = "verl", {"step": row["step"], **row["data"]}
        if m := _pick(row, names):
            out.setdefault(row["step"], {}).update(m)
    return whose, out


def cannot_judge(names: set[str]) -> list[str]:
    """What a metrics log alone leaves open, by what it holds."""
    out = ["the grader (blank replies that pass, one reply graded both ways, grades that follow length within "
           "groups) and collapse (distinct replies per group) need the replies: turn the rollout dump on (README "
           "\"During training\")"]
    if "split_share" not in names and "zero_std_share" not in names:
        out.append("the band (all-pass, all-fail, split groups): this log holds no group metric")
    elif "split_share" not in names:
        out.append("the band only as TRL's frac_reward_zero_std (the share of groups with zero reward spread; "
                   "all-pass and all-fail are not told apart)")
    if "cut_off_share" not in names:
        out.append("the cut-off share: not logged")
    out.append("cut-off passes (question 1): the log holds no per-reply grade")
    return out
