"""route's freeze: before the GPU it draws the held-out tasks its advice sizes and writes their manifest (the same
draw `freeze` makes, on the trained model's own rows), never over a file nor outside the allowed folders; where the
rows cannot give the tasks, or the route says to fix the rows first, nothing is written and a warning says why.
Either way its last check names the `after` call that judges the trained checkpoint, with the manifest when one was
written, and that call runs."""

import json
import re

import pytest
from rowkit import EXAMPLES, MODEL, rows_from_passes

from pick_a_method import routing
from pick_a_method.routing import InputError, freeze, route

CYCLE = [0, 1, 2, 3, 4, 2, 1, 3, 2, 2]


def suite(n=600, model=MODEL):
    return rows_from_passes([CYCLE[i % len(CYCLE)] for i in range(n)], k=4, model=model)


def after_call(line):
    """The after(...) call a check names, as keyword arguments (placeholders kept)."""
    inner = re.search(r"after\(([^()]*)\)", line)[1]
    return dict((k, v.strip("'")) for k, v in (a.split("=", 1) for a in inner.split(", ")))


def test_route_freezes_the_draw_its_advice_sizes_and_names_the_after_call(tmp_path):
    rows = suite()
    out = tmp_path / "holdout.json"
    r = route(rows, MODEL, effect=0.1, freeze=out, allowed_roots=[tmp_path])
    manifest = json.loads(out.read_text())
    drawn = freeze(rows, 0.1, model=MODEL)  # the same seeded draw, not written
    assert manifest["tasks"] == drawn.tasks and manifest["effect"] == 0.1 and manifest["k"] == 4
    assert manifest["model"] == MODEL and manifest["n_tasks"] == drawn.n_tasks == routing.holdout_size(
        0.1, base=0.5, k=4).n_tasks
    first, last = r.before_gpu[0], r.before_gpu[-1]
    assert first.startswith(f"Froze {drawn.n_tasks} held-out tasks (seed 0) into {out} to show a 0.1 gain at k=4")
    assert f"{600 - drawn.n_tasks} remain to train on" in first and "freeze=" not in first
    call = after_call(last)
    assert call == {"before_rows_path": "<base_rows>", "after_rows_path": "<trained_rows>",
                    "random_selection_rows_path": "<random_selection_rows>",
                    "random_reward_rows_path": "<random_reward_rows>", "frozen_path": str(out)}  # a Qwen 3 base
    assert "on the frozen tasks at k=4 or more" in last
    # the call, its rows filled in, judges on the frozen tasks: the base against a checkpoint that gained
    trained = rows_from_passes([min(CYCLE[i % len(CYCLE)] + 1, 4) for i in range(600)], model="acme/r1")
    v = routing.after(rows, trained, random_selection=rows, random_reward=rows, frozen=call["frozen_path"])
    assert v.frozen.path == str(out) and v.n_tasks == drawn.n_tasks and v.effect == 0.1
    assert v.verdict == "proven", v.summary


def test_without_freeze_the_advice_says_how_and_the_after_call_carries_the_effect():
    r = route(suite(), "meta-llama/Llama-3.1-8B", effect=0.1)
    assert "Route with freeze='holdout.json' draws them (seeded) and writes their manifest." in r.before_gpu[0]
    assert len(r.before_gpu) == 3  # no random-reward arm off a Qwen base
    assert after_call(r.before_gpu[-1]) == {"before_rows_path": "<base_rows>", "after_rows_path": "<trained_rows>",
                                            "random_selection_rows_path": "<random_selection_rows>", "effect": "0.1"}
    assert "on the held-out tasks at k=4" in r.before_gpu[-1]
    default = route(suite(), MODEL)  # the default effect is after's own default: not repeated
    assert "effect" not in after_call(default.before_gpu[-1])


def test_a_freeze_never_replaces_a_manifest_and_stays_inside_the_allowed_folders(tmp_path):
    out = tmp_path / "holdout.json"
    out.write_text("{}")
    with pytest.raises(InputError, match="already exists: a frozen manifest is the registered held-out set") as e:
        route(suite(), MODEL, effect=0.1, freeze=out)
    assert f"frozen_path='{out}'" in str(e.value) and out.read_text() == "{}"
    with pytest.raises(ValueError, match="outside the folders"):
        route(suite(), MODEL, effect=0.1, freeze=tmp_path / "new.json", allowed_roots=[tmp_path / "elsewhere"])
    with pytest.raises(ValueError, match="freeze must end in .json"):
        route(suite(), MODEL, effect=0.1, freeze=tmp_path / "new.toml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["holdout.json"]


def test_a_suite_too_small_or_a_route_that_fixes_the_rows_first_freezes_nothing_and_says_why(tmp_path):
    small = route(suite(60), MODEL, effect=0.05, freeze=tmp_path / "holdout.json")  # capped at half: 30 frozen
    assert json.loads((tmp_path / "holdout.json").read_text())["n_tasks"] == 30
    assert any("separate eval suite" in w for w in small.warnings)
    assert "at most 50% of the suite, so 30 stay to train on" in small.before_gpu[0]
    tiny = route(suite(3), MODEL, effect=0.05, freeze=tmp_path / "tiny.json")
    assert not (tmp_path / "tiny.json").exists()
    assert any(w.startswith(f"nothing frozen into {tmp_path / 'tiny.json'}") for w in tiny.warnings)
    cut = route(routing.read_rows(EXAMPLES / "cut_off.jsonl"), MODEL, freeze=tmp_path / "cut.json")
    assert cut.route == "fix_reward" and cut.before_gpu == [] and not (tmp_path / "cut.json").exists()
    assert any("nothing frozen: route fix_reward says to fix the rows before training" in w for w in cut.warnings)


def test_the_draw_is_the_trained_models_own_rows_when_the_file_holds_others(tmp_path):
    mine, other = suite(600), suite(600, model="Qwen/Qwen3-32B")
    other = [dict(r, task_id="x" + r["task_id"]) for r in other]  # tasks only the other sampler scored
    out = tmp_path / "holdout.json"
    route(mine + other, MODEL, effect=0.1, freeze=out)
    tasks = json.loads(out.read_text())["tasks"]
    assert tasks == freeze(mine, 0.1).tasks and not any(t.startswith("x") for t in tasks)
