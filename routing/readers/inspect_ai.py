"""inspect-ai logs: the `.eval` file (a zip: header.json, samples/<id>_epoch_<n>.json) read with the standard
library's zipfile, and the JSON that `inspect log dump` writes (the whole log, samples under `samples`).

A sample is one rollout: `id` is the task, `epoch` the rollout; the grade is `scores.<scorer>.value` (C/I/P/N
read as 1/0/0.5/0, or a number); `output.choices.0.stop_reason` says whether it was cut off (`max_tokens`,
`model_length`); the model is `output.model`, else the header's `eval.model` (with its provider prefix, `vllm/...`);
the token cap is the header's generate config (`eval.model_generate_config.max_tokens`, else `plan.config`).
inspect compresses its members with zstandard (zip method 93), which the standard library reads from Python 3.14
on; before that the member's bytes are taken from the zip and decompressed with the `zstandard` package.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from pick_a_method.common.errors import InputError
from ..rows import GradedRows, with_model
from .base import (Format, Probe, ReadArgs, Rollouts, disagreement, graded_mean, merged, other_graders, read_dicts,
                   scorer_note, with_cap)

CHUNK = 2048  # samples parsed and handed on at a time
# inspect's model-graded scorers (scorer/_model.py: model_graded_qa, model_graded_fact) keep the grader model's
# messages in each score's metadata under this key; their names start with MODEL_GRADED.
GRADING_KEY = "grading"
MODEL_GRADED = "model_graded"


def _fields(scorer: str | None) -> dict[str, str]:
    out = {"task_id": "id", "truncated": "output.choices.0.stop_reason", "model": "output.model",
           "tokens": "output.usage.output_tokens", "completion": "output.completion"}
    if scorer is not None:
        out["reward"] = f"scores.{scorer}.value"
    return out


def _scorers(header: dict[str, Any], first: dict[str, Any] | None) -> list[str]:
    """Scorer names: the header's results (in the task's order), else the first sample's scores."""
    names = [s.get("name") for s in ((header.get("results") or {}).get("scores") or []) if isinstance(s, dict)]
    names = [n for n in names if isinstance(n, str)]
    if not names and first and isinstance(first.get("scores"), dict):
        names = list(first["scores"])
    return list(dict.fromkeys(names))


def _accuracy(header: dict[str, Any], scorer: str) -> float | None:
    for s in (header.get("results") or {}).get("scores") or []:
        if isinstance(s, dict) and s.get("name") == scorer:
            value = ((s.get("metrics") or {}).get("accuracy") or {}).get("value")
            return float(value) if isinstance(value, (int, float)) else None
    return None


def _picked(scorers: list[str], args: ReadArgs) -> str | None:
    """The scorer read as the reward: the caller's `scores.<name>.value`, else the first; None for another field."""
    reward = args.fields.get("reward")
    return reward.split(".")[1] if reward and reward.startswith("scores.") and reward.count(".") >= 2 else (
        scorers[0] if scorers and not reward else None)


def _graders(scorers: list[str], args: ReadArgs) -> dict[str, str]:
    return other_graders(scorers, _picked(scorers, args), lambda n: f"scores.{n}.value")


def _judged(scorers: list[str], first: dict[str, Any] | None, args: ReadArgs) -> dict[str, str]:
    """The scorers a model graded by inspect's own record: a model-graded scorer's name, or the grader model's
    messages kept in the score (the first sample's)."""
    scores = (first or {}).get("scores") if isinstance((first or {}).get("scores"), dict) else {}
    picked = _picked(scorers, args)
    out = {}
    for name in scorers:
        kept = isinstance(scores.get(name), dict) and GRADING_KEY in ((scores[name].get("metadata") or {}))
        if kept or name.startswith(MODEL_GRADED):
            why = "keeps the grader model's messages" if kept else "inspect's model-graded scorer"
            out["reward" if name == picked else name] = f"inspect scorer `{name}` ({why})"
    return out


def _finish(rows: GradedRows, header: dict[str, Any], scorers: list[str], args: ReadArgs, name: str,
            first: dict[str, Any] | None) -> GradedRows:
    model = (header.get("eval") or {}).get("model")
    if isinstance(model, str) and model:
        rows = with_model(rows, model)
    for where, config in (("eval.model_generate_config", (header.get("eval") or {}).get("model_generate_config")),
                          ("plan.config", (header.get("plan") or {}).get("config"))):  # --max-tokens: the first
        if isinstance(config, dict) and config.get("max_tokens") is not None:
            rows = with_cap(rows, config["max_tokens"])
            break
    rows.judged_by.update(_judged(scorers, first, args))
    task = (header.get("eval") or {}).get("task")
    if isinstance(task, str) and task:  # the task's name: `after` never pairs two tasks
        rows.suites.append(task)
    reward = args.fields.get("reward")
    picked = _picked(scorers, args)
    notes = []
    if picked is not None and not reward:
        notes += scorer_note("scorer", scorers, picked, lambda n: f"scores.{n}.value", args.fields)
    if picked is not None:
        notes += disagreement("inspect", f"{picked} accuracy", _accuracy(header, picked), graded_mean(rows))
    rows.notes.extend(notes)
    rows.formats.append(name)
    return rows


def _no_scores(p: Path) -> InputError:
    return InputError(f"{p}: an inspect-ai log whose samples carry no scores; score it (`inspect score {p.name}`) "
                      f"or name the grade with fields={{\"reward\": \"scores.<scorer>.value\"}}", field="reward")


# -- the .eval zip ------------------------------------------------------------------------------------------------

def _sniff_eval(probe: Probe) -> bool:
    names = probe.zip_names or []
    return "header.json" in names or any(n.startswith("samples/") and n.endswith(".json") for n in names)


ZSTD = 93  # the zip method number of zstandard (APPNOTE 4.4.5)


def _member(z: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes; a zstandard one is decompressed here where this Python's zipfile cannot."""
    info = z.getinfo(name)
    if info.compress_type != ZSTD or getattr(zipfile, "ZIP_ZSTANDARD", None) == ZSTD:
        return z.read(name)
    try:
        import zstandard
    except ImportError:  # a core dependency; said plainly if it was uninstalled
        raise InputError("reading an inspect-ai .eval log needs the zstandard package (pip install 'zstandard>=0.22'), "
                         "or pass the JSON of `inspect log dump LOG.eval`", field="rows_path") from None
    f = z.fp
    f.seek(info.header_offset)
    local = f.read(30)
    if local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for {name}")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    f.seek(info.header_offset + 30 + name_len + extra_len)
    data = zstandard.ZstdDecompressor().decompress(f.read(info.compress_size), max_output_size=info.file_size)
    if len(data) != info.file_size:
        raise zipfile.BadZipFile(f"{name} decompressed to {len(data)} bytes, not {info.file_size}")
    return data


def _samples(z: zipfile.ZipFile, names: list[str]) -> Iterator[list[dict[str, Any]]]:
    chunk = []
    for n in names:
        chunk.append(orjson.loads(_member(z, n)))
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _read_eval(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    try:
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
            header = orjson.loads(_member(z, "header.json")) if "header.json" in names else {}
            samples = sorted((n for n in names if n.startswith("samples/") and n.endswith(".json")))
            first = orjson.loads(_member(z, samples[0])) if samples else None
            scorers = _scorers(header, first)
            if not scorers and "reward" not in args.fields and samples:
                raise _no_scores(p)
            size = sum(z.getinfo(n).file_size for n in samples)
            if args.max_bytes is not None and size > args.max_bytes:
                raise InputError(f"{p}: {size:,} bytes of samples once unzipped, over the cap of {args.max_bytes:,}; "
                                 f"raise it with --max-bytes (or PICK_A_METHOD_MAX_BYTES)", field=args.argument)
            fields = merged(_fields(scorers[0] if scorers else None), args)
            rows = read_dicts(_samples(z, samples), str(p), args, fields, _graders(scorers, args))
    except (zipfile.BadZipFile, orjson.JSONDecodeError, KeyError, NotImplementedError, OSError, EOFError) as e:
        raise InputError(f"{p}: an inspect-ai .eval log that cannot be read ({e.__class__.__name__}); is it complete? "
                         f"(an eval still running has no header yet)", field=args.argument) from None
    return _finish(rows, header, scorers, args, "inspect-ai log (.eval)", first)


def _eval_rollouts(p: Path, probe: Probe, args: ReadArgs) -> Rollouts | None:
    """The eval id (header.json, or the journal's start while it runs) and each sample member's `<id>_epoch_<n>`."""
    try:
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
            head = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
            spec = orjson.loads(_member(z, head)).get("eval") if head else None
    except (zipfile.BadZipFile, orjson.JSONDecodeError, KeyError, NotImplementedError, OSError, EOFError,
            AttributeError, InputError):
        return None  # the read says what is wrong with the file
    members = (n for n in names if n.startswith("samples/") and n.endswith(".json"))
    return _rollouts(spec, frozenset(n.removeprefix("samples/").removesuffix(".json") for n in members))


def _rollouts(spec: Any, keys: frozenset[str]) -> Rollouts | None:
    eval_id = spec.get("eval_id") if isinstance(spec, dict) else None
    return Rollouts(f"inspect-ai eval {eval_id}", keys) if isinstance(eval_id, str) and eval_id else None


# -- the `inspect log dump` JSON -------------------------------------------------------------------------------------

def _sniff_dump(probe: Probe) -> bool:
    head = probe.head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] == b"{" and b'"eval"' in head and (b'"plan"' in head or b'"samples"' in head
                                                         or b'"status"' in head)


def _read_dump(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    if args.max_bytes is not None and p.stat().st_size > args.max_bytes:
        raise InputError(f"{p} is over the cap of {args.max_bytes:,} bytes; raise it with --max-bytes",
                         field=args.argument)
    try:
        doc = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError as e:
        raise InputError(f"{p} is not valid JSON ({e}); write it again with `inspect log dump LOG.eval > {p.name}`",
                         field=args.argument) from None
    samples = doc.get("samples") if isinstance(doc, dict) else None
    if not isinstance(samples, list):
        raise InputError(f"{p}: an inspect-ai log with no samples (was it written with --no-log-samples, or dumped "
                         f"with a header only?); read the .eval file, or dump it again", field=args.argument)
    header = {k: v for k, v in doc.items() if k != "samples"}
    scorers = _scorers(header, samples[0] if samples and isinstance(samples[0], dict) else None)
    if not scorers and "reward" not in args.fields and samples:
        raise _no_scores(p)
    fields = merged(_fields(scorers[0] if scorers else None), args)
    rows = read_dicts((samples[i:i + CHUNK] for i in range(0, len(samples), CHUNK)), str(p), args, fields,
                      _graders(scorers, args))
    first = samples[0] if samples and isinstance(samples[0], dict) else None
    return _finish(rows, header, scorers, args, "inspect-ai log (inspect log dump JSON)", first)


def _dump_rollouts(p: Path, probe: Probe, args: ReadArgs) -> Rollouts | None:
    """The eval id and each sample's `<id>_epoch_<n>`, as the `.eval` names its sample members."""
    if args.max_bytes is not None and p.stat().st_size > args.max_bytes:
        return None  # the read refuses it
    try:
        doc = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError:
        return None
    samples = doc.get("samples") if isinstance(doc, dict) else None
    if not isinstance(samples, list):
        return None
    keys = frozenset(f"{s.get('id')}_epoch_{s.get('epoch')}" for s in samples if isinstance(s, dict))
    return _rollouts(doc.get("eval"), keys)


KEYS = ("id", "epoch", "scores", "output")
FORMATS = (
    Format(name="inspect-ai log (.eval)", tool="inspect-ai 0.3 (inspect eval --epochs N)", sniff=_sniff_eval,
           read=_read_eval, keys=KEYS, rollouts=_eval_rollouts),
    Format(name="inspect-ai log (JSON)", tool="inspect-ai 0.3 (inspect log dump LOG.eval)", sniff=_sniff_dump,
           read=_read_dump, keys=KEYS, rollouts=_dump_rollouts),
)
