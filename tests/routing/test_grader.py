"""Question 0 from the replies (routing/before_training/grader.py): each broken grader is caught, and clean graders raise nothing.

Simulated evals with a known grader (tests/gradersim.py) measure how often: the false alarms on program graders
whose replies' lengths vary for other reasons, and the power against each broken grader. Row dicts through
`route` check what the verdict says and where it points. The eval tools' own files are in test_grader_tools.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import gradersim as S
from rowkit import MODEL, rows_from_passes

from pick_a_method import routing
from pick_a_method.routing import defaults as D
from pick_a_method.routing import read_rows
from pick_a_method.routing.before_training.grader import check_grader, judge_audit_rows
from pick_a_method.routing.pictures.grader import caption_line
from pick_a_method.routing.pictures.route import picture

EVALS = 200  # simulated evals per case (bench/grader_bench.py runs more)


def rate(make, what, seed=0, evals=EVALS):
    """The share of simulated evals where question 0's answer names `what` (any finding, for "any")."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(evals):
        answer = check_grader(make(rng)).answer
        hits += answer not in ("ok", "no_replies") if what == "any" else what in answer.split(", ")
    return hits / evals


# -- clean graders: quiet ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    dict(),  # lengths vary by task, by chance, and on half the sets wrong answers ramble
    dict(samplers=2),  # two samplers in each task, one writes longer and is stronger
    dict(ramble=True, k=16),  # wrong answers always longer, many rollouts per task
    dict(ramble=False, n_tasks=400, k=8),  # large: length independent of the grade
])
def test_a_program_grader_raises_nothing_in_95_percent_of_evals(case):
    false_alarms = rate(lambda r: S.clean(r, **case), "any")
    assert false_alarms <= 0.05  # the bar: 95% of evals; measured 0 of 200 in each case (bench: 0-2 of 2,000)


def test_the_length_test_holds_its_level_where_length_and_grade_are_unrelated():
    rng = np.random.default_rng(1)
    found = [check_grader(S.clean(rng, ramble=False)).evidence.get("length") for _ in range(300)]
    zs = [f["z"] for f in found if f is not None]
    assert len(zs) > 250
    assert abs(np.mean(zs)) < 0.2 and 0.85 < np.std(zs) < 1.15  # z is standard normal under no link
    assert np.mean(np.array(zs) > 3.09) < 0.01


# -- broken graders: caught ----------------------------------------------------------------------------------------

def test_a_grader_that_passes_blanks_stops_the_route_every_time():
    assert rate(lambda r: S.blank_passes(r, share=0.02), "blank_passes") == 1.0
    rng = np.random.default_rng(2)
    rows = S.blank_passes(rng, share=0.02)
    r = routing.route(rows, MODEL)
    q0 = next(t for t in r.trace if t.name == "grader")
    blank_passes = int(((rows.reply_len == 0) & (rows.reward >= 1)).sum())
    assert r.route == "fix_reward" and q0.decided and q0.evidence["blank_passes"] == blank_passes > 0
    assert [t.name for t in r.trace] == ["grader"]  # it decided first: question 1 was not asked
    assert f"{blank_passes} blank replies passed" in r.summary and r.before_gpu == []


def test_a_flaky_grader_is_caught_and_a_rare_flip_is_a_warning():
    assert rate(lambda r: S.flaky(r, flip=0.1), "graded_both_ways") >= 0.95
    rng = np.random.default_rng(3)
    rows = S.flaky(rng, flip=0.1, n_tasks=200, k=8)
    c = check_grader(rows)
    assert c.decided and c.evidence["flip_share"] > D.GRADER_FLIP_SHARE
    r = routing.route(rows, MODEL)
    assert r.route == "fix_reward" and "got different grades within a task" in r.summary
    shown = r.next_step.arguments["graded_both_ways"]
    assert len(shown) == D.GRADER_EXAMPLES and shown == c.evidence["flip_examples"]
    # one repeated reply graded apart among many: said with its count, not a stop
    rows = S.clean(np.random.default_rng(4), n_tasks=300, k=8, ramble=False)
    repeated = check_grader(rows).evidence["repeated_replies"]
    assert repeated > 1 / D.GRADER_FLIP_SHARE
    task, h = rows.task, rows.reply_hash
    same = next(i for i in range(len(rows)) for j in range(i + 1, i + 8)
                if j < len(rows) and task[i] == task[j] and h[i] == h[j] and rows.reply_len[i] > 0
                and not rows.truncated[i] and not rows.truncated[j])
    rows.reward[same] = 1 - rows.reward[same]
    c = check_grader(rows)
    assert not c.decided and c.evidence["graded_both_ways"] == 1
    assert any(f"1 of {repeated} repeated replies" in w for w in c.warnings)


@pytest.mark.parametrize("beta,power", [(1.0, 0.85), (2.0, 0.95)])
def test_a_judge_that_favours_long_replies_is_named(beta, power):
    assert rate(lambda r: S.length_judge(r, beta=beta), "length_bias") >= power  # bench: 0.94 / 1.00


def test_the_length_warning_names_length_and_the_audit():
    rng = np.random.default_rng(5)
    c = check_grader(S.length_judge(rng, beta=2.0, n_tasks=300, k=8))
    assert "length_bias" in c.answer and c.evidence["length"]["rho"] >= D.LENGTH_MIN_RHO
    assert any("length" in w and "audit-your-judge" in w for w in c.warnings)


# -- several graders ----------------------------------------------------------------------------------------------

def test_two_graders_agreement_and_kappa_are_cohens():
    rng = np.random.default_rng(6)
    rows = S.two_graders(rng, wrong=0.1, n_tasks=100, k=4)
    c = check_grader(rows)
    (g,) = c.evidence["graders"]
    a, b = rows.reward >= 1, rows.graders["second"] >= 1
    p_o = (a == b).mean()
    p_e = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    assert g["agreement"] == pytest.approx(p_o, abs=1e-4) and g["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e),
                                                                                            abs=1e-4)
    assert g["disagree_rows"] == int((a != b).sum())
    first = [f"t{t}" for t in dict.fromkeys(rows.task[a != b].tolist())][: D.LIST_LIMIT]
    assert g["disagree_tasks"] == first and "graders_differ" in c.answer
    assert any("`second`" in w and f"kappa {g['kappa']:.2f}" in w for w in c.warnings)


def test_graders_that_agree_everywhere_raise_nothing():
    rng = np.random.default_rng(7)
    c = check_grader(S.two_graders(rng, wrong=0.0))
    assert c.answer == "ok" and c.evidence["graders"][0]["kappa"] == 1.0 and not c.warnings


def test_a_second_grade_mapped_by_fields_is_compared():
    rows = [{"task_id": f"t{t}", "reward": float(j < 2), "judge_score": float(j < 2 if t else j < 3),
             "completion": f"reply {t}-{j}"} for t in range(10) for j in range(4)]
    c = check_grader(read_rows(rows, fields={"other_rewards": "judge_score"}))
    (g,) = c.evidence["graders"]
    assert g["name"] == "judge_score" and g["disagree_rows"] == 1 and g["disagree_tasks"] == ["t0"]


# -- a judge ---------------------------------------------------------------------------------------------------------

def test_a_judge_field_says_a_model_graded_and_how_many_rows_to_label():
    rows = [{**r, "judge_model": "gpt-4.1", "completion": f"reply {i}"}
            for i, r in enumerate(rows_from_passes([0, 1, 2, 3, 4] * 6))]
    r = routing.route(rows, MODEL)
    q0 = r.trace[0]
    n = judge_audit_rows(0.5)
    assert q0.evidence["judge"]["audit_rows"] == n and r.route == "grpo"
    assert any("a model graded the reward read" in w and f"hand-label {n} rows" in w for w in r.warnings)


def test_the_audit_size_gives_the_kappa_interval_it_promises():
    """Label that many rows by hand where the judge's kappa is 0.8: the kappa estimate's 95% range is the width."""
    rng = np.random.default_rng(8)
    p, kappa = 0.5, D.JUDGE_AUDIT_KAPPA
    n = judge_audit_rows(p)
    p_e = p * p + (1 - p) * (1 - p)
    agree = kappa + (1 - kappa) * p_e
    estimates = []
    for _ in range(4000):
        judge = rng.random(n) < p
        human = np.where(rng.random(n) < agree, judge, ~judge)
        po = (judge == human).mean()
        pe = judge.mean() * human.mean() + (1 - judge.mean()) * (1 - human.mean())
        estimates.append((po - pe) / (1 - pe))
    half = (np.percentile(estimates, 97.5) - np.percentile(estimates, 2.5)) / 2
    assert half == pytest.approx(D.JUDGE_AUDIT_HALF_WIDTH, rel=0.15)
    assert judge_audit_rows(0.9) > n  # a skewed pass rate leaves less room above chance: more rows


# -- row dicts through route ---------------------------------------------------------------------------------------

def rows_with(replies, rewards, **extra):
    return [{"task_id": f"t{i // 4}", "reward": w, "truncated": False, "model": MODEL, "completion": c, **extra}
            for i, (c, w) in enumerate(zip(replies, rewards))]


def base(n_tasks=12):
    passes = [j < 2 for _ in range(n_tasks) for j in range(4)]
    return [f"the answer is {i}" for i in range(4 * n_tasks)], [float(p) for p in passes]


def test_blank_and_whitespace_replies_that_pass_are_named_by_line(tmp_path):
    replies, rewards = base()
    replies[5], rewards[5] = "", 1.0
    replies[22], rewards[22] = " \n\t", 1.0
    replies[30], rewards[30] = "", 0.0  # a blank reply that fails is what a sound grader does
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_with(replies, rewards)))
    r = routing.route(read_rows(path), MODEL)
    q0 = r.trace[0]
    assert r.route == "fix_reward" and q0.evidence["blank_passes"] == 2 and q0.evidence["blank_replies"] == 3
    assert [e["line"] for e in q0.evidence["blank_pass_examples"]] == [6, 23]
    assert q0.evidence["blank_pass_tasks"] == ["t1", "t5"]
    assert f"line 6 of {path}" in r.summary
    assert r.next_step.arguments["blank_passes"][0] == {"row": 5, "line": 6, "task_id": "t1"}


def test_a_null_reply_is_not_a_blank_one():
    replies, rewards = base()
    replies[5] = None
    c = check_grader(rows_with(replies, rewards))
    assert c.answer == "ok" and c.evidence["replies"] == 47 and c.evidence["blank_passes"] == 0


def test_a_message_list_is_read_at_its_last_assistant_message():
    replies, rewards = base()
    msgs = [[{"role": "user", "content": "q"}, {"role": "assistant", "content": r}] for r in replies]
    msgs[3] = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "   "}]
    rewards[3] = 1.0
    c = check_grader(rows_with(msgs, rewards))
    assert c.evidence["blank_passes"] == 1 and c.evidence["replies"] == 48


def test_a_tool_trajectory_is_not_cut_down_to_its_last_message():
    replies, rewards = base()
    msgs = [[{"role": "assistant", "content": "", "tool_calls": [{"id": "1", "type": "function"}]},
             {"role": "tool", "content": "ok"}, {"role": "assistant", "content": ""}] for _ in replies]
    c = check_grader(rows_with(msgs, rewards))  # the last message is blank, but the tools did the work
    assert not c.decided and c.evidence["tool_trajectories"] == 48 and c.evidence["blank_passes"] == 0


def test_a_placeholder_reply_in_every_row_is_no_reply():
    replies, rewards = base()
    c = check_grader(rows_with(["..."] * len(replies), rewards))
    assert c.answer == "no_replies" and "placeholder" in c.evidence["note"] and not c.decided
    c = check_grader(rows_with([""] * len(replies), rewards))  # replies left out of an export
    assert c.answer == "no_replies" and not c.decided


def test_the_reply_under_another_name_is_mapped_by_fields():
    replies, rewards = base()
    rewards[0], replies[0] = 1.0, ""
    rows = [{k if k != "completion" else "answer": v for k, v in r.items()} for r in rows_with(replies, rewards)]
    assert check_grader(rows).answer == "no_replies"
    assert check_grader(read_rows(rows, fields={"completion": "answer"})).evidence["blank_passes"] == 1


def test_rows_without_replies_answer_as_before_and_say_what_replies_would_add():
    r = routing.route(rows_from_passes([0, 1, 2, 3, 4] * 8), MODEL)
    q0 = r.trace[0]
    assert (q0.name, q0.answer, q0.decided) == ("grader", "no_replies", False)
    assert "blank replies that pass" in q0.evidence["note"] and r.route == "grpo"
    assert [t.name for t in r.trace[:2]] == ["grader", "graded"]


# -- the picture -----------------------------------------------------------------------------------------------------

def test_the_band_caption_says_nothing_new_unless_question_0_found_something():
    clean = rows_from_passes([0, 1, 2, 3, 4] * 8)
    r = routing.route(clean, MODEL)
    assert caption_line(r.trace) is None and "Grader" not in picture(clean, r, model=MODEL).caption
    replies, rewards = base(40)
    replies[5], rewards[5] = "", 1.0
    rows = rows_with(replies, rewards)
    r = routing.route(rows, MODEL)
    caption = picture(rows, r, model=MODEL).caption
    assert caption.startswith("Route: fix_reward. Grader: 1 blank reply passed. The grader, not the model, decides")
    assert "cut off" not in caption  # question 1 was not asked


def test_the_flip_share_threshold_is_half_the_effect_to_prove():
    # 5% of repeated pairs graded apart is a per-grade flip chance q with 2q(1 - q) = 0.05: about half PROVE_EFFECT
    q = (1 - math.sqrt(1 - 2 * D.GRADER_FLIP_SHARE)) / 2
    assert q == pytest.approx(D.PROVE_EFFECT / 2, rel=0.05)


def test_one_text_for_every_rollout_of_a_task_is_said_not_stopped_on():
    """Alpaca-style rows keep the reference answer under `output`: one text a task, graded both ways by the rollouts'
    own grades. That may be a broken grader at temperature 0, or not the replies at all: said, not a stop."""
    rows = [{"task_id": f"t{t}", "reward": float(j < 2), "output": f"reference {t}"}
            for t in range(12) for j in range(4)]
    c = check_grader(rows)
    assert not c.decided and c.evidence["one_text_per_task"] and c.evidence["graded_both_ways"] == 12
    assert any("reference answer" in w and 'fields={"completion": ...}' in w for w in c.warnings)
    assert routing.route(rows, MODEL).route == "grpo"
