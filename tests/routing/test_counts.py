"""Tasks and groups counted apart. A group is one task's rollouts from one sampler in one arm; where the rows have
several samplers or arms, a task has several groups, and every verdict must say which it counts: a summary that
says "20 tasks" on a set of 10 contradicts the route's own `graded_tasks`."""

import re
from pathlib import Path

import pytest

from pick_a_method import routing
from pick_a_method.routing import read_rows
from pick_a_method.routing.pictures.route import picture

ROOT = Path(__file__).resolve().parents[2]
TWO_ARMS = ROOT / "examples" / "correct_two_arms.jsonl"  # 50 tasks x 2 arms x 4 rollouts
VERL = ROOT / "tests" / "fixtures" / "eval_tools" / "verl" / "0.9.1"  # 10 tasks x 2 training steps x 4 rollouts


def two_arms():
    return read_rows(TWO_ARMS, fields={"reward": "correct"})


def said_tasks(texts):
    """Every count of tasks the texts state ("12 tasks", "20 grouped tasks", "10 graded tasks")."""
    return [int(n) for t in texts for n in re.findall(r"(\d+) (?:grouped |graded |split |all-fail )?tasks?\b", t)]


@pytest.mark.parametrize("rows, n_tasks, n_groups", [(two_arms, 50, 100), (lambda: read_rows(VERL), 10, 20)])
def test_no_verdict_says_more_tasks_than_the_rows_hold(rows, n_tasks, n_groups):
    rows = rows()
    b = routing.band(rows)
    rp = routing.rollouts_per_task(rows)
    pa = routing.pass_at(rows)
    for v in (b, rp, pa):
        assert (v.n_tasks, v.n_groups) == (n_tasks, n_groups)
    r = routing.route(rows)
    assert r.n_tasks == n_tasks
    trace = {t.name: t.evidence for t in r.trace}
    assert trace["graded"]["graded_tasks"] == trace["band"]["n_tasks"] == trace["rollouts_per_task"]["n_tasks"] \
        == n_tasks
    assert trace["band"]["n_groups"] == trace["rollouts_per_task"]["n_groups"] == n_groups
    for v in (b, rp, pa, r):
        counts = said_tasks([v.summary, *v.warnings])
        assert counts and max(counts) <= n_tasks, (v.summary, v.warnings)
    assert f"of {n_groups} groups split" in b.summary and f"{n_tasks} tasks" in b.summary
    assert f"over {n_groups} groups ({n_tasks} tasks)" in pa.summary


def test_the_verl_steps_count_split_groups_and_prompts_against_tasks():
    r = routing.route(read_rows(VERL))
    assert "Mixed: 12 of 20 groups split (60%; 10 tasks" in r.summary and "Only 12 split groups" in r.summary
    assert "Sample all 10 tasks" in r.summary
    # the prompts a step takes are tasks: 37 of them is more than the 10 tasks (not the 20 groups) here
    assert any("take 37 prompts at k=8, more than the 10 tasks here" in w for w in r.warnings)
    assert any(w.startswith("only 12 split groups") for w in r.warnings)


def test_one_sampler_still_counts_tasks():
    rows = read_rows(VERL / "1.jsonl")  # one step: a group is a task
    b = routing.band(rows)
    assert (b.n_tasks, b.n_groups) == (10, 10)
    assert "6 of 10 grouped tasks split" in b.summary
    r = routing.route(rows)
    assert "n_groups" not in next(t.evidence for t in r.trace if t.name == "band")  # said only where it differs


def test_the_picture_counts_the_groups_the_band_counts():
    rows = read_rows(VERL)
    p = picture(rows, routing.band(rows))
    assert p.band.unit == "groups" and p.band.n_groups == sum(bar.count for bar in p.band.bars) == 20
    assert "12 of 20 groups split" in p.caption


def test_several_samplers_that_each_cover_other_tasks_still_count_tasks():
    rows = read_rows(ROOT / "examples" / "async_sampler.jsonl")  # checkpoints, one group a task
    b = routing.band(rows)
    assert b.n_groups == b.n_tasks and "grouped tasks split" in b.summary and "groups split" not in b.summary
