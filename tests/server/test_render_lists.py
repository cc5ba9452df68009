"""A printed verdict shows a list of flat tables whole, one table a line: after's arms (each pass@1 with its
interval) and its guards (regressed or not), which a person needs and which were once left to --json."""

from rowkit import rows_from_passes

from pick_a_method.routing import after
from pick_a_method.server.render import render

BASE, TRAINED = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-r1"


def test_after_prints_each_arm_and_each_guard_on_a_line():
    before = rows_from_passes([0, 1, 2, 3, 4] * 40, model=BASE)
    trained = rows_from_passes([2, 3, 4, 4, 4] * 40, model=TRAINED)
    guard = rows_from_passes([1, 2, 3] * 40, model=BASE, prefix="g")
    v = after(before, trained, guards={"safety": (guard, rows_from_passes([1, 2, 3] * 40, model=TRAINED, prefix="g"))})
    lines = render(v).splitlines()
    assert "see --json" not in "\n".join(lines)
    arms = [line for line in lines if line.startswith("    - name before") or line.startswith("    - name after")]
    assert len(arms) == 2 and all("pass_at_1 " in a and "ci95 [" in a for a in arms), arms
    (guard_line,) = [line for line in lines if line.startswith("    - name safety")]
    assert "regressed false" in guard_line and "mean_diff 0.0" in guard_line
