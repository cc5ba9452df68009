"""A freeze leaves a training pool: at most FREEZE_MAX_SHARE of the suite is held out, the cap and what the capped
set detects are said, and the route's next step is sized on the tasks left to train on."""

import json

from rowkit import MODEL, rows_from_passes

from pick_a_method.routing import defaults as D
from pick_a_method.routing import freeze, holdout_size, route

CYCLE = [0, 1, 2, 3, 4, 2, 1, 3, 2, 2]


def suite(n):
    return rows_from_passes([CYCLE[i % len(CYCLE)] for i in range(n)], k=8, model=MODEL)


def test_a_200_task_eval_freezes_at_most_half_and_says_what_that_detects():
    f = freeze(suite(200), 0.05)
    asked = holdout_size(0.05, base=f.base, k=8).n_tasks
    assert asked > 100  # the registered effect asks more than half of 200
    assert f.n_tasks == 100 == f.pool_tasks and f.max_share == D.FREEZE_MAX_SHARE
    w = next(w for w in f.warnings if "holdout_size asks" in w)
    assert f"asks {asked} held-out tasks" in w and "at most 50%" in w and "separate eval suite" in w
    assert "which detect about a 0." in w
    assert "leaving 100 to train on" in f.summary


def test_the_routes_next_step_trains_on_the_pool_not_the_suite(tmp_path):
    out = tmp_path / "holdout.json"
    r = route(suite(200), MODEL, freeze=out, allowed_roots=[tmp_path])
    manifest = json.loads(out.read_text())
    pool = 200 - manifest["n_tasks"]
    assert manifest["pool_tasks"] == pool == 100
    assert f"Train on the {pool} tasks the freeze left" in r.next_step.why
    group = r.next_step.arguments["knobs"]["group_size"]
    assert r.next_step.arguments["batch"] // group <= pool
    small = route(suite(60), MODEL, freeze=tmp_path / "small.json", allowed_roots=[tmp_path])
    assert small.next_step.arguments["batch"] // group <= 30
    assert "A step samples all 30 of them" in small.next_step.why or small.next_step.arguments["batch"] // group < 30
