"""verifiers' `vf-eval -s` output.

0.3: `results.jsonl`, one rollout a line (`example_id`, `prompt`/`completion` message lists, `reward`,
`is_truncated`, `metrics`, `stop_condition`), beside `metadata.json` (`model`, `rollouts_per_example`,
`avg_reward`, `pass_threshold`). The rows carry no model: the sidecar names it.

0.4: `traces.jsonl`, one episode a line: the task under `task.data.id`, each trace's rewards under
`traces.<i>.rewards.<name>.score`, its model calls under `traces.<i>.calls` (`model`, `finish_reason`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..rows import GradedRows, with_model
from .base import Format, Probe, ReadArgs, disagreement, graded_mean, load_json, merged, read_plain, scorer_note

V03_FIELDS = {"task_id": "example_id", "tokens": "token_usage.output_tokens"}


# -- 0.3 ---------------------------------------------------------------------------------------------------------

def _sniff_v03(probe: Probe) -> bool:
    first = probe.first or {}
    return "example_id" in first and ("reward" in first or "metrics" in first) and (
        "prompt" in first or "completion" in first)


def _is_metadata(probe: Probe) -> bool:
    head = probe.head.lstrip()
    return head[:1] == b"{" and b'"rollouts_per_example"' in head and b'"avg_reward"' in head


def _read_v03(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    rows = read_plain(p, "jsonl", args, merged(V03_FIELDS, args))
    meta = load_json(p.parent / "metadata.json", args)
    if isinstance(meta, dict):
        model = meta.get("model")
        if isinstance(model, str) and model:
            rows = with_model(rows, model)
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
           "tokens": "traces.0.calls.-1.usage.completion_tokens"}
    names = _reward_names(first)
    if names:
        out["reward"] = f"traces.0.rewards.{names[0]}.score"
    return out


def _read_v04(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    first = probe.first or {}
    rows = read_plain(p, "jsonl", args, merged(_v04_fields(first), args))
    names = _reward_names(first)
    if names and "reward" not in args.fields:
        rows.notes.extend(scorer_note("reward", names, names[0], lambda n: f"traces.0.rewards.{n}.score", args.fields))
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
