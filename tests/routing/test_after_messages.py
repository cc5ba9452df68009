"""`after` in the core: a regressed guard quotes its own flipped tasks, a tool's summary file or a freeze
manifest given as rows is named with the file to give instead, and the proven picture keeps the caveat."""

from pathlib import Path

import pytest
from rowkit import rows_from_passes

from pick_a_method.routing import InputError, after, freeze, read_rows
from pick_a_method.routing.pictures.route import picture

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
BASE, TRAINED = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-r1"
CYCLE = [0, 1, 2, 3, 4, 2, 1, 3]


def passes(n, shift=0):
    return [min(max(CYCLE[i % len(CYCLE)] + shift, 0), 4) for i in range(n)]


def test_a_regressed_guard_quotes_its_own_flipped_tasks_not_the_main_suites():
    main_before = rows_from_passes([3, 1] * 100, model=BASE)  # the main suite: tasks m1, m3 ... fall 3 -> 1 ...
    main_after = rows_from_passes([1, 4] * 100, model=TRAINED)  # ... and m0, m2 ... rise more: a gain overall
    g_before = rows_from_passes(passes(300), model=BASE, prefix="safety")
    g_after = rows_from_passes(passes(300, -2), model=TRAINED, prefix="safety")
    v = after(main_before, main_after, guards={"safety": (g_before, g_after)})
    assert v.verdict == "worse" and v.flips.pass_to_fail > 0  # the main suite has its own flips
    why = v.next_step.why
    assert "guard safety:" in why and "of its tasks flipped pass -> fail (e.g. safety" in why
    assert "(e.g. t" not in why  # the main suite's task ids are not quoted as the guard's
    assert all(t.startswith("safety") for t in v.next_step.arguments["pass_to_fail"])


@pytest.mark.parametrize("path, says", [
    (TOOLS / "lm_eval" / "0.4.13" / "seeds" / "run-seed1" / "Qwen__Qwen3-8B"
     / "results_2026-12-01T23-35-07.163244.json",
     "lm-eval's results_*.json"),
    (TOOLS / "verifiers" / "0.3.1" / "metadata.json", "vf-eval's metadata.json"),
])
def test_a_tools_summary_given_as_rows_names_the_file_to_give(path, says):
    with pytest.raises(InputError) as e:
        read_rows(str(path))
    assert says in str(e.value) and "wrap the rows" not in str(e.value)


def test_a_freeze_manifest_given_as_rows_says_to_pass_it_as_frozen(tmp_path):
    out = tmp_path / "frozen.json"
    freeze(str(TOOLS / "verifiers" / "0.3.1"), 0.3, n_tasks=5, out=out)
    with pytest.raises(InputError) as e:
        read_rows(str(out))
    assert "frozen held-out manifest" in str(e.value) and "--frozen frozen.json" in str(e.value)


def test_the_proven_pictures_title_keeps_the_not_yet_attributed_caveat():
    b, a = TOOLS / "verifiers" / "0.3.1", TOOLS / "verifiers" / "trained" / "0.3.1"
    v = after(str(b), str(a))
    assert v.verdict == "proven" and "not yet attributed" in v.summary
    pic = picture(read_rows(str(b)), v, after_rows=read_rows(str(a)))
    assert "not yet attributed" in pic.title
