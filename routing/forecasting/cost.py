"""What a suggested run will cost: rollouts and tokens per step and in total, the share spent on
groups that carry no signal, and for prime-rl the inference / trainer split that implies.

Plain numbers in: group size, prompts per step, steps, each task's chance that a group of that size has
signal (split.posterior_split_chance, or 0/1 from measured groups) and, where the rows carry them, each
task's mean completion tokens. A run samples prompts uniformly from the tasks, so a step's expected token
cost is prompts x k x the mean over tasks of their mean tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pick_a_method.common.errors import InputError


@dataclass(frozen=True)
class RunCost:
    group_size: int
    prompts_per_step: int
    rollouts_per_step: int
    steps: int
    rollouts_total: int
    signal_share: float  # expected share of groups with signal (nonzero advantages)
    no_signal_rollout_share: float
    mean_tokens: float | None = None  # per rollout
    tokens_per_step: float | None = None
    tokens_total: float | None = None
    no_signal_token_share: float | None = None
    trained_tokens_per_step: float | None = None  # after prime-rl's filter_zero_advantages
    inference_gpus: int | None = None
    trainer_gpus: int | None = None
    seconds_per_step: float | None = None  # the busier side's time at that split
    missing: list[str] = field(default_factory=list)


THROUGHPUT_KEYS = ("inference_tokens_per_s_per_gpu", "trainer_tokens_per_s_per_gpu")
GPU_ARGUMENT = ('gpus=<GPUs for the run> and throughput={"inference_tokens_per_s_per_gpu": <vLLM tokens/s per GPU>, '
                '"trainer_tokens_per_s_per_gpu": <trainer tokens/s per GPU>}')
TOKEN_COUNTS = ("token counts (completion_tokens, usage.completion_tokens, num_tokens or response_length on each row, "
                "or map yours through fields={'tokens': ...})")


def split_needs(cost: Any, throughput_given: bool) -> str:
    """Why route gave no inference / trainer split for a run on `gpus`, naming each input still missing: the
    rows' token counts (a step's token cost), route's `throughput`, or, where route sized no grouped run
    (`cost` None), the split itself."""
    if cost is None:
        return "split them yourself with gpus={'inference': <n>, 'trainer': <m>} where one side needs more."
    missing = ["the rows' " + TOKEN_COUNTS] if TOKEN_COUNTS in cost.missing else []
    if not throughput_given:
        missing.append("the throughput argument (vLLM's and the trainer's tokens/s per GPU)")
    if not missing:
        return ""
    return f"for the split that makes a step quickest, route needs {' and '.join(missing)}."


def throughputs(throughput: Mapping[str, float] | None) -> tuple[float | None, float | None]:
    """route's `throughput` argument -> (inference, trainer) tokens per second per GPU; both keys or none."""
    if throughput is None:
        return None, None
    if not isinstance(throughput, Mapping) or set(throughput) != set(THROUGHPUT_KEYS):
        got = sorted(throughput) if isinstance(throughput, Mapping) else repr(throughput)
        raise InputError(f"throughput takes exactly {' and '.join(THROUGHPUT_KEYS)}; got {got}. Fix: {GPU_ARGUMENT}",
                         field="throughput")
    return throughput[THROUGHPUT_KEYS[0]], throughput[THROUGHPUT_KEYS[1]]


def check_gpus(gpus: int | None, throughput: Mapping[str, float] | None) -> None:
    """route's `gpus` and `throughput`, checked before any question is asked (a bad one is never silently unused)."""
    if gpus is not None and (_positive_int("gpus", gpus) < 2):
        raise InputError("gpus is 1; prime-rl puts inference and the trainer on separate GPUs: give 2 or more",
                         field="gpus")
    for name, v in zip(THROUGHPUT_KEYS, throughputs(throughput)):
        if v is not None and (isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0)):
            raise InputError(f"throughput[{name!r}] is {v!r}; give tokens per second per GPU, above 0",
                             field="throughput")


def split_gpus(gpus: int, inference_seconds: float, trainer_seconds: float) -> tuple[int, int, float]:
    """The whole-GPU split of `gpus` that makes a step quickest: prime-rl runs inference and the trainer one step
    overlapped, so a step takes the longer of the two sides (each side's GPU-seconds over its GPUs); ties go to the
    split nearest the proportional one, then to more inference GPUs. Returns (inference, trainer, seconds)."""
    share = gpus * inference_seconds / (inference_seconds + trainer_seconds)
    best = min(range(1, gpus), key=lambda i: (max(inference_seconds / i, trainer_seconds / (gpus - i)),
                                              abs(i - share), -i))
    return best, gpus - best, max(inference_seconds / best, trainer_seconds / (gpus - best))


def _positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} is {value!r}; give a whole number of 1 or more", field=name)
    return int(value)


def run_cost(*, group_size: int, prompts_per_step: int, steps: int, signal_chance: np.ndarray,
             tokens: np.ndarray | None = None, gpus: int | None = None,
             inference_tokens_per_gpu_s: float | None = None,
             trainer_tokens_per_gpu_s: float | None = None) -> RunCost:
    """The cost of `steps` steps of `prompts_per_step` prompts x `group_size` rollouts.

    signal_chance: per task, the chance a group has signal. tokens: per task, mean completion tokens (NaN where
    a task has none). prime-rl drops zero-advantage tokens before the trainer (orchestrator.train.
    filter_zero_advantages, default true), so the trainer sees only the signal groups' tokens while inference
    samples all of them; with `gpus` and both per-GPU token throughputs, the split that makes a step quickest
    (split_gpus)."""
    k = _positive_int("group_size", group_size)
    prompts = _positive_int("prompts_per_step", prompts_per_step)
    steps = _positive_int("steps", steps)
    chance = np.asarray(signal_chance, dtype=np.float64).reshape(-1)
    if len(chance) == 0 or not np.all((chance >= 0) & (chance <= 1)):
        raise InputError("signal_chance must hold one chance in [0, 1] per task", field="signal_chance")
    share = float(chance.mean())
    rollouts = prompts * k
    missing = []
    out = dict(group_size=k, prompts_per_step=prompts, rollouts_per_step=rollouts, steps=steps,
               rollouts_total=rollouts * steps, signal_share=share, no_signal_rollout_share=1.0 - share)
    t = None if tokens is None else np.asarray(tokens, dtype=np.float64).reshape(-1)
    if t is not None and t.shape != chance.shape:
        raise InputError(f"tokens has {len(t)} entries for {len(chance)} tasks", field="tokens")
    known = None if t is None else np.isfinite(t) & (t >= 0)
    if t is None or not known.any():
        missing.append(TOKEN_COUNTS)
        return RunCost(**out, missing=missing)
    mean_tokens = float(t[known].mean())
    tokens_per_step = rollouts * mean_tokens
    no_signal_tokens = float(((1 - chance[known]) * t[known]).sum() / max(t[known].sum(), 1e-300))
    trained = tokens_per_step * (1 - no_signal_tokens)
    out.update(mean_tokens=mean_tokens, tokens_per_step=tokens_per_step, tokens_total=tokens_per_step * steps,
               no_signal_token_share=no_signal_tokens, trained_tokens_per_step=trained)
    if known.sum() < len(t):
        missing.append(f"token counts on {int(len(t) - known.sum())} of {len(t)} tasks (the means use the rest)")
    if gpus is None or inference_tokens_per_gpu_s is None or trainer_tokens_per_gpu_s is None:
        missing.append(f"the GPUs and their throughputs for prime-rl's inference / trainer GPU split: {GPU_ARGUMENT}")
        return RunCost(**out, missing=missing)
    gpus = _positive_int("gpus", gpus)
    if gpus < 2:
        raise InputError("gpus is 1; prime-rl puts inference and the trainer on separate GPUs: give 2 or more",
                         field="gpus")
    for name, v in (("inference_tokens_per_gpu_s", inference_tokens_per_gpu_s),
                    ("trainer_tokens_per_gpu_s", trainer_tokens_per_gpu_s)):
        if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise InputError(f"{name} is {v!r}; give tokens per second per GPU, above 0", field=name)
    infer, train, seconds = split_gpus(gpus, tokens_per_step / inference_tokens_per_gpu_s,
                                       trained / trainer_tokens_per_gpu_s)
    return RunCost(**out, inference_gpus=infer, trainer_gpus=train, seconds_per_step=seconds, missing=missing)
