"""verifiers' `vf-eval -s` output.

0.3: `results.jsonl`, one rollout a line (`example_id`, `prompt`/`completion` message lists, `reward`,
`is_truncated`, `metrics`, `stop_condition`), beside `metadata.json` (`model`, `rollouts_per_example`,
`avg_reward`, `pass_threshold`). The rows carry no model: the sidecar names it.

0.4: `traces.jsonl`, one episode a line: the task under `task.data.id`, each trace's rewards under
`traces.<i>.rewards.<name>.score`, its model calls under `traces.<i>.calls` (`model`, `finish_reason`).

The token cap: 0.3's `metadata.json` `sampling_args.max_tokens`, 0.4's `configs/resolved/eval.json`
`sampling.max_tokens` beside the traces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import fields as F
from ..rows import GradedRows, with_model
from .base import (Format, Probe, ReadArgs, disagreement, graded_mean, load_json, merged, other_graders, read_plain,
                   scorer_note, with_cap)

V03_FIELDS = {"task_id": "example_id", "tokens": "token_usage.output_tokens", "completion": "completion"}
# Metrics verifiers 0.3's environments add beside the rubric's reward functions (multiturn_env.py num_turns,
# tool_env.py total_tool_calls and <tool>_calls, the sandboxes' *_time): counts and timings, not grades.
V03_MONITORS = ("num_turns", "total_tool_calls")
V03_MONITOR_ENDS = ("_calls", "_time")


# -- 0.3 ---------------------------------------------------------------------------------------------------------

def _sniff_v03(probe: Probe) -> bool:
    first = probe.first or {}
    return "example_id" in first and ("reward" in first or "metrics" in first) and (
        "prompt" in first or "completion" in first)


def _is_metadata(probe: Probe) -> bool:
    head = probe.head.lstrip()
    return head[:1] == b"{" and b'"rollouts_per_example"' in head and b'"avg_reward"' in head


def _v03_graders(first: dict[str, Any]) -> dict[str, str]:
    """The rubric's reward functions, under `metrics` (the reward is their weighted sum; question 0 compares each)."""
    metrics = first.get("metrics")
    names = [n for n in metrics if isinstance(n, str)] if isinstance(metrics, dict) else []
    return {n: f"metrics.{n}" for n in names if n not in V03_MONITORS and not n.endswith(V03_MONITOR_ENDS)}


def _read_v03(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    graders = _v03_graders(probe.first or {})
    # a grade column beside the reward (0.3.1 writes `correct`): read, so that one saying what the reward says is
    # not reported as a grade left unread (fields.field_notes), and one that differs is compared by question 0
    top = {g: g if g not in graders else f"{g} (beside metrics)" for g in F.GRADE_NAMES
           if g in (probe.first or {}) and g != args.fields.get("reward")}
    rows = read_plain(p, "jsonl", args, merged(V03_FIELDS, args), {**graders, **{n: g for g, n in top.items()}})
    for g, name in top.items():
        if name in rows.graders and np.array_equal(rows.graders[name], rows.reward, equal_nan=True):
            rows.notes[:] = [n for n in rows.notes if not n.startswith(f"rows also carry `{g}`")]
            del rows.graders[name]
    _reward_functions(rows)
    meta = load_json(p.parent / "metadata.json", args)
    if isinstance(meta, dict):
        model = meta.get("model")
        if isinstance(model, str) and model:
            rows = with_model(rows, model)
        env = meta.get("env_id") or meta.get("env")  # the environment: `after` never pairs two of them
        if isinstance(env, str) and env:
            rows.suites.append(env)
        sampling = meta.get("sampling_args")  # vf-eval -t: the cap every request was sent with
        if isinstance(sampling, dict):
            rows = with_cap(rows, sampling.get("max_tokens"))
        if "reward" not in args.fields:
            rows.notes.extend(disagreement("vf-eval", "avg_reward", _number(meta.get("avg_reward")),
                                           graded_mean(rows)))
        threshold = _number(meta.get("pass_threshold"))
        graded = rows.reward[rows.reward == rows.reward]
        differs = threshold is not None and bool(((graded >= threshold) != (graded >= 1.0)).any())
        if differs:  # only where some reward passes at one threshold and fails at the other
            rows.notes.append(f"vf-eval counted a pass at reward >= {threshold:g} (metadata.json pass_threshold); "
                              f"pass pass_threshold={threshold:g} to read passes the same way")
    else:
        rows.notes.append(f"no metadata.json beside {p.name}: the model that sampled the rows is not named; pass the "
                          f"run folder, or name the model")
    rows.formats.append("verifiers 0.3 results")
    return rows


def _reward_functions(rows: GradedRows) -> None:
    """The reward is the rubric's weighted sum of its functions: a function equal to it on every row is the reward
    itself (not another grader), and a judge rubric's function (by its name) is the judge of whatever it grades; a
    judge field (`judge_response`) then names that same judge."""
    judges = [n for n in rows.graders if "judge" in n.casefold()]
    if judges:
        rows.judged_by.pop("reward", None)
    for name in list(rows.graders):
        same = np.array_equal(rows.graders[name], rows.reward, equal_nan=True)
        if name in judges:
            rows.judged_by["reward" if same else name] = f"verifiers reward function `{name}` (a judge rubric's)"
        if same:
            del rows.graders[name]


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# -- 0.4 ---------------------------------------------------------------------------------------------------------

def _sniff_v04(probe: Probe) -> bool:
    first = probe.first or {}
    return isinstance(first.get("traces"), list) and isinstance(first.get("task"), dict)


def _reward_names(first: dict[str, Any]) -> list[str]:
    traces = first.get("traces") or []
    rewards = traces[0].get("rewards") if traces and isinstance(traces[0], dict) else None
    return list(rewards) if isinstance(rewards, dict) else []


def _v04_fields(first: dict[str, Any]) -> dict[str, str]:
    task = first.get("task") or {}
    data = task.get("data") if isinstance(task.get("data"), dict) else {}
    task_path = "task.data.id" if "id" in data else ("task.id" if "id" in task else "task.data.example_id")
    out = {"task_id": task_path, "truncated": "traces.0.calls.-1.finish_reason", "model": "traces.0.calls.0.model",
           "tokens": "traces.0.calls.-1.usage.completion_tokens", "completion": "traces.0.nodes"}
    names = _reward_names(first)
    if names:
        out["reward"] = f"traces.0.rewards.{names[0]}.score"
    return out


def _read_v04(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    first = probe.first or {}
    names = _reward_names(first)
    picked = args.fields.get("reward", f"traces.0.rewards.{names[0]}.score" if names else None)
    graders = {n: path for n, path in other_graders(names, None, lambda n: f"traces.0.rewards.{n}.score").items()
               if path != picked}
    rows = read_plain(p, "jsonl", args, merged(_v04_fields(first), args), graders)
    if names and "reward" not in args.fields:
        rows.notes.extend(scorer_note("reward", names, names[0], lambda n: f"traces.0.rewards.{n}.score", args.fields))
    config = load_json(p.parent / "configs" / "resolved" / "eval.json", args)  # the run's resolved config
    sampling = config.get("sampling") if isinstance(config, dict) else None
    if isinstance(sampling, dict):  # vf-eval --sampling.max-tokens
        rows = with_cap(rows, sampling.get("max_tokens"))
    if len(first.get("traces") or []) > 1:
        rows.notes.append(f"episodes hold {len(first['traces'])} traces; the first trace of each is read (a numeric "
                          f"part of a fields path picks another, e.g. traces.1.rewards.<name>.score)")
    rows.formats.append("verifiers 0.4 traces")
    return rows


FORMATS = (
    Format(name="verifiers 0.4 traces", tool="verifiers 0.4 (vf-eval -s: traces.jsonl)", sniff=_sniff_v04,
           read=_read_v04, keys=("task", "traces")),
    Format(name="verifiers 0.3 results", tool="verifiers 0.3 (vf-eval -s: results.jsonl + metadata.json)",
           sniff=_sniff_v03, read=_read_v03, sidecar=_is_metadata,
           keys=("example_id", "prompt", "completion", "reward", "is_truncated")),
)
