"""The route on the whileai skill's own fixtures (its check.py rows), the bugs of its code it fixes, and the edges."""

import math

import pytest

from pick_a_method import routing
from pick_a_method.routing import InputError, route

from rowkit import MODEL, TEACHER, rows_from_passes


def decided(r):
    return [t for t in r.trace if t.decided]


@pytest.mark.parametrize("fixture, teacher, expected, methods", [
    ("cut_off_rows", None, "fix_reward", []),
    ("one_per_prompt", None, "single_rollout", ["FlashReinforce", "SAO", "BPCO", "rae"]),
    ("floor_rows", None, "floor", ["OPSD", "SFT"]),
    ("saturated_rows", None, "saturated", ["GroupwiseGrading", "harder eval"]),
    ("student_rows", "weak_teacher_rows", "grpo", None),
    ("student_rows", "strong_teacher_rows", "opd", ["OPD"]),
    ("teacher_made_rows", None, "sft", ["SFT", f"OPD from {TEACHER}"]),
    ("mixed_rows", None, "grpo", ["GRPO", "ReinforceAda"]),
])
def test_seed_fixtures_route_as_the_seed_says(request, fixture, teacher, expected, methods):
    rows = request.getfixturevalue(fixture)
    teacher_rows = request.getfixturevalue(teacher) if teacher else None
    r = route(rows, MODEL, teacher_rows)
    assert r.route == expected and r.verdict == expected
    if methods is not None:
        assert r.methods == methods
    assert len(decided(r)) == 1, "exactly one question decides"
    assert r.summary and r.next_step.why


def test_trace_follows_the_seed_order(mixed_rows, weak_teacher_rows):
    r = route(mixed_rows, MODEL, weak_teacher_rows)
    assert [t.question for t in r.trace] == [0, 0, 1, 2, 3, 4, 5, 6]  # question order
    assert [t.name for t in r.trace[:2]] == ["grader", "graded"]  # question 0 asks the grader, then the grades
    band = next(t for t in r.trace if t.name == "band")
    assert band.evidence["split_share"] == pytest.approx(0.6)
    assert band.evidence["n_split"] == 24


def test_cut_off_next_step_names_the_rows(cut_off_rows):
    r = route(cut_off_rows, MODEL)
    listed = r.next_step.arguments["truncated_passes"]
    assert len(listed) == routing.defaults.LIST_LIMIT and listed[0] == {"row": 0, "task_id": "t0"}
    assert next(t for t in r.trace if t.question == 1).evidence["count"] == 20
    assert r.before_gpu == []  # nothing to train yet


def test_opd_next_step_is_a_prime_rl_call(student_rows, strong_teacher_rows):
    r = route(student_rows, MODEL, strong_teacher_rows, taskset="refunds-v1", teacher_base_url="http://localhost:8001/v1")
    assert r.next_step.tool == "prime_rl_config"
    assert r.next_step.arguments == {"taskset": "refunds-v1", "method": "opd", "model": MODEL,
                                     "knobs": {"teacher": TEACHER, "base_url": "http://localhost:8001/v1"},
                                     "out": "opd-prime-rl.toml"}  # following the step writes the config
    assert r.next_step.needs == []


def test_missing_taskset_is_a_named_placeholder(mixed_rows):
    r = route(mixed_rows, MODEL)
    assert r.next_step.arguments["method"] == "grpo"
    assert r.next_step.needs == ["taskset"]
    assert r.next_step.arguments["taskset"].startswith("<")


def test_single_rollout_points_at_preview_update_and_rae(one_per_prompt):
    r = route(one_per_prompt, MODEL, taskset="refunds-v1")
    assert r.next_step.tool == "preview_update"
    assert r.alternatives[0].tool == "prime_rl_config"
    assert r.alternatives[0].arguments["method"] == "rae"
    assert r.alternatives[0].arguments["knobs"] == {"group_size": 1}


# --- the whileai skill's code is wrong here; the router is right and says so--------------------------------


def test_ungraded_rows_are_grade_first_not_floor():
    rows = [{"task_id": f"t{i}", "reward": None, "truncated": False, "model": MODEL} for i in range(12)]
    r = route(rows, MODEL)
    assert r.route == "grade_first"
    assert any("no reward" in w for w in r.warnings)


def test_boolean_and_half_rewards_are_read_not_dropped():
    rows = [{"task_id": f"t{i % 6}", "reward": (i % 3 == 0), "model": MODEL} for i in range(24)]
    assert routing.pass_at(rows).n_graded == 24
    half = [{"task_id": f"t{i % 6}", "reward": 0.5, "model": MODEL} for i in range(24)]
    r = route(half, MODEL)
    assert r.route == "floor"  # 0.5 < pass_threshold 1.0: every task fails, and the warnings say why
    assert any("other than 0 or 1" in w for w in r.warnings)
    assert route(half, MODEL, pass_threshold=0.5).route == "saturated"


def test_too_few_tasks_is_undecided_not_a_crash():
    r = route(rows_from_passes([1, 3]), MODEL)
    assert r.route == "grade_first"
    assert "Undecided" in r.summary and next(t for t in r.trace if t.name == "graded").answer == "too_few"


def test_rows_without_model_are_unknown_not_off_policy(mixed_rows):
    for row in mixed_rows:
        del row["model"]
    r = route(mixed_rows, MODEL)
    assert r.route == "grpo"
    assert next(t for t in r.trace if t.name == "on_policy").answer == "unknown"
    assert any("on-policy unknown" in w for w in r.warnings)


def test_one_singleton_among_groups_does_not_force_single_rollout(mixed_rows):
    rows = mixed_rows + [{"task_id": "lonely", "reward": 1.0, "truncated": False, "model": MODEL}]
    r = route(rows, MODEL)
    assert r.route == "grpo"
    assert any("single graded rollout" in w for w in r.warnings)


def test_floor_under_7b_is_sft_from_a_stronger_model(floor_rows):
    r = route(floor_rows, "Qwen/Qwen3-0.6B")
    assert r.route == "floor" and r.methods == ["SFT"]
    assert (r.next_step.tool, r.next_step.arguments["method"]) == ("trl_config", "sft")
    r8 = route(floor_rows, "Qwen/Qwen3-8B")
    assert r8.methods[0] == "OPSD" and r8.next_step.arguments["method"] == "opsd"


def test_off_policy_pairs_route_to_dpo(teacher_made_rows):
    for i, row in enumerate(teacher_made_rows):
        row.update(chosen="a", rejected="b")
    assert route(teacher_made_rows, MODEL).route == "dpo"
    for row in teacher_made_rows:
        del row["chosen"], row["rejected"]
    assert route(teacher_made_rows, MODEL, preference_pairs=True).route == "dpo"


def test_older_checkpoint_wraps_grpo_in_async(mixed_rows):
    for row in mixed_rows:
        row["model"] = MODEL + "@step-40"
    r = route(mixed_rows, MODEL)
    assert r.route == "grpo" and r.methods[0].startswith("Async")
    assert r.next_step.arguments["method"] == "async"
    assert r.next_step.arguments["knobs"]["correction"] == "ipo"


def test_teacher_with_a_longer_budget_is_not_trusted(student_rows, strong_teacher_rows):
    for row in student_rows:
        row["max_tokens"] = 2048
    for row in strong_teacher_rows:
        row["sampling"] = {"max_tokens": 8192}
    r = route(student_rows, MODEL, strong_teacher_rows)
    assert r.route != "opd"
    step = next(t for t in r.trace if t.name == "teacher_clears")
    assert step.answer == "undecided"


def test_tokenizer_mismatch_blocks_opd(student_rows, strong_teacher_rows):
    r = route(student_rows, MODEL, strong_teacher_rows, tokenizers_match=False)
    assert r.route == "grpo"
    assert next(t for t in r.trace if t.name == "teacher_clears").answer == "tokenizer_mismatch"


def test_before_gpu_sizes_the_holdout_and_asks_for_the_controls(mixed_rows):
    r = route(mixed_rows, MODEL)
    n = routing.holdout_size(0.05, base=0.5, k=4).n_tasks
    assert str(n) in r.before_gpu[0]
    assert "random selection" in r.before_gpu[1]
    assert "random-reward" in r.before_gpu[2]  # a Qwen base
    assert "after(" in r.before_gpu[3]  # then the call that judges the trained checkpoint
    llama = route(mixed_rows, "meta-llama/Llama-3.1-8B").before_gpu
    assert len(llama) == 3 and "random_reward" not in llama[-1]  # no random-reward arm off a Qwen base


# --- edges -----------------------------------------------------------------------------------------------


def test_empty_input_is_grade_first():
    r = route([], MODEL)
    assert r.route == "grade_first" and r.n_rows == 0


def test_int_and_string_task_ids_are_one_task():
    rows = [{"task_id": 1, "reward": 1}, {"task_id": "1", "reward": 0}, {"task_id": 2, "reward": 1},
            {"task_id": "2", "reward": 1}, {"task_id": 3, "reward": 0}, {"task_id": "3", "reward": 0}]
    g = routing.rollouts_per_task(rows)
    assert g.n_tasks == 3 and g.k == 2
    assert routing.band(rows).n_split == 1


def test_string_and_nan_rewards():
    rows = [{"task_id": f"t{i % 4}", "reward": v} for i, v in enumerate(["1", "0", " 1 ", "true", math.nan, "1e0", 0, False])]
    p = routing.pass_at(rows)
    assert p.n_graded == 7 and p.n_ungraded == 1
    assert any("NaN" in w for w in p.warnings)


@pytest.mark.parametrize("row, field, words", [
    ({"reward": 1}, "task_id", "no task_id"),
    ({"task_id": "a", "reward": "yes"}, "reward", "must be"),
    ({"task_id": "a", "reward": math.inf}, "reward", "finite"),
    ({"task_id": {"x": 1}, "reward": 1}, "task_id", "string or an integer"),
    ({"task_id": "a", "reward": 1, "truncated": "maybe"}, "truncated", "true or false"),
    ({"task_id": "a", "reward": 1, "model": 7}, "model", "as a string"),
    ({"task_id": "a", "reward": [1]}, "reward", "must be"),
])
def test_a_bad_row_is_named_with_its_field(row, field, words):
    rows = rows_from_passes([1, 2, 3]) + [row]
    with pytest.raises(InputError) as e:
        route(rows, MODEL)
    assert e.value.row == 12 and e.value.field == field
    assert "row 12" in str(e.value) and words in str(e.value)


def test_a_row_that_is_not_an_object():
    with pytest.raises(InputError, match=r"row 1 is a JSON list"):
        routing.band([{"task_id": "a", "reward": 1}, [1, 2]])


def test_uneven_groups(mixed_rows):
    rows = mixed_rows + rows_from_passes([5, 2], k=8, prefix="big")
    rp = routing.rollouts_per_task(rows)
    assert (rp.k, rp.k_max) == (4, 8) and rp.sizes == {"4": 40, "8": 2}
    assert any("uneven" in w for w in rp.warnings)


def test_finish_reason_length_counts_as_truncated():
    rows = [{"task_id": f"t{i}", "reward": 1, "finish_reason": "length"} for i in range(3)]
    tp = routing.truncated_passes(rows)
    assert tp.verdict == "fix_reward" and tp.count == 3


def test_unknown_truncation_is_reported_not_decided():
    rows = [{"task_id": f"t{i % 5}", "reward": float(i % 2)} for i in range(20)]
    tp = routing.truncated_passes(rows)
    assert tp.verdict == "unknown" and tp.share is None
    assert route(rows, MODEL).trace[0].decided is False


def test_model_size_is_read_off_the_name():
    assert routing.model_params_b("Qwen/Qwen3-0.6B") == 0.6
    assert routing.model_params_b("meta-llama/Llama-3.1-70B-Instruct") == 70
    assert routing.model_params_b("Qwen/Qwen3-30B-A3B") == 30
    assert routing.model_params_b("openai/gpt-oss-20b") == 20
    assert routing.model_params_b("my-model") is None


@pytest.mark.parametrize("trainer", ["prime-rl", "trl", "verl"])
@pytest.mark.parametrize("fixture, options, method", [
    ("teacher_made_rows", {}, "sft"),
    ("teacher_made_rows", {"preference_pairs": True}, "dpo"),
    ("floor_rows", {"params_b": 0.6}, "sft"),  # a floor under ~7B: SFT from a stronger model, not OPSD
])
def test_a_supervised_route_names_the_trl_call_that_writes_it(request, fixture, options, method, trainer):
    """SFT and DPO routes used to end in prose; their next step is now trl_config (prime-rl's `rl` and verl's RL
    trainer have neither), and the call, with the dataset filled in, is one TRL's writer builds."""
    from pick_a_method.trainers.trl import trl_config

    r = route(request.getfixturevalue(fixture), MODEL, trainer=trainer, **options)
    step = r.next_step
    assert (r.route, step.tool, step.arguments["method"], step.needs) == (
        "floor" if fixture == "floor_rows" else method, "trl_config", method, ["dataset"])
    assert (trainer == "trl") == ("TRL writes it" not in step.why)
    assert step.arguments["out"] == f"{method}-trl.yaml"
    built = trl_config(**{**step.arguments, "out": None}, dataset="someone/their-dataset")
    assert built.method == method and built.model == MODEL
