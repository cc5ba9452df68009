"""`after` from rows: every verdict reached from graded rows, the comparability checks, the evidence (arms, flips,
cut-offs, sizing, guards), the next steps, and the frozen manifest written by `freeze` and read back."""

import json

import numpy as np
import pytest
from rowkit import rows_from_passes

from pick_a_method import routing
from pick_a_method.routing import InputError, after, freeze

BASE, TRAINED = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-r1"
CYCLE = [0, 1, 2, 3, 4, 2, 1, 3]  # passes of 4, a spread of task difficulties


def passes(n, shift=0, cycle=CYCLE):
    return [min(max(cycle[i % len(cycle)] + shift, 0), 4) for i in range(n)]


def arm(counts, model=TRAINED, **kw):
    return rows_from_passes(counts, k=4, model=model, **kw)


def before(n=200):
    return arm(passes(n), model=BASE)


def test_a_clear_gain_is_proven_with_its_evidence():
    v = after(before(), arm(passes(200, 2)))
    assert v.verdict == "proven"
    assert v.paired.n_shared == 200 and v.paired.mean_diff == pytest.approx(np.mean(passes(200, 2)) / 4 - 0.5)
    assert v.paired.ci95[0] > 0 and "lies above 0" in v.summary
    assert v.sizing.n_tasks < 200 and v.sizing.k_needed <= 4  # these tasks suffice, so the k they need does too
    by = {a.name: a for a in v.arms}
    assert by["after"].pass_at_1 > by["before"].pass_at_1 and by["before"].ci95 is not None
    assert v.flips.fail_to_pass == 50 and v.flips.pass_to_fail == 0 and v.flips.down == 0  # 1/4 -> 3/4, 0 -> 2/4 no
    assert v.flips.fail_to_pass_tasks[:2] == ["t1", "t6"] and v.flips.up == 175 and v.flips.same == 25
    assert v.next_step.tool == "after" and "second training seed" in v.next_step.why
    assert v.next_step.arguments["guards"] == ["<name>=<before_rows>,<after_rows>"]  # the guards to fill in
    assert v.next_step.needs == ["before_rows", "after_rows", v.next_step.needs[-1]]  # given inline: pass again
    assert v.next_step.needs[-1].startswith("guards (")
    assert "No control arm" in v.summary


def test_a_loss_is_worse_and_names_the_tasks_that_flipped():
    v = after(before(), arm(passes(200, -2)))
    assert v.verdict == "worse" and v.paired.ci95[1] < 0
    assert v.flips.pass_to_fail > 0 and v.next_step.arguments["pass_to_fail"] == v.flips.pass_to_fail_tasks[:20]
    assert v.next_step.tool is None and "Roll back" in v.next_step.why


def test_the_same_rates_shuffled_over_many_tasks_is_no_gain():
    rng = np.random.default_rng(0)
    b = passes(800)
    v = after(arm(b, model=BASE), arm(rng.permutation(b).tolist()))
    assert v.verdict == "no_gain" and v.paired.ci95[1] < v.effect < v.sizing.n_tasks
    assert v.next_step.tool == "route" and v.next_step.arguments == {"rows_path": "<rows_path>", "model": BASE}


def test_few_tasks_are_underpowered_and_sized_the_way_holdout_size_sizes_them():
    b, a = arm(passes(24), model=BASE), arm(passes(24, 0, cycle=[1, 0, 2, 4, 3, 2, 1, 3]))
    v = after(b, a)
    assert v.verdict == "underpowered"
    assert v.sizing.sd_source == "rows"
    assert v.sizing.n_tasks == routing.holdout_size(v.effect, before=b, after=a).n_tasks
    assert v.sizing.detectable_effect > v.effect
    assert f"{v.sizing.n_tasks} held-out tasks at k=4" in v.summary
    assert v.next_step.tool == "after" and v.next_step.needs == [f"{a}_rows_path (re-scored at k=18)"
                                                                 for a in ("before", "after")]
    assert f"at k={v.sizing.k_needed} rollouts a task (or on {v.sizing.n_tasks} held-out tasks at k=4)" in \
        v.next_step.why


def test_more_rollouts_a_task_are_offered_where_sampling_noise_dominates():
    """Every task at 0.5 before and 0.55 after (no task spread): sampling noise is all of the spread, so k decides:
    Var d = 2 x 0.25 / k, and 100 tasks detect 0.05 at power 0.8 from k = 0.5 / (100 x 0.05^2 / 2.80^2) = 16."""
    rng = np.random.default_rng(3)
    b = rows_from_passes(rng.binomial(4, 0.5, 100).tolist(), k=4, model=BASE)
    a = rows_from_passes(rng.binomial(4, 0.55, 100).tolist(), k=4)
    v = after(b, a)
    assert v.verdict == "underpowered" and v.sizing.basis == "effect" and v.sizing.n_tasks > 300
    assert 10 <= v.sizing.k_needed <= 25 and f"k={v.sizing.k_needed} rollouts a task" in v.summary


def test_a_gain_between_0_and_the_effect_on_enough_tasks_is_sized_on_the_observed_gain():
    """400 tasks detect the registered 0.05 (holdout_size asks fewer), but the observed gain is half of it: neither
    0 nor 0.05 is excluded, so the size is what would tell the observed +0.025 from both."""
    b = [[1, 3, 2, 2, 2, 2, 1, 3, 2, 2][i % 10] for i in range(400)]
    a = [b[i] + [1, -1, 1, -1, 2, -2, 1, -1, 1, 0][i % 10] for i in range(400)]  # +0.025 a task on average
    v = after(arm(b, model=BASE), arm(a))
    assert routing.holdout_size(0.05, before=arm(b, model=BASE), after=arm(a)).n_tasks <= 400
    assert v.verdict == "underpowered" and v.sizing.basis == "observed" and v.sizing.n_tasks > 400
    assert "between 0 and the registered 0.05" in v.summary and v.sizing.k_needed is None


def test_one_rollout_a_task_cannot_split_the_spread():
    one = lambda c, m: rows_from_passes(c, k=1, model=m)  # noqa: E731
    v = after(one([0, 1] * 20, BASE), one([1, 1, 0, 1] * 10, TRAINED))
    assert v.sizing.k_needed is None and "one rollout" in v.sizing.k_why


def test_a_random_reward_arm_that_gains_is_contamination():
    v = after(before(), arm(passes(200, 1)), random_reward=arm(passes(200, 1), model="rr"))
    assert v.verdict == "contamination"
    assert v.random_reward.gain.ci95[0] > 0 and v.random_reward.explains_gain
    assert v.random_reward.of == "after - random_reward" and v.random_reward.ci95 is not None
    assert "arXiv:2507.10532" in v.next_step.why and "frozen_path" not in v.next_step.arguments


def test_a_random_selection_that_does_as_well_is_a_selection_problem():
    v = after(before(), arm(passes(200, 1)), random_selection=arm(passes(200, 1), model="rs"))
    assert v.verdict == "selection_problem" and v.random_selection.ci95[0] <= 0
    assert v.next_step.tool == "after" and "train on all the training tasks" in v.next_step.why


def test_beating_both_controls_is_proven():
    v = after(before(), arm(passes(200, 2)), random_selection=arm(passes(200, 1), model="rs"),
              random_reward=arm(passes(200), model="rr"))
    assert v.verdict == "proven"
    assert v.random_selection.ci95[0] > 0 and v.random_reward.ci95[0] > 0 and "No control arm" not in v.summary


def test_arms_on_different_tasks_are_not_comparable():
    v = after(before(100), arm(passes(100, 1), prefix="other"))
    assert v.verdict == "not_comparable" and v.paired is None
    assert "share 0 of the 200 tasks" in v.summary
    half = after(before(100), arm(passes(60, 1)))  # 60 shared of 100: compared on those 60
    assert half.verdict != "not_comparable" and half.n_tasks == 60


def test_a_different_token_cap_is_not_comparable():
    def capped(counts, cap, model):
        return [dict(r, max_tokens=cap) for r in arm(counts, model=model)]
    v = after(capped(passes(100), 1024, BASE), capped(passes(100, 1), 4096, TRAINED))
    assert v.verdict == "not_comparable" and "max_tokens" in v.summary
    assert after(capped(passes(100), 1024, BASE), capped(passes(100, 1), 1024, TRAINED)).verdict == "proven"


def test_more_cut_off_replies_beside_a_gain_is_named_as_possible_length_hacking():
    b = arm(passes(200), model=BASE)
    a = [dict(r, truncated=(i % 3 == 0)) for i, r in enumerate(arm(passes(200, 1)))]
    v = after(b, a)
    assert v.cut_offs.length_hacking and v.cut_offs.after_share > v.cut_offs.before_share
    assert any("length hacking" in w for w in v.warnings) and "length hacking" in v.summary
    unknown = after([{k: x for k, x in r.items() if k != "truncated"} for r in b], arm(passes(200, 1)))
    assert unknown.cut_offs.length_hacking is None


def test_a_regressed_guard_is_worse_under_holm():
    guard_b = arm(passes(300), model=BASE, prefix="safety")
    v = after(before(), arm(passes(200, 1)), guards={"safety": (guard_b, arm(passes(300, -1), prefix="safety")),
                                                     "general": (guard_b, arm(passes(300), prefix="safety"))})
    assert v.verdict == "worse" and "guard safety" in v.summary and "Holm across 2 guards" in v.summary
    safety = next(g for g in v.guards if g.name == "safety")
    assert safety.regressed and safety.tested_at == pytest.approx(0.975)
    assert safety.tested_ci[0] < safety.ci95[0]  # tested at the wider Holm level
    fine = after(before(), arm(passes(200, 1)), guards={"general": (guard_b, arm(passes(300), prefix="safety"))})
    assert fine.verdict == "proven" and not fine.guards[0].regressed


def test_a_guard_on_other_tasks_is_not_comparable():
    v = after(before(), arm(passes(200, 1)), guards={"g": (before(), arm(passes(200), prefix="x"))})
    assert v.verdict == "not_comparable" and "guard g" in v.summary


def test_an_arm_without_grades_is_not_comparable_and_an_arm_of_two_samplers_is_named():
    ungraded = [{k: x for k, x in r.items() if k != "reward"} for r in arm(passes(50, 1))]
    v = after(arm(passes(50), model=BASE), ungraded)
    assert v.verdict == "not_comparable" and "after has no graded rows" in v.summary
    mixed = arm(passes(50), model=BASE) + arm(passes(50, 1))
    v = after(arm(passes(50), model=BASE), mixed)
    assert any("after: rows from 2 samplers" in w and TRAINED in w for w in v.warnings)


def test_bad_guards_and_missing_arms_are_input_errors():
    with pytest.raises(InputError, match="pair"):
        after(before(), before(), guards={"g": before()})
    with pytest.raises(InputError, match="no after rows"):
        after(before(), None)
    with pytest.raises(InputError, match="effect"):
        after(before(), before(), effect=1.5)
    with pytest.raises(InputError, match="pass_threshold"):
        after(before(), before(), pass_threshold=float("nan"))


def test_rows_from_files_and_fields(tmp_path):
    b, a = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    b.write_text("".join(json.dumps({"q": r["task_id"], "ok": r["reward"] == 1.0}) + "\n" for r in before()))
    a.write_text("".join(json.dumps({"q": r["task_id"], "ok": r["reward"] == 1.0}) + "\n" for r in arm(passes(200, 1))))
    v = after(str(b), str(a), fields={"task_id": "q", "reward": "ok"})
    assert v.verdict == "proven"
    assert v.next_step.arguments["before_rows_path"] == str(b) and v.next_step.arguments["fields"]["reward"] == "ok"


# ---------------------------------------------------------------------------------------------------------
# The freeze


def suite(n=1000):
    return arm(passes(n, cycle=[0, 1, 2, 3, 4, 2, 1, 3, 2, 2]), model=BASE)


def test_freeze_draws_what_holdout_size_asks_and_writes_a_manifest(tmp_path):
    rows = suite()
    out = tmp_path / "frozen.json"
    f = freeze(rows, 0.1, seed=3, out=out, allowed_roots=[tmp_path])
    h = routing.holdout_size(0.1, base=0.5, k=4)
    assert f.verdict == "frozen" and f.n_tasks == h.n_tasks == len(f.tasks) and f.path == str(out)
    data = json.loads(out.read_text())
    assert data["format"] == "pick-a-method/frozen-holdout" and data["tasks"] == f.tasks and data["k"] == 4
    assert data["effect"] == 0.1 and data["base"] == pytest.approx(0.5) and data["seed"] == 3
    assert f.next_step.tool == "after" and f.next_step.arguments == {"frozen_path": str(out)}
    assert freeze(rows, 0.1, seed=3).tasks == f.tasks  # seeded: the same draw
    assert freeze(rows, 0.1, seed=4).tasks != f.tasks
    names = [r["task_id"] for r in rows[::4]]
    assert [names.index(t) for t in f.tasks] == sorted(names.index(t) for t in f.tasks)  # the rows' order


def test_freeze_refuses_what_it_cannot_do(tmp_path):
    with pytest.raises(InputError, match="more than the 40 graded tasks"):
        freeze(suite(40), 0.05, n_tasks=41)
    capped = freeze(suite(40), 0.05)  # more than half asked: capped at half (tests/routing/test_freeze_pool.py)
    assert capped.n_tasks == 20 and capped.pool_tasks == 20
    out = tmp_path / "f.json"
    freeze(suite(), 0.1, out=out)
    with pytest.raises(ValueError, match="already exists"):
        freeze(suite(), 0.1, out=out)
    with pytest.raises(ValueError, match="outside the folders"):
        freeze(suite(), 0.1, out=tmp_path / "g.json", allowed_roots=[tmp_path / "elsewhere"])
    with pytest.raises(ValueError, match="must end in .json"):
        freeze(suite(), 0.1, out=tmp_path / "g.toml")
    small = freeze(suite(), 0.1, n_tasks=50)
    assert small.n_tasks == 50 and any("less than 0.8 power" in w for w in small.warnings)


def test_after_compares_only_the_frozen_tasks_and_every_arm_must_cover_them(tmp_path):
    rows = suite()
    out = tmp_path / "frozen.json"
    f = freeze(rows, 0.1, out=out)
    trained = arm(passes(1000, 1, cycle=[0, 1, 2, 3, 4, 2, 1, 3, 2, 2]))
    v = after(rows, trained, frozen=str(out))
    assert v.verdict == "proven" and v.n_tasks == f.n_tasks and v.frozen.dropped == 1000 - f.n_tasks
    assert v.effect == 0.1 and v.next_step.arguments["frozen_path"] == str(out)
    same = after(rows, trained, frozen=freeze(rows, 0.1))  # the model itself, not written: the same draw
    assert same.paired == v.paired and same.frozen.path is None
    kept = set(f.tasks)
    partial = [r for r in trained if r["task_id"] in kept and r["task_id"] != f.tasks[0]]
    v = after(rows, partial, frozen=out)
    assert v.verdict == "not_comparable" and v.frozen.missing == {"after": [f.tasks[0]]}
    assert f"after did not score 1 of the {f.n_tasks} frozen tasks" in v.summary


def test_the_manifest_is_checked(tmp_path):
    out = tmp_path / "frozen.json"
    freeze(suite(), 0.1, out=out)
    with pytest.raises(InputError, match="registered effect 0.1"):
        after(suite(), suite(), frozen=out, effect=0.05)
    data = json.loads(out.read_text())
    data["tasks"] = data["tasks"][1:]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    v = after(suite(), suite(), frozen=edited)
    assert any("edited after the draw" in w for w in v.warnings)
    (tmp_path / "x.json").write_text(json.dumps({"tasks": ["a"]}))
    with pytest.raises(InputError, match="not a pick-a-method/frozen-holdout manifest"):
        after(suite(), suite(), frozen=tmp_path / "x.json")
    with pytest.raises(InputError, match="outside the folders"):
        after(suite(), suite(), frozen=out, roots=[tmp_path / "elsewhere"])
    with pytest.raises(InputError, match="not a manifest file"):
        after(suite(), suite(), frozen=tmp_path / "missing.json")


def test_the_manifest_token_cap_must_match_the_arms(tmp_path):
    capped = [dict(r, max_tokens=2048) for r in suite()]
    out = tmp_path / "frozen.json"
    assert freeze(capped, 0.1, out=out).max_tokens == 2048
    again = [dict(r, max_tokens=8192) for r in suite()]
    v = after(again, again, frozen=out)
    assert v.verdict == "not_comparable" and "frozen manifest max_tokens 2048" in v.summary
