"""Question 0 on files two real eval tools wrote (tests/fixtures/eval_tools/<tool>/, each with its generator and
SOURCE.md), read as-is: the stand-in model answered with two blank replies (`standin_model.py --blanks`), a program
grader passed them, and a judge (the stand-in, asked by the tool's own model-graded scorer or judge rubric) graded
the same rollouts beside it. Every count is checked against the raw file read here by hand and the tool's summary.
"""

import json
from pathlib import Path

import pytest
from rowkit import MODEL

from pick_a_method import routing
from pick_a_method.routing import read_rows
from pick_a_method.routing.before_training.grader import judge_audit_rows
from pick_a_method.routing.pictures.route import picture

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
INSPECT = TOOLS / "inspect_ai" / "blank" / "0.3.285" / "standin_sums_blank_judge"
VF = TOOLS / "verifiers" / "blank" / "0.3.1"


def inspect_truth():
    log = json.loads(INSPECT.with_suffix(".json").read_text())
    samples = log["samples"]
    blank = [s for s in samples if not s["output"]["completion"].strip()]
    differ = [s for s in samples if s["scores"]["lenient"]["value"] != s["scores"]["model_graded_fact"]["value"]]
    accuracy = {x["name"]: x["metrics"]["accuracy"]["value"] for x in log["results"]["scores"]}
    return samples, blank, differ, accuracy


@pytest.mark.parametrize("form", [".eval", ".json"])
def test_inspect_blank_replies_that_pass_stop_the_route_at_question_0(form):
    samples, blank, differ, accuracy = inspect_truth()
    rows = read_rows(INSPECT.with_suffix(form))
    assert float(rows.reward.mean()) == pytest.approx(accuracy["lenient"]) == 0.55  # the tool's own accuracy
    r = routing.route(rows, MODEL)
    q0 = r.trace[0]
    assert (r.route, q0.name, q0.decided) == ("fix_reward", "grader", True)
    assert len(blank) == q0.evidence["blank_passes"] == q0.evidence["blank_replies"] == 2
    assert all(s["scores"]["lenient"]["value"] == "C" for s in blank)
    assert q0.evidence["blank_pass_tasks"] == [s["id"] for s in blank] == ["sum-2", "sum-9"]
    assert "2 blank replies passed" in r.summary and r.next_step.arguments["blank_passes"][0]["task_id"] == "sum-2"
    assert [t.name for t in r.trace] == ["grader"]  # before question 1, whose cut-off pass (sum-5) is there too


def test_inspect_model_graded_scorer_is_a_judge_and_its_agreement_is_said():
    samples, blank, differ, accuracy = inspect_truth()
    r = routing.route(read_rows(INSPECT.with_suffix(".eval")), MODEL)
    (g,) = r.trace[0].evidence["graders"]
    assert g["name"] == "model_graded_fact" and g["rows"] == len(samples) == 40
    assert g["disagree_rows"] == len(differ) == 2 and g["disagree_tasks"] == ["sum-2", "sum-9"]
    assert differ == blank  # the judge fails the two blank replies the program passed, and agrees elsewhere
    assert g["agreement"] == 0.95 and g["kappa"] == pytest.approx(0.9, abs=1e-4)
    assert "model_graded_fact" in g["judge"] and "grading" in samples[0]["scores"]["model_graded_fact"]["metadata"]
    assert any("`model_graded_fact` (a model)" in w and "kappa 0.90" in w for w in r.warnings)
    caption = picture(read_rows(INSPECT.with_suffix(".eval")), r, model=MODEL).caption
    assert "Grader: 2 blank replies passed; `model_graded_fact` differs on 2 rows." in caption
    judged = read_rows(INSPECT.with_suffix(".eval"), fields={"reward": "scores.model_graded_fact.value"})
    r = routing.route(judged, MODEL)  # question 1 decides; question 0's warnings join its caption
    caption = picture(judged, r, model=MODEL).caption
    assert "1 of 3 replies cut off at the token cap passed" in caption and caption.endswith(
        "Grader: `lenient` differs on 2 rows; a model graded the reward.")


def test_inspect_judge_read_as_the_reward_says_how_to_audit_it():
    rows = read_rows(INSPECT.with_suffix(".eval"), fields={"reward": "scores.model_graded_fact.value"})
    r = routing.route(rows, MODEL)
    q0 = r.trace[0]
    assert q0.evidence["blank_passes"] == 0  # the judge fails blanks: question 1's cut-off pass decides instead
    assert q0.evidence["judge"]["audit_rows"] == judge_audit_rows(0.5)
    assert r.route == "fix_reward" and any(t.name == "truncated_passes" and t.decided for t in r.trace)
    assert any("a model graded the reward read (inspect scorer `model_graded_fact`" in w for w in r.warnings)
    (g,) = q0.evidence["graders"]
    assert g["name"] == "lenient" and g["disagree_rows"] == 2


def vf_truth():
    lines = [json.loads(x) for x in (VF / "results.jsonl").read_text().splitlines()]
    text = [(x["completion"][-1]["content"] if x["completion"] else "") for x in lines]
    meta = json.loads((VF / "metadata.json").read_text())
    return lines, text, meta


def test_verifiers_blank_replies_that_pass_stop_the_route_at_question_0():
    lines, text, meta = vf_truth()
    rows = read_rows(VF)
    assert float(rows.reward.mean()) == pytest.approx(meta["avg_reward"]) == 0.55
    blank = [i for i, t in enumerate(text) if not t.strip()]
    assert [lines[i]["completion"] for i in blank][0] == []  # vf-eval keeps the empty reply as an error row
    r = routing.route(rows, MODEL)
    q0 = r.trace[0]
    assert r.route == "fix_reward" and q0.decided
    assert q0.evidence["blank_passes"] == len(blank) == 2 and all(lines[i]["reward"] == 1.0 for i in blank)
    assert [e["line"] for e in q0.evidence["blank_pass_examples"]] == [i + 1 for i in blank]
    assert q0.evidence["blank_pass_tasks"] == [str(lines[i]["example_id"]) for i in blank] == ["2", "9"]


def test_verifiers_judge_rubric_function_is_compared_with_the_reward():
    lines, text, meta = vf_truth()
    rows = read_rows(VF)
    assert "judge_response" in meta["state_columns"] and all("judge_response" in x for x in lines)
    assert list(rows.graders) == ["judge_reward"]  # answer_found is the reward itself; num_turns is a count
    (g,) = routing.route(rows, MODEL).trace[0].evidence["graders"]
    differ = [x for x in lines if x["answer_found"] != x["judge_reward"]]
    assert g["disagree_rows"] == len(differ) == 2 and g["agreement"] == 0.95
    assert "judge rubric" in g["judge"]


def test_the_first_runs_answer_question_0_with_nothing_found():
    """The stand-in's ordinary policy (no blanks) under a sound grader: question 0 reads every reply, finds nothing,
    and question 1 still decides on the cut-off pass."""
    for path in (TOOLS / "verifiers" / "0.3.1", TOOLS / "inspect_ai" / "0.3.285" / "standin_sums_two_scorers.eval",
                 TOOLS / "verifiers" / "0.4.0", TOOLS / "lm_eval" / "0.4.13" / "seeds", TOOLS / "verl" / "0.9.1"):
        r = routing.route(read_rows(path), MODEL)
        q0 = r.trace[0]
        assert (q0.name, q0.answer, q0.decided) == ("grader", "ok", False), path
        assert q0.evidence["replies"] == len(read_rows(path)) and q0.evidence["blank_replies"] == 0
