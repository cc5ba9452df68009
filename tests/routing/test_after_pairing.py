"""Pairing the arms of `after`: the same held-out tasks scored by two tools pair by prompt (vf-eval `0`, lm-eval
`standin_sums/0`, inspect `sum-0`), a freeze manifest drawn from one tool's rows judges another's, two evaluations
that share ids never pair, the same rows twice or arms swapped against the manifest are not judged, and arms
scored at different k are said to be. Every file is one the eval tools wrote (tests/fixtures/eval_tools/*/SOURCE.md),
copied and edited only where a test says so.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from rowkit import rows_from_passes

from pick_a_method.routing import after, freeze, read_rows

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
VF_BASE, VF_TRAINED = TOOLS / "verifiers" / "0.3.1", TOOLS / "verifiers" / "trained" / "0.3.1"
VF_BLANK = TOOLS / "verifiers" / "blank" / "0.3.1"  # another environment (a judge's), the same ten sums
LM_BASE = TOOLS / "lm_eval" / "0.4.13" / "seeds"  # four seeded runs: k=4 of the base policy
IN_BASE = TOOLS / "inspect_ai" / "0.3.285" / "standin_sums.eval"
IN_TRAINED = TOOLS / "inspect_ai" / "trained" / "0.3.285" / "standin_sums.eval"


def test_every_reader_keys_the_same_prompt_the_same_way():
    keys = [read_rows(p).task_prompts for p in (VF_BASE, LM_BASE, IN_BASE, IN_TRAINED)]
    assert all(k == keys[0] for k in keys) and len(set(keys[0])) == 10


@pytest.mark.parametrize("before_path", [VF_BASE, LM_BASE, IN_BASE], ids=["vf-eval", "lm-eval", "inspect"])
@pytest.mark.parametrize("after_path", [VF_TRAINED, IN_TRAINED], ids=["vf-eval", "inspect"])
def test_two_tools_runs_of_the_same_tasks_pair_by_prompt_with_the_same_numbers(before_path, after_path):
    v = after(str(before_path), str(after_path))
    assert v.verdict == "proven", v.summary
    assert v.n_tasks == 10 and v.paired.mean_diff == pytest.approx(0.275)
    tool = lambda p: p.relative_to(TOOLS).parts[0]  # noqa: E731
    assert v.paired_by == ("task id" if tool(before_path) == tool(after_path) else "prompt")
    if v.paired_by == "prompt":
        note = next(w for w in v.warnings if w.startswith("paired by prompt"))
        assert "the task ids do not meet" in note and "before names one" in note and "after names one" in note


def test_a_manifest_frozen_from_one_tools_rows_judges_anothers(tmp_path):
    out = tmp_path / "frozen.json"
    f = freeze(str(VF_BASE), 0.3, n_tasks=5, out=out)
    manifest = json.loads(out.read_text())
    assert manifest["prompts"] and len(manifest["prompts"]) == 5 and manifest["tasks"] == f.tasks  # vf-eval's ids
    v = after(str(IN_BASE), str(IN_TRAINED), frozen=str(out))
    assert v.verdict != "not_comparable", v.summary
    assert v.paired_by == "prompt" and v.n_tasks == 5
    assert any("paired with the frozen manifest by prompt" in w for w in v.warnings)


def strip_prompts(path):
    rows = read_rows(path)
    return [{"task_id": rows.task_names[t], "reward": float(r), "model": rows.model_names[m]}
            for t, r, m in zip(rows.task.tolist(), rows.reward.tolist(), rows.model.tolist())]


def test_where_nothing_pairs_one_id_from_each_side_is_shown():
    v = after(strip_prompts(VF_BASE), strip_prompts(IN_TRAINED))
    assert v.verdict == "not_comparable"
    reason = v.not_comparable[0]
    assert "before names one `0`" in reason and "after names one `sum-0`" in reason
    assert "carry no prompt to pair on" in reason


def test_two_environments_of_one_tool_are_not_comparable_naming_both():
    """vf-eval's example_id is a row index: any two environments share ids 0..9."""
    v = after(str(VF_BASE), str(VF_BLANK))
    assert v.verdict == "not_comparable"
    assert any("standin-sums" in r and "standin-sums-blank" in r and "two evaluations" in r
               for r in v.not_comparable), v.not_comparable


def test_shared_ids_asked_with_other_prompts_are_not_comparable(tmp_path):
    """The same environment name, another prompt behind each id (an edited environment): not one evaluation."""
    other = tmp_path / "other"
    shutil.copytree(VF_TRAINED, other)
    lines = (other / "results.jsonl").read_text().splitlines()
    edited = []
    for line in lines:
        row = json.loads(line)
        row["prompt"][-1]["content"] = row["prompt"][-1]["content"].replace("+", "*")
        edited.append(json.dumps(row))
    (other / "results.jsonl").write_text("\n".join(edited) + "\n")
    v = after(str(VF_BASE), str(other))
    assert v.verdict == "not_comparable"
    assert any("carry a different prompt" in r and "task 0" in r for r in v.not_comparable), v.not_comparable


def test_the_same_folder_twice_is_not_comparable():
    v = after(str(VF_BASE), str(VF_BASE))
    assert v.verdict == "not_comparable" and "before and after are the same rows" in v.summary


def test_swapped_folders_with_a_manifest_are_called_out(tmp_path):
    out = tmp_path / "frozen.json"
    freeze(str(VF_BASE), 0.3, n_tasks=5, out=out)
    assert json.loads(out.read_text())["model"] == "Qwen/Qwen3-8B"  # the base, read off the rows
    v = after(str(VF_TRAINED), str(VF_BASE), frozen=str(out))
    assert v.verdict == "not_comparable"
    assert any("look swapped" in r and "Qwen/Qwen3-8B" in r for r in v.not_comparable)


def test_a_different_k_before_and_after_is_said():
    rng = np.random.default_rng(0)
    b = rows_from_passes(rng.integers(0, 9, 60).tolist(), k=8, model="base")
    a = rows_from_passes(rng.integers(0, 2, 60).tolist(), k=1, model="trained")
    v = after(b, a)
    w = next(w for w in v.warnings if "rollouts per task differ" in w)
    assert "before k=8" in w and "after k=1" in w and "Score every arm at the same k" in w
    same = after(b, rows_from_passes(rng.integers(0, 9, 60).tolist(), k=8, model="trained"))
    assert not any("rollouts per task differ" in w for w in same.warnings)


def test_paired_py_stands_below_the_jobs_that_use_it():
    """routing/paired.py holds the pairing and sizing the jobs share: it imports none of them."""
    import ast

    import pick_a_method.routing.paired as paired

    tree = ast.parse(Path(paired.__file__).read_text())
    local = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
    assert local <= {None, "rows", "table", "stats", "defaults"}, local
