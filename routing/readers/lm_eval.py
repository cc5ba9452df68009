"""lm-evaluation-harness `--log_samples` output: `samples_<task>_<time>.jsonl`, one doc a line (`doc_id`, `doc`,
`resps`, `filtered_resps`, `filter`, `metrics` naming the task's metrics, and each metric's value under its name),
beside `results_<time>.json` (`model_name`, `config.model_args`, `results.<task>."<metric>,<filter>"`).

A doc is a task (`<task>/<doc_id>`); each seeded run of the task is one rollout of every doc, so the runs' files
are read together. lm-eval grades one response per doc, and records no finish reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from pick_a_method.common.errors import InputError
from ..rows import GradedRows, with_model
from .base import (Format, Probe, ReadArgs, disagreement, graded_mean, load_json, merged, other_graders, read_dicts,
                   scorer_note, with_cap)
from .plain import CHUNK_ROWS, open_bytes
from .prompts import LM_EVAL_KEY

SAMPLES = re.compile(r"^samples_(?P<task>.+?)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


def _sniff(probe: Probe) -> bool:
    return probe.has("doc_id", "resps", "filtered_resps") or probe.has("doc_id", "doc", "metrics")


def _is_results(probe: Probe) -> bool:
    head = probe.head.lstrip()
    return head[:1] == b"{" and b'"results"' in head and (b'"configs"' in head or b'"n-shot"' in head
                                                            or b'"versions"' in head)


def _task_name(p: Path) -> str:
    m = SAMPLES.match(p.name)
    return m.group("task") if m else p.stem.removeprefix("samples_")


def _results(p: Path, args: ReadArgs) -> dict[str, Any] | None:
    """The results_*.json beside a samples file: the one whose time stamp it shares, else the only one."""
    m = SAMPLES.match(p.name)
    candidates = sorted(p.parent.glob("results_*.json"))
    if m:
        same = [c for c in candidates if c.name == f"results_{m.group('time')}.json"]
        candidates = same or candidates
    if len(candidates) != 1:
        return None
    doc = load_json(candidates[0], args)
    return doc if isinstance(doc, dict) else None


def _model(results: dict[str, Any] | None) -> str | None:
    if not results:
        return None
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    args = (results.get("config") or {}).get("model_args")
    if isinstance(args, str):
        m = re.search(r"(?:^|,)\s*(?:pretrained|model)=([^,]+)", args)
        return m.group(1).strip() if m else None
    if isinstance(args, dict):
        name = args.get("pretrained") or args.get("model")
        return name if isinstance(name, str) else None
    return None


def _lines(p: Path, args: ReadArgs) -> Iterator[dict[str, Any]]:
    with open_bytes(p) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise InputError(f"line {n} of {p} is not valid JSON: {e}; fix or delete that line", row=n) from None
            if type(row) is dict:
                yield row


def _read(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    first = probe.first or {}
    task = _task_name(p)
    metrics = [m for m in first.get("metrics") or [] if isinstance(m, str)]
    metrics = metrics or [k for k in ("exact_match", "acc", "acc_norm", "pass@1") if k in first]
    metric = metrics[0] if metrics else "exact_match"
    filter_name = first.get("filter")
    seen_filters: dict[str, int] = {}
    repeats = [0]

    def rows() -> Iterator[list[dict[str, Any]]]:
        chunk = []
        for row in _lines(p, args):
            f = row.get("filter")
            seen_filters[f] = seen_filters.get(f, 0) + 1
            if f != filter_name:
                continue  # one row per doc and filter: the first filter's rows are the rollouts
            resps = row.get("resps")
            if isinstance(resps, list) and resps and isinstance(resps[0], list) and len(resps[0]) > 1:
                repeats[0] = max(repeats[0], len(resps[0]))
            row["_task"] = f"{task}/{row.get('doc_id')}"
            logged = ((row.get("arguments") or {}).get("gen_args_0") or {}).get("arg_0")
            if isinstance(logged, list) and logged:  # the prompt as sent: `after` pairs runs of other tools on it
                row[LM_EVAL_KEY] = logged[0]
            chunk.append(row)
            if len(chunk) >= CHUNK_ROWS:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    # the reply: the doc's first response as the model wrote it (the first filter's rows grade it, after the filter)
    fields = merged({"task_id": "_task", "reward": metric, "completion": "resps.0.0"}, args)
    out = read_dicts(rows(), str(p), args, fields, other_graders(metrics, args.fields.get("reward", metric),
                                                                 lambda n: n))
    results = _results(p, args)
    model = _model(results)
    if model:
        out = with_model(out, model)
    generation = (((results or {}).get("configs") or {}).get(task) or {}).get("generation_kwargs")
    if isinstance(generation, dict):  # the task's generation_kwargs, --gen_kwargs merged in: max_gen_toks caps
        out = with_cap(out, generation.get("max_gen_toks"))
    notes = []
    if "reward" not in args.fields:
        notes += scorer_note("metric", metrics, metric, lambda n: n, args.fields)
        key = f"{metric},{filter_name}" if filter_name else metric
        theirs = ((results or {}).get("results") or {}).get(task, {}).get(key)
        notes += disagreement("lm-eval", f"{task} {key}", theirs if isinstance(theirs, (int, float)) else None,
                              graded_mean(out))
    if len(seen_filters) > 1:
        notes.append(f"{task}: rows for {len(seen_filters)} filters ({', '.join(map(str, seen_filters))}); read the "
                     f"{filter_name!r} filter's rows, one per doc")
    if repeats[0]:
        notes.append(f"{task}: lm-eval sampled {repeats[0]} responses per doc (repeats: {repeats[0]}) but scored "
                     f"{metric} once per doc, so each doc reads as one rollout; for k rollouts run lm_eval k times "
                     f"with --seed 1..k and pass all the samples files (or their folder)")
    out.notes.extend(notes)
    out.notes.append("lm-eval does not record why a reply ended, so question 1 (can a cut-off reply pass?) stays "
                     "unknown: check that max_gen_toks cuts no passing answer")
    out.formats.append("lm-eval samples")
    out.suites.append(task)
    return out


FORMATS = (Format(name="lm-eval samples", tool="lm-evaluation-harness 0.4 (lm_eval --log_samples)", sniff=_sniff,
                  read=_read, sidecar=_is_results, keys=("doc_id", "doc", "resps", "filtered_resps", "metrics")),)
