"""`after`'s words against its evidence: a next step that asks only for what was not given, and a size that is
never below what the tasks can show (nor a gain past the whole scale)."""

import json

from rowkit import rows_from_passes

from pick_a_method.routing import after

BASE, TRAINED = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-r1"
CYCLE = [0, 1, 2, 3, 4, 2, 1, 3]  # passes of 4, a spread of task difficulties


def passes(n, shift=0):
    return [min(max(CYCLE[i % len(CYCLE)] + shift, 0), 4) for i in range(n)]


def arm(counts, model=TRAINED, **kw):
    return rows_from_passes(counts, k=4, model=model, **kw)


def test_proven_with_guards_given_asks_for_a_second_seed_not_the_guards_again(tmp_path):
    files = {}
    for name, counts, model in (("before", passes(200), BASE), ("after", passes(200, 2), TRAINED),
                                ("guard_before", passes(300), BASE), ("guard_after", passes(300), TRAINED)):
        files[name] = tmp_path / f"{name}.jsonl"
        rows = arm(counts, model, prefix="g" if "guard" in name else "t")
        files[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    v = after(str(files["before"]), str(files["after"]),
              guards={"general": (str(files["guard_before"]), str(files["guard_after"]))})
    assert v.verdict == "proven" and not v.guards[0].regressed
    assert "No guard regressed (general" in v.summary
    step = v.next_step
    assert step.tool == "after" and "guards" not in step.arguments
    assert step.arguments["before_rows_path"] == str(files["before"])
    assert step.arguments["after_rows_path"] == "<after_rows_path>"  # the second seed's checkpoint, to fill in
    assert step.needs == ["after_rows_path (a second training seed's checkpoint on the same held-out tasks)"]
    assert "second training seed" in step.why and "general" in step.why


def test_arms_that_do_not_differ_detect_what_the_model_spread_says_not_zero():
    """The same rows twice: every paired difference is 0, so the interval is about 0 wide; what these tasks can
    detect is still the binomial model's (the size beside it uses that sd), never 0."""
    rows = arm(passes(40), model=BASE)
    v = after(rows, arm(passes(40), model=TRAINED))  # the same passes, another model (the same rows: not_comparable)
    s = v.sizing
    assert s.sd_source == "model" and s.detectable_effect > 0.1
    assert f"detect a gain of {s.detectable_effect:.3f}" in v.summary and "detect a gain of 0.000" not in v.summary
    assert s.k_why == "the paired differences do not vary: no spread to split"


def test_a_single_task_detects_no_gain_rather_than_one_past_the_scale():
    one = rows_from_passes([1], k=1, model=BASE)
    v = after(one, rows_from_passes([1], k=1, model=TRAINED))
    assert v.verdict == "underpowered" and v.sizing.detectable_effect >= 1
    assert "This task at k=1 detects no gain (a pass rate can rise by 1 at most)" in v.summary
    assert "measured spread" not in v.next_step.why and "no spread was measured" in v.next_step.why
