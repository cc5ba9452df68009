"""Question 0 and length: a judge whose grade follows the reply's length stops the route, leads with
length (its within-task correlation and tasks) rather than with the flips its randomness adds, says how to fix a
length-biased grader, and is never routed to GRPO "with your program grader" once its flips are voted away.
"""

from dataclasses import replace

import numpy as np

import gradersim as S

from pick_a_method import routing
from pick_a_method.routing.before_training.grader import check_grader

MODEL = "m0"


def judged(seed=0):
    return S.length_judge(np.random.default_rng(seed), beta=2.0, n_tasks=300, k=8)


def majority(rows):
    """Each identical reply (task, text) given its majority grade: no reply is graded both ways any more."""
    key = rows.task.astype(np.int64) * 1_000_003 + rows.reply_hash
    _, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    votes = np.bincount(inverse, weights=rows.reward) / np.bincount(inverse)
    return replace(rows, reward=(votes[inverse] > 0.5).astype(float), _tables={})


def test_length_leads_with_its_evidence_where_the_judge_also_flips():
    c = check_grader(judged())
    assert c.answer.startswith("length_bias") and c.decided
    assert "graded_both_ways" in c.answer  # the judge's randomness flips repeated replies too: said second
    assert c.summary.startswith("The grade follows the reply's length")
    length = c.evidence["length"]
    assert f"Spearman rho {length['rho']:.2f}" in c.summary and length["tasks"][0] in c.summary
    assert c.rows_to_fix["length_bias"] and list(c.rows_to_fix)[0] == "length_bias"


def test_the_route_stops_at_fix_reward_and_says_how_to_fix_a_length_biased_grader():
    r = routing.route(judged(), MODEL)
    assert r.route == "fix_reward" and r.summary.startswith("The grade follows the reply's length")
    why = r.next_step.why
    assert why.startswith("Fix the grader: grade what the reply says, not how long it is")
    assert why.index("not how long") < why.index("same grade")  # length first, the flips after


def test_with_the_flips_voted_away_a_length_biased_judge_is_still_not_a_program_grader():
    rows = majority(judged())
    c = check_grader(rows)
    assert "graded_both_ways" not in c.answer and c.answer.startswith("length_bias")
    r = routing.route(rows, MODEL)
    assert r.route == "fix_reward", r.summary
    assert "program grader" not in r.next_step.why


def test_a_clean_grader_still_routes_and_is_not_called_a_judge():
    r = routing.route(S.clean(np.random.default_rng(1), ramble=False, n_tasks=300, k=8), MODEL)
    assert r.route != "fix_reward", r.summary
    assert "judge" not in r.next_step.why


def test_the_picture_of_a_route_question_0_stopped_draws_what_it_found_not_truncation():
    """Item 7: blank passes, replies graded both ways, and grade against length; no cut-off chart."""
    from pathlib import Path

    from pick_a_method.routing.pictures.route import picture
    from server.sketch import sketch

    rows = judged()
    pic = picture(rows, routing.route(rows, MODEL))
    assert pic.cut_off is None and pic.grader is not None and pic.grader.length_biased
    rates = [b.pass_rate for b in pic.grader.by_length]
    assert rates == sorted(rates) and rates[-1] - rates[0] > 0.2  # the longer, the more passes
    text = sketch(pic)
    assert "truncation decides" not in text and "grade against length within tasks" in text
    blank = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools" / "inspect_ai" / "blank" / "0.3.285"
    b = routing.read_rows(str(blank / "standin_sums_blank_judge.eval"))
    r = routing.route(b, "Qwen/Qwen3-8B")
    assert r.route == "fix_reward"
    pic = picture(b, r)
    assert pic.cut_off is None and pic.grader.blank_passes > 0
    assert "blank replies that passed" in sketch(pic)
