"""Files the eval tools wrote themselves (tests/fixtures/eval_tools/<tool>/, each with its generate script and
SOURCE.md), read as-is: every count checked against the tool's own summary and against the raw file read here by
hand, and the route each should give.

The stand-in model behind every run (tests/fixtures/eval_tools/standin_model.py) answers 10 sums x 4 rollouts:
20 of 40 right, 2 tasks always right, 2 always wrong, 3 replies cut off at the token cap, one of them after the
right answer. So a tool that records why a reply ended routes `fix_reward`; one that does not routes on.
"""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from rowkit import MODEL

from pick_a_method import routing
from pick_a_method.routing import read_rows

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
INSPECT = TOOLS / "inspect_ai" / "0.3.285"
VERL = TOOLS / "verl" / "0.9.1"


def by_hand_band(rewards_by_task):
    """(always pass, always fail, split) counted here from per-task reward lists."""
    rates = [sum(r >= 1 for r in rs) / len(rs) for rs in rewards_by_task.values()]
    return sum(r == 1 for r in rates), sum(r == 0 for r in rates), sum(0 < r < 1 for r in rates)


# -- inspect-ai ---------------------------------------------------------------------------------------------------

def inspect_truth(dump: Path, scorer: str):
    log = json.loads(dump.read_text())
    grade = {"C": 1.0, "I": 0.0}
    per_task = {}
    cut = cut_pass = 0
    for s in log["samples"]:
        value = grade[s["scores"][scorer]["value"]]
        per_task.setdefault(s["id"], []).append(value)
        if s["output"]["choices"][0]["stop_reason"] == "max_tokens":
            cut += 1
            cut_pass += value == 1.0
    accuracy = next(x for x in log["results"]["scores"] if x["name"] == scorer)["metrics"]["accuracy"]["value"]
    return per_task, cut, cut_pass, accuracy, log["eval"]["model"]


@pytest.mark.parametrize("name", ["standin_sums", "standin_sums_two_scorers"])
@pytest.mark.parametrize("form", [".eval", ".json"])
def test_inspect_logs_read_as_the_tool_counted_them(name, form):
    per_task, cut, cut_pass, accuracy, eval_model = inspect_truth(INSPECT / f"{name}.json", "boxed")
    rows = read_rows(INSPECT / f"{name}{form}")
    assert len(rows) == sum(map(len, per_task.values())) == 40
    assert rows.n_tasks == len(per_task) == 10
    assert float(rows.reward.mean()) == pytest.approx(accuracy) == 0.5  # the tool's own accuracy
    assert int(rows.truncated.sum()) == cut == 3 and rows.stated.all()
    assert eval_model == "vllm/Qwen/Qwen3-8B" and rows.model_names == [MODEL]
    tp = routing.truncated_passes(rows)
    assert tp.count == cut_pass == 1 and tp.tasks == ["sum-5"]
    b = routing.band(rows)
    assert (b.n_all_pass, b.n_all_fail, b.n_split) == by_hand_band(per_task) == (2, 2, 6)
    r = routing.route(rows, MODEL)
    assert r.route == "fix_reward"
    two = name.endswith("two_scorers")
    assert any("2 scorers (boxed, includes)" in w and 'fields={"reward": "scores.includes.value"}' in w
               for w in r.warnings) == two
    assert not any("summary gives" in w for w in r.warnings)  # the rows agree with the tool's accuracy


def test_inspect_eval_members_are_zstandard_and_read_without_the_tool():
    with zipfile.ZipFile(INSPECT / "standin_sums.eval") as z:
        assert {i.compress_type for i in z.infolist() if i.filename.startswith("samples/")} == {93}
    assert routing.route(read_rows(INSPECT / "standin_sums.eval"), "vllm/Qwen/Qwen3-8B").route == "fix_reward"


def test_inspect_another_scorer_by_fields_and_a_mapped_model():
    rows = read_rows(INSPECT / "standin_sums_two_scorers.eval", fields={"reward": "scores.includes.value"})
    assert float(rows.reward.mean()) == 0.5
    assert not any("scorers" in n for n in rows.notes)  # the caller picked one: nothing to say
    on = routing.on_policy(rows, "vllm/Qwen/Qwen3-8B")
    assert on.verdict == "yes"


def test_an_inspect_log_beside_its_dump_is_read_once_told_by_content_not_name(tmp_path):
    # the .eval and its `inspect log dump` JSON, under names that do not pair them
    (tmp_path / "a.eval").write_bytes((INSPECT / "standin_sums.eval").read_bytes())
    (tmp_path / "b.json").write_bytes((INSPECT / "standin_sums.json").read_bytes())
    rows = read_rows(tmp_path)
    assert len(rows) == 40 and rows.n_tasks == 10  # 4 rollouts a task, as the run has (80 and 8 when read twice)
    assert set(np.bincount(rows.task)) == {4}
    assert routing.truncated_passes(rows).count == 1  # the run's one cut-off reply that passed, not 2
    assert any(n.startswith(f"skipped {tmp_path / 'b.json'}: the same 40 rollouts as {tmp_path / 'a.eval'}")
               and "inspect-ai eval 3pAEWb2mQS8VBSLiCpksLK" in n for n in rows.notes)
    r = routing.route(rows, MODEL)
    assert any("skipped" in w and "b.json" in w for w in r.warnings)  # the verdict says which file and why


def test_the_fixture_folder_reads_each_of_its_two_evals_once():
    rows = read_rows(INSPECT)  # two evals of the same 10 samples, each as .eval and as JSON
    assert len(rows) == 80 and set(np.bincount(rows.task)) == {8}
    assert routing.truncated_passes(rows).count == 2
    assert sum(n.startswith("skipped") and n.split(":")[0].endswith(".json") for n in rows.notes) == 2


def test_a_dump_that_holds_only_some_of_the_logs_samples_is_refused_naming_both(tmp_path):
    log = json.loads((INSPECT / "standin_sums.json").read_text())
    log["samples"] = log["samples"][:30]  # the log as it was while the eval ran
    (tmp_path / "early.json").write_text(json.dumps(log))
    (tmp_path / "standin_sums.eval").write_bytes((INSPECT / "standin_sums.eval").read_bytes())
    with pytest.raises(routing.InputError) as e:
        read_rows(tmp_path)
    assert "early.json" in str(e.value) and "standin_sums.eval" in str(e.value)
    assert "share 30 rollouts" in str(e.value)


@pytest.mark.parametrize("twice", ["absolute", "glob", "folder"])
def test_a_file_named_twice_is_read_once(twice, monkeypatch):
    monkeypatch.chdir(INSPECT.parent)
    one = "0.3.285/standin_sums.eval"
    other = {"absolute": str(INSPECT / "standin_sums.eval"), "glob": "0.3.285/standin_sums.e*",
             "folder": "0.3.285"}[twice]
    rows = read_rows([one, other])
    assert len(rows) == (80 if twice == "folder" else 40)  # the folder adds the other eval, once
    assert any(n.startswith(f"skipped {other if twice == 'absolute' else one}") for n in rows.notes)


def test_a_copy_of_a_rows_file_is_read_once_and_files_of_one_size_are_not_taken_for_copies(tmp_path):
    (tmp_path / "run.jsonl").write_bytes((VERL / "1.jsonl").read_bytes())
    (tmp_path / "run_copy.jsonl").write_bytes((VERL / "1.jsonl").read_bytes())
    rows = read_rows(tmp_path)
    assert len(rows) == 40
    assert any(n == f"skipped {tmp_path / 'run_copy.jsonl'}: the same bytes as {tmp_path / 'run.jsonl'} (a copy), "
               f"read once" for n in rows.notes)
    assert (VERL / "1.jsonl").stat().st_size == (VERL / "2.jsonl").stat().st_size
    assert len(read_rows(VERL)) == 80  # two steps' dumps of one size, different rollouts: both read


# -- verl ---------------------------------------------------------------------------------------------------------

def test_verl_rollout_dumps_read_per_step():
    lines = [json.loads(x) for f in sorted(VERL.glob("*.jsonl")) for x in f.read_text().splitlines()]
    rows = read_rows(VERL)
    assert len(rows) == len(lines) == 80 and rows.n_tasks == 10
    assert rows.arm_names == ["1", "2"]  # each step's rollouts are their own groups
    assert float(rows.reward.mean()) == pytest.approx(sum(x["score"] for x in lines) / len(lines))
    assert rows.n_truncation_stated == 0
    r = routing.route(rows, MODEL)
    assert any("do not record why a reply ended" in w for w in r.warnings)
    assert not any("add `truncated`" in w for w in r.warnings)  # the reader said why, once
    one = read_rows(VERL / "1.jsonl")
    per_task = {}
    for x in lines:
        if x["step"] == 1:
            per_task.setdefault(x["input"], []).append(x["score"])
    b = routing.band(one)
    assert (b.n_all_pass, b.n_all_fail, b.n_split) == by_hand_band(per_task) == (2, 2, 6)


# -- lm-evaluation-harness ---------------------------------------------------------------------------------------

LM_EVAL = TOOLS / "lm_eval" / "0.4.13"


def lm_eval_truth(folder: Path):
    """Per doc, the exact_match of each seeded run; and each run's own exact_match from its results file."""
    per_doc, summaries = {}, []
    for samples in sorted(folder.rglob("samples_*.jsonl")):
        for line in samples.read_text().splitlines():
            row = json.loads(line)
            per_doc.setdefault(row["doc_id"], []).append(row["exact_match"])
        results = json.loads(next(samples.parent.glob("results_*.json")).read_text())
        summaries.append((results["results"]["standin_sums"]["exact_match,boxed"], results["model_name"]))
    return per_doc, summaries


def test_lm_eval_seeded_runs_are_rollouts_of_the_same_docs():
    per_doc, summaries = lm_eval_truth(LM_EVAL / "seeds")
    assert len(summaries) == 4 and {m for _, m in summaries} == {MODEL}
    rows = read_rows(LM_EVAL / "seeds")
    assert len(rows) == 40 and rows.n_tasks == len(per_doc) == 10
    assert routing.rollouts_per_task(rows).k == 4
    assert float(rows.reward.mean()) == pytest.approx(sum(s for s, _ in summaries) / 4) == 0.5
    assert rows.model_names == [MODEL] and rows.task_names[0] == "standin_sums/0"
    assert rows.n_truncation_stated == 0  # lm-eval records no finish reason
    b = routing.band(rows)
    assert (b.n_all_pass, b.n_all_fail, b.n_split) == by_hand_band(per_doc) == (2, 2, 6)
    r = routing.route(rows, MODEL)
    assert r.trace[1].answer == "unknown" and r.route == "grpo"  # question 1 cannot be checked: said, not guessed
    assert any("lm-eval does not record why a reply ended" in w for w in r.warnings)
    assert not any("summary gives" in w for w in r.warnings)


def test_lm_eval_seed_files_given_one_by_one_or_as_a_glob_read_the_same():
    files = sorted(str(p) for p in (LM_EVAL / "seeds").rglob("samples_*.jsonl"))
    listed = read_rows(files)
    globbed = read_rows(str(LM_EVAL / "seeds" / "*" / "*" / "samples_*.jsonl"))
    folder = read_rows(LM_EVAL / "seeds")
    assert listed.reward.tolist() == globbed.reward.tolist() == folder.reward.tolist()
    assert routing.band(listed).next_step.arguments["rows_path"] == files
    one = read_rows(files[0])
    assert float(one.reward.mean()) == json.loads(next(Path(files[0]).parent.glob("results_*.json")).read_text())[
        "results"]["standin_sums"]["exact_match,boxed"]


def test_lm_eval_repeats_say_only_one_response_a_doc_was_graded():
    rows = read_rows(LM_EVAL / "repeats")
    assert len(rows) == 10  # one row per doc for the first filter, not three
    notes = " ".join(rows.notes)
    assert "repeats: 4" in notes and "--seed" in notes and "3 filters" in notes
    r = routing.route(rows, MODEL)
    assert r.route == "single_rollout" and any("repeats: 4" in w for w in r.warnings)


def test_a_summary_that_disagrees_with_the_rows_is_said(tmp_path):
    src = next((LM_EVAL / "seeds" / "run-seed1").rglob("samples_*.jsonl"))
    (tmp_path / src.name).write_text(src.read_text())
    results = json.loads(next(src.parent.glob("results_*.json")).read_text())
    results["results"]["standin_sums"]["exact_match,boxed"] = 0.9
    (tmp_path / f"results_{src.name.split('_', 3)[-1].removesuffix('.jsonl')}.json").write_text(json.dumps(results))
    rows = read_rows(tmp_path)
    assert any("own summary gives standin_sums exact_match,boxed 0.9, the rows read give 0.6" in n for n in rows.notes)


# -- verifiers ----------------------------------------------------------------------------------------------------

VF03 = TOOLS / "verifiers" / "0.3.1"


def test_verifiers_03_run_folder_reads_as_vf_eval_counted_it():
    meta = json.loads((VF03 / "metadata.json").read_text())
    lines = [json.loads(x) for x in (VF03 / "results.jsonl").read_text().splitlines()]
    per_task = {}
    for x in lines:
        per_task.setdefault(x["example_id"], []).append(x["reward"])
    rows = read_rows(VF03)
    assert len(rows) == len(lines) == meta["num_examples"] * meta["rollouts_per_example"] == 40
    assert routing.rollouts_per_task(rows).k == meta["rollouts_per_example"]
    assert float(rows.reward.mean()) == pytest.approx(meta["avg_reward"]) == 0.5
    assert rows.model_names == [meta["model"]] == [MODEL]  # from the sidecar: the rows name no model
    assert int(rows.truncated.sum()) == sum(x["is_truncated"] for x in lines) == 3
    cut_passes = [x for x in lines if x["is_truncated"] and x["reward"] >= 1]
    tp = routing.truncated_passes(rows)
    assert tp.count == len(cut_passes) == 1 and tp.tasks == [str(cut_passes[0]["example_id"])]
    b = routing.band(rows)
    assert (b.n_all_pass, b.n_all_fail, b.n_split) == by_hand_band(per_task) == (2, 2, 6)
    pass_at = routing.pass_at(rows, k=4)
    assert pass_at.pass_at_k == pytest.approx(meta["pass_at_k"]["4"])  # the tool's own pass@4
    assert pass_at.pass_pow_k == pytest.approx(meta["pass_all_k"]["4"])
    r = routing.route(rows, MODEL)
    assert r.route == "fix_reward" and not any("summary gives" in w for w in r.warnings)
    assert not any("pass_threshold" in w for w in r.warnings)  # 0/1 rewards pass alike at its 0.5 and our 1


def test_verifiers_03_results_file_alone_says_the_model_is_in_the_sidecar(tmp_path):
    (tmp_path / "results.jsonl").write_text((VF03 / "results.jsonl").read_text())
    rows = read_rows(tmp_path / "results.jsonl")
    assert rows.model_names == [] and any("no metadata.json" in n for n in rows.notes)


VF04 = TOOLS / "verifiers" / "0.4.0"


def test_verifiers_04_traces_read_with_list_paths():
    episodes = [json.loads(x) for x in (VF04 / "traces.jsonl").read_text().splitlines()]
    config = json.loads((VF04 / "configs" / "resolved" / "eval.json").read_text())
    per_task = {}
    for e in episodes:
        per_task.setdefault(e["task"]["data"]["id"], []).append(e["traces"][0]["rewards"]["correct_answer"]["score"])
    rows = read_rows(VF04)  # the run folder: traces.jsonl beside configs/ and logs/ (read as nothing)
    assert len(rows) == len(episodes) == 40 and rows.n_tasks == 10
    assert routing.rollouts_per_task(rows).k == config["num_rollouts"] == 4
    assert rows.model_names == [config["model"]] == [MODEL]
    assert float(rows.reward.mean()) == 0.5
    cut = [e for e in episodes if e["traces"][0]["calls"][-1]["finish_reason"] == "length"]
    assert int(rows.truncated.sum()) == len(cut) == 3 and rows.stated.all()
    tp = routing.truncated_passes(rows)
    assert tp.count == sum(e["traces"][0]["rewards"]["correct_answer"]["score"] >= 1 for e in cut) == 1
    b = routing.band(rows)
    assert (b.n_all_pass, b.n_all_fail, b.n_split) == by_hand_band(per_task) == (2, 2, 6)
    assert routing.route(rows, MODEL).route == "fix_reward"
    assert rows.tokens is not None and float(rows.tokens.sum()) == sum(
        e["traces"][0]["calls"][-1]["usage"]["completion_tokens"] for e in episodes)
