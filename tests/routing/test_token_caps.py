"""The token cap each eval tool records for its run, read into every row (`max_tokens`): verifiers 0.3's
metadata.json `sampling_args.max_tokens` (vf-eval -t), verifiers 0.4's configs/resolved/eval.json `sampling.max_tokens`,
lm-eval's task `generation_kwargs.max_gen_toks` in the results json, inspect's generate config in the log header.
So `after` refuses two runs sampled at different caps, naming both, on the files the tools wrote."""

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from pick_a_method.routing import after, freeze, read_rows
from pick_a_method.routing.readers.inspect_ai import _member as member

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
VERIFIERS = TOOLS / "verifiers"
INSPECT = TOOLS / "inspect_ai" / "0.3.285"


def caps(path):
    return np.unique(read_rows(str(path)).max_tokens).tolist()


@pytest.mark.parametrize("path, cap", [
    (VERIFIERS / "0.3.1", 64.0),  # -t 64
    (VERIFIERS / "0.3.1" / "results.jsonl", 64.0),  # the rows file alone: its sidecar beside it
    (VERIFIERS / "trained" / "0.3.1", 64.0),
    (VERIFIERS / "capped" / "0.3.1", 128.0),  # -t 128
    (VERIFIERS / "0.4.0", 64.0),  # --sampling.max-tokens 64
    (VERIFIERS / "0.4.0" / "traces.jsonl", 64.0),
    (TOOLS / "lm_eval" / "0.4.13" / "repeats", 64.0),  # the task's max_gen_toks: 64
    (TOOLS / "lm_eval" / "0.4.13" / "seeds", 64.0),
])
def test_each_tool_records_its_cap_and_every_row_reads_it(path, cap):
    assert caps(path) == [cap]


def test_a_run_that_records_no_cap_reads_none():
    assert np.isnan(caps(INSPECT / "standin_sums.eval")).all()  # run without --max-tokens: the header says none
    assert np.isnan(caps(TOOLS / "verl" / "0.9.1")).all()


def test_the_inspect_header_cap_is_read_from_the_log_and_its_dump(tmp_path):
    """The fixtures' runs set no cap; the same log with the header's generate config as `--max-tokens 128` writes it
    (GenerateConfig.max_tokens, in eval.model_generate_config) is read at 128."""
    dump = json.loads((INSPECT / "standin_sums.json").read_text())
    dump["eval"]["model_generate_config"] = {"max_tokens": 128}
    (tmp_path / "capped.json").write_text(json.dumps(dump))
    assert caps(tmp_path / "capped.json") == [128.0]
    with zipfile.ZipFile(INSPECT / "standin_sums.eval") as z:  # zstandard members: the reader's own decompression
        members = {n: member(z, n) for n in z.namelist()}
    header = {k: v for k, v in dump.items() if k != "samples"}
    header["eval"]["model_generate_config"] = {}
    header["plan"]["config"] = {"max_tokens": 96}  # the plan's config when the eval's own says none
    with zipfile.ZipFile(tmp_path / "capped.eval", "w") as z:
        for name, data in members.items():
            z.writestr(name, json.dumps(header) if name == "header.json" else data)
    assert caps(tmp_path / "capped.eval") == [96.0]


def test_after_refuses_runs_at_two_caps_naming_both():
    v = after(str(VERIFIERS / "0.3.1"), str(VERIFIERS / "capped" / "0.3.1"))
    assert v.verdict == "not_comparable"
    assert "different token caps (before max_tokens 64, after max_tokens 128)" in v.summary
    assert {a.name: a.max_tokens for a in v.arms} == {"before": 64.0, "after": 128.0}
    same = after(str(VERIFIERS / "0.3.1"), str(VERIFIERS / "trained" / "0.3.1"))  # both at 64: compared
    assert same.verdict == "proven" and {a.max_tokens for a in same.arms} == {64.0}


def test_the_frozen_manifest_keeps_the_base_runs_cap_and_after_holds_the_arms_to_it(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(VERIFIERS / "0.3.1", base)
    frozen = freeze(str(base), 0.3, n_tasks=6, out=tmp_path / "holdout.json")
    assert frozen.max_tokens == 64.0 and json.loads((tmp_path / "holdout.json").read_text())["max_tokens"] == 64
    v = after(str(base), str(VERIFIERS / "capped" / "0.3.1"), frozen=tmp_path / "holdout.json")
    assert v.verdict == "not_comparable" and "frozen manifest max_tokens 64" in v.summary
