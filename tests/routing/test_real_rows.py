"""Real eval rows as they come. Several samplers, arms, SDK-format rows, `correct` grades, hub names."""

import json
import subprocess
import sys

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing import InputError, read_rows, route
from pick_a_method.common.identity import relation

from rowkit import EXAMPLES, MODEL, rows_from_passes

BASE, R1 = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-Base-r1"
TWO = EXAMPLES / "two_checkpoints.jsonl"


# --- one table: samplers and arms are never pooled --------------------------------------------------------


def test_two_checkpoints_route_on_the_trained_models_own_rows():
    r = route(read_rows(TWO), R1)
    assert r.route == "grpo"  # not "sft": half the rows are R1's own
    assert next(t for t in r.trace if t.name == "rollouts_per_task").evidence["k"] == 4  # not 8: never pooled
    others = [w for w in r.warnings if "also holds rows of" in w]
    assert len(others) == 1 and BASE in others[0] and "does not clear" in others[0]
    assert r.next_step.arguments["model"] == R1
    q5 = next(t for t in r.trace if t.name == "teacher_clears")
    assert q5.decided is False and q5.evidence["in_file_teachers"][0]["model"] == BASE


def test_the_weaker_checkpoint_gets_the_stronger_one_as_its_teacher():
    r = route(read_rows(TWO), BASE)
    assert r.route == "opd" and r.next_step.arguments["knobs"]["teacher"] == R1
    op = next(t for t in r.trace if t.name == "teacher_clears")
    assert op.evidence["in_file_teachers"][0]["decided_by"] == "paired"


def test_on_policy_evidence_has_a_summary_per_sampler():
    op = routing.on_policy(read_rows(TWO), R1)
    by = {s["model"]: s for s in op.samplers}
    assert set(by) == {BASE, R1} and by[R1]["rows"] == 560 and by[R1]["tasks"] == 140
    assert by[R1]["pass_at_1"] > by[BASE]["pass_at_1"]


def test_arms_are_separate_groups():
    rows = read_rows(EXAMPLES / "correct_two_arms.jsonl", fields={"reward": "correct"})
    t = routing.table_of(rows, 1.0)
    assert len(t) == 100 and t.n_tasks == 50 and set(t.n.tolist()) == {4}
    p = routing.pass_at(rows)
    assert {s["arm"] for s in p.by_sampler} == {"control", "treatment"}
    assert routing.rollouts_per_task(rows).k == 4


def test_table_columns_add_up():
    rows = routing.as_rows([{"task_id": "a", "reward": 1, "model": "m", "truncated": True, "num_tokens": 10},
                            {"task_id": "a", "reward": 0.5, "model": "m", "truncated": False},
                            {"task_id": "a", "reward": None, "model": "n"},
                            {"task_id": "b", "reward": 0, "model": "m", "finish_reason": "length", "num_tokens": 30}])
    t = routing.table_of(rows, 1.0)
    assert t is routing.table_of(rows, 1.0)  # built once, cached on the rows
    got = {(rows.task_names[a], t.model_names[m]): (int(n), int(c), int(tr), int(tp), int(u), int(nb))
           for a, m, n, c, tr, tp, u, nb in zip(t.task, t.model, t.n, t.c, t.truncated, t.truncated_passes,
                                                t.ungraded, t.nonbinary)}
    assert got == {("a", "m"): (2, 1, 1, 1, 0, 1), ("a", "n"): (0, 0, 0, 0, 1, 0), ("b", "m"): (1, 0, 1, 0, 0, 0)}
    assert t.reward_sum.tolist() == [1.5, 0.0, 0.0] and t.reward_sq.tolist() == [1.25, 0.0, 0.0]
    assert t.tokens_sum.tolist() == [10.0, 0.0, 30.0] and t.tokens_n.tolist() == [1, 0, 1]


def test_an_async_samplers_checkpoints_are_one_sampler_but_two_evals_are_two():
    spread = [{"task_id": f"t{t}", "reward": float((t + j) % 2), "model": f"{MODEL}@step-{j}"}
              for t in range(6) for j in range(4)]  # each task's 4 rollouts from 4 policy versions
    assert routing.rollouts_per_task(spread).k == 4
    evals = [{"task_id": f"t{t}", "reward": float((t + j) % 2), "model": f"{MODEL}@step-{s}"}
             for s in (0, 200) for t in range(6) for j in range(4)]
    t = routing.table_of(routing.as_rows(evals), 1.0)
    assert len(t) == 12 and set(t.n.tolist()) == {4}


# --- fields as they come -------------------------------------------------------------------------------


def test_correct_grades_are_named_with_the_argument_that_reads_them():
    path = EXAMPLES / "correct_two_arms.jsonl"
    for verdict in (route(read_rows(path), MODEL), routing.band(read_rows(path)), routing.pass_at(read_rows(path))):
        assert any('fields={"reward": "correct"}' in w for w in verdict.warnings), verdict.warnings
    r = route(read_rows(path), MODEL)
    assert r.route == "grade_first" and "correct" in r.summary
    assert r.next_step.arguments["fields"] == {"reward": "correct"}
    assert route(read_rows(path, fields=r.next_step.arguments["fields"]), MODEL).route == "grpo"


def test_a_near_miss_reward_name_keeps_its_hint_in_route():
    rows = [{"task_id": f"t{i % 4}", "rewrd": i % 2} for i in range(16)]
    r = route(rows, MODEL)
    assert any("did you mean 'rewrd'" in w for w in r.warnings)


@pytest.mark.parametrize("fast", [False, True])
def test_sdk_format_rows_are_read_natively(request, fast):
    if fast:
        request.getfixturevalue("columnar_always")
    rows = read_rows(EXAMPLES / "sdk_rows.jsonl")
    assert rows.model_names == [f"{MODEL}@step-120"] and rows.n_tasks == 60
    assert rows.tokens is not None and rows.n_truncation_stated == len(rows)
    assert not np.isnan(rows.max_tokens).any()
    r = route(rows, MODEL)
    assert r.route == "grpo" and r.methods[0].startswith("Async")


@pytest.fixture
def columnar_always(monkeypatch):
    """The example files are small: make the columnar reader take them anyway."""
    from pick_a_method.routing.readers import columnar

    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    return columnar


def test_columnar_and_careful_readers_agree(columnar_always):
    for name in ("sdk_rows.jsonl", "two_checkpoints.jsonl", "mixed.jsonl"):
        path = EXAMPLES / name
        fast = read_rows(path)
        slow = routing.as_rows([json.loads(line) for line in path.read_text().splitlines()])
        for col in ("task", "reward", "truncated", "stated", "model", "max_tokens"):
            assert np.array_equal(getattr(fast, col), getattr(slow, col), equal_nan=True), (name, col)
        assert fast.task_names == slow.task_names and fast.model_names == slow.model_names
        assert np.array_equal(fast.lines, np.arange(1, len(fast) + 1))


def test_read_rows_takes_a_list_and_fields():
    rows = [{"q": f"t{i % 3}", "ok": bool(i % 2), "run": {"ckpt": "m"}} for i in range(12)]
    got = read_rows(rows, fields={"task_id": "q", "reward": "ok", "model": "run.ckpt"})
    assert got.n_tasks == 3 and got.model_names == ["m"] and not np.isnan(got.reward).any()
    with pytest.raises(InputError, match="the names it maps are"):
        read_rows(rows, fields={"grade": "ok"})


def test_a_dotted_csv_header_is_one_column(columnar_always, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("task_id,reward,sampling.model\n" + "".join(f"t{i % 4},{i % 2},m\n" for i in range(16)))
    assert read_rows(path).model_names == ["m"]


# --- model identity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("row_model, trained, expected", [
    ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "same"),
    ("qwen/qwen3-8b", "Qwen/Qwen3-8B", "same"),  # hub ids ignore case; said with both names
    ("/models/Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "same"),  # a local copy
    ("Qwen/Qwen3-8B@step-40", "Qwen/Qwen3-8B", "checkpoint"),
    ("Qwen/Qwen3-8B/checkpoint-400", "Qwen/Qwen3-8B", "checkpoint"),
    ("/runs/Qwen3-8B/global_step_40/actor", "Qwen/Qwen3-8B", "checkpoint"),
    ("Qwen/Qwen3-8B-step-40", "Qwen/Qwen3-8B", "checkpoint"),
    ("Qwen/Qwen3-8B:ckpt-3", "Qwen/Qwen3-8B", "checkpoint"),
    ("/ckpt/run1/checkpoint-400", "/ckpt/run1", "checkpoint"),
    ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B", "other"),
    ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B", "other"),
    ("Qwen/Qwen3-8B-FP8", "Qwen/Qwen3-8B", "other"),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct", "other"),
    ("nvidia/Llama-3.1-Nemotron-Nano-8B-v1", "nvidia/Llama-3.1-Nemotron-Nano-8B", "other"),
    ("Qwen/Qwen3-8B-v2", "Qwen/Qwen3-8B", "other"),
    ("unsloth/Qwen3-8B", "Qwen/Qwen3-8B", "other"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "other"),
    ("Qwen/Qwen3-80B", "Qwen/Qwen3-8B", "other"),
    ("Qwen/Qwen3-8B-step", "Qwen/Qwen3-8B", "other"),
])
def test_hub_names(row_model, trained, expected):
    assert relation(row_model, trained)[0] == expected


def test_a_release_suffix_is_another_model_said_with_both_names():
    rows = rows_from_passes([0, 1, 2, 3, 4] * 8, model="nvidia/Llama-3.1-Nemotron-Nano-8B-v1")
    r = route(rows, "nvidia/Llama-3.1-Nemotron-Nano-8B")
    assert r.route == "sft" and "Async" not in " ".join(r.methods)
    assert "Nemotron-Nano-8B-v1" in r.summary and "model='nvidia/Llama-3.1-Nemotron-Nano-8B-v1'" in r.summary


# --- the teacher, decided by the paired test -----------------------------------------------------------


def test_paired_test_decides_and_the_summary_says_so():
    rng = np.random.default_rng(3)
    p = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=140)
    student = [{"task_id": f"t{t}", "reward": float(j < round(4 * p[t])), "model": "s"} for t in range(140) for j in range(4)]
    gain = [min(4, round(4 * p[t]) + (1 if 0 < p[t] < 1 and t % 3 else 0)) for t in range(140)]
    teacher = [{"task_id": f"t{t}", "reward": float(j < gain[t]), "model": "t"} for t in range(140) for j in range(4)]
    tc = routing.teacher_clears(teacher, student)
    assert tc.decided_by == "paired" and tc.paired.ci95[0] > 0 and tc.paired.mean_diff >= 0.05
    assert tc.clears is True and tc.apart is False  # whileai's unpaired rule alone would refuse
    assert "paired test" in tc.summary and "unpaired rule" in tc.summary


def test_a_refused_teacher_keeps_the_students_rows_in_next_step(tmp_path):
    path = tmp_path / "student.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_from_passes([1, 2, 3, 2] * 10)))
    weak = rows_from_passes([1, 2, 3, 2] * 10, model="Qwen/Qwen3-32B")
    tc = routing.teacher_clears(weak, read_rows(path))
    assert tc.verdict == "does_not_clear"
    assert tc.next_step.arguments == {"rows_path": str(path), "model": MODEL}


def test_a_teacher_scored_with_a_longer_budget_is_asked_again_on_the_same_files(tmp_path):
    """The teacher's rows say max_tokens 8192, the student's 4096: undecided, and the next step is this very
    question again with both paths kept, once the teacher is re-scored at the student's budget."""
    teacher, student = tmp_path / "teacher.jsonl", tmp_path / "student.jsonl"
    for path, budget, passes in ((teacher, 8192, [3, 4, 4, 3] * 10), (student, 4096, [1, 2, 1, 2] * 10)):
        rows = [{**r, "max_tokens": budget} for r in rows_from_passes(passes)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tc = routing.teacher_clears(read_rows(teacher), read_rows(student), effect=0.1)
    assert tc.verdict == "undecided" and "max_tokens 8192" in tc.summary
    assert tc.next_step.tool == "teacher_clears"
    assert tc.next_step.arguments == {"teacher_rows_path": str(teacher), "student_rows_path": str(student),
                                      "effect": 0.1}
    assert tc.next_step.needs == ["teacher rows re-scored at max_tokens 4096"]


# --- trainer, before_gpu, small things --------------------------------------------------------------------


@pytest.mark.parametrize("trainer, tool, data", [("prime-rl", "prime_rl_config", ["taskset"]),
                                                 ("trl", "trl_config", ["dataset", "reward_funcs"]),
                                                 ("verl", "verl_config", ["train_files", "val_files",
                                                                          "reward_function"])])
def test_trainer_names_its_config_tool_with_a_call_it_accepts(mixed_rows, trainer, tool, data, tmp_path,
                                                              monkeypatch):
    from pick_a_method.trainers import prime_rl, trl, verl

    r = route(mixed_rows, MODEL, taskset="refunds-v1", trainer=trainer)
    step, prime = r.next_step, route(mixed_rows, MODEL, taskset="refunds-v1").next_step
    assert step.tool == tool
    # the same method, model, knobs and batch; the data argument and the file written are the trainer's own
    assert {k: v for k, v in step.arguments.items() if k not in ("taskset", "out")} == \
        {k: v for k, v in prime.arguments.items() if k not in ("taskset", "out")}
    assert ("taskset" in step.arguments) is (trainer == "prime-rl")
    if trainer != "prime-rl":
        assert set(data) <= set(step.needs)
    writer = {"prime_rl_config": prime_rl.prime_rl_config, "trl_config": trl.trl_config,
              "verl_config": verl.verl_config}[tool]
    monkeypatch.chdir(tmp_path)  # the step names a file to write, relative to the working folder
    written = writer(**step.arguments)  # the call as the route gives it: the writer takes it, and writes the file
    assert written.text and written.path == str(tmp_path / step.arguments["out"])
    if trainer != "prime-rl":  # the data still missing, the writer names too
        assert any(name in need for need in written.needs for name in data)
    with pytest.raises(InputError, match="trainer"):
        route(mixed_rows, MODEL, trainer="axolotl")


def test_before_gpu_says_the_base_is_assumed_at_the_ceiling(saturated_rows):
    r = route(saturated_rows, MODEL)
    assert "assumed base 0.60" in r.before_gpu[0] and "measured base 1.00" in r.before_gpu[0]


def test_before_gpu_weighs_the_holdout_against_the_suite():
    r = route(read_rows(TWO), R1)
    assert "The suite has 140 tasks" in r.before_gpu[0]


def test_one_task_is_singular_and_single_rollout_warnings_are_not_doubled(mixed_rows):
    rows = mixed_rows + [{"task_id": "lonely", "reward": 1.0, "truncated": False, "model": MODEL}]
    r = route(rows, MODEL)
    single = [w for w in r.warnings if "single graded rollout" in w or "one graded rollout" in w]
    assert len(single) == 1 and single[0].startswith("1 task has")


def test_cli_subcommands_never_import_mcp():
    code = ("import sys; from pick_a_method.server import cli; cli.main(['route', sys.argv[1], '--json']); "
            "print('MCP', 'mcp' in sys.modules, 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(TWO)], capture_output=True, text=True, check=True)
    assert "MCP False False" in out.stdout  # a small file does not wait for pyarrow's import either


def test_without_pyarrow_the_careful_reader_gives_the_same_rows(columnar_always, monkeypatch, tmp_path):
    fast = read_rows(TWO)
    monkeypatch.setattr(columnar_always, "_load", lambda: False)
    slow = read_rows(TWO)
    assert np.array_equal(fast.task, slow.task) and np.array_equal(fast.model, slow.model)
    assert route(slow, R1).route == route(fast, R1).route
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": "yes"}\n')
    with pytest.raises(InputError, match=r"line 2 of .*reward is str 'yes'"):
        read_rows(bad)


def test_a_bad_value_is_named_by_line_even_past_the_fast_reader(columnar_always, tmp_path):
    path = tmp_path / "rows.jsonl"
    good = "".join(json.dumps(r) + "\n" for r in rows_from_passes([1, 2, 3] * 40))
    path.write_text(good + json.dumps({"task_id": "x", "reward": 1, "model": 7}) + "\n")
    with pytest.raises(InputError, match=r"line 481 of .*model is int") as e:
        read_rows(path)
    assert e.value.field == "model"
