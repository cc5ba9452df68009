"""`after`'s words against its evidence: a next step that asks only for what was not given."""

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
