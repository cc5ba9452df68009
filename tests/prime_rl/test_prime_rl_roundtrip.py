"""The router's next_step arguments, passed to prime_rl_config as they are, produce a valid config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from primerl_schema_table import check as table_check
from rowkit import MODEL, TEACHER, rows_from_passes

from pick_a_method.trainers.prime_rl import prime_rl_config, validate_prime_rl
from pick_a_method.routing import route

TASKSET = "refunds-v1"


def _prime_rl_steps(result):
    steps = [result.next_step, *getattr(result, "alternatives", [])]
    return [s for s in steps if s.tool == "prime_rl_config"]


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a route's step names the file it writes, relative to the working folder


def _call(step):
    args = json.loads(json.dumps(step.arguments))  # exactly what an MCP client would send back
    res = prime_rl_config(**args)
    assert res.verdict == "written" and Path(res.path) == Path.cwd() / args["out"]  # following the step writes it
    assert res.command.endswith(args["out"]) or args["out"] in res.command  # the launch names that same file
    return res


def _stale_rows():
    return rows_from_passes([0, 1, 2, 3, 4] * 8, model="Qwen/Qwen3-8B-step-40")


SCENARIOS = {
    # name: (rows, route kwargs, expected route, expected method label)
    "grpo": (lambda: rows_from_passes([0, 1, 2, 3, 4] * 8), {}, "grpo", "grpo"),
    "floor opsd": (lambda: rows_from_passes([0] * 20), {}, "floor", "opsd"),
    "single rae": (
        lambda: [{"task_id": f"p{t}", "reward": float(t < 30), "model": MODEL} for t in range(50)],
        {},
        "single_rollout",
        "rae",
    ),
    "opd": (
        lambda: rows_from_passes([3, 3, 3, 2, 3, 3, 4, 3] * 6, prefix="h"),
        {"teacher_rows": rows_from_passes([4] * 48, model=TEACHER, prefix="h"), "teacher": TEACHER,
         "teacher_base_url": "http://localhost:8001/v1", "tokenizers_match": True},
        "opd",
        "opd",
    ),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_router_next_step_round_trips(name):
    rows, kwargs, expected_route, label = SCENARIOS[name]
    result = route(rows(), model=MODEL, taskset=TASKSET, **kwargs)
    assert result.route == expected_route, result.summary
    steps = _prime_rl_steps(result)
    assert steps, f"no prime_rl_config step in {result.route}"
    for step in steps:
        assert step.needs == [], step.needs
        res = _call(step)
        assert res.method == label and res.taskset == TASKSET and res.model == MODEL
        assert validate_prime_rl(res.config) == [] and table_check(res.config) == []


def test_async_route_round_trips():
    result = route(_stale_rows(), model=MODEL, taskset=TASKSET)
    steps = _prime_rl_steps(result)
    assert result.route == "grpo" and steps and steps[0].arguments.get("method") == "async", result.next_step
    res = _call(steps[0])
    assert res.method == "async grpo" and res.config["trainer"]["loss"]["type"] == "ipo"


def test_placeholders_are_refused_with_what_to_fill_in():
    result = route(rows_from_passes([0, 1, 2, 3, 4] * 8))  # no model, no taskset
    (step,) = _prime_rl_steps(result)
    assert set(step.needs) >= {"taskset", "model"}
    with pytest.raises(ValueError, match="placeholder"):
        _call(step)
