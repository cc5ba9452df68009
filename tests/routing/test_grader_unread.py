"""What the readers leave unsaid: a grade column that says what the reward says is not reported as a grade left unread,
and every example of a blank pass names its file, whatever tool wrote it."""

import json
import shutil
from pathlib import Path

from pick_a_method import routing
from pick_a_method.routing import read_rows

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"


def renamed_run(tmp_path, change=None):
    """vf-eval 0.3.1's run with its reward function named `correct` (as a rubric's `correct` function writes it:
    under metrics and beside them); `change` edits the top-level `correct` of some rows."""
    out = tmp_path / "run"
    shutil.copytree(TOOLS / "verifiers" / "trained" / "0.3.1", out)
    rows = []
    for i, line in enumerate((out / "results.jsonl").read_text().splitlines()):
        row = json.loads(line)
        row["metrics"]["correct"] = row["metrics"].pop("correct_answer")
        row["correct"] = row.pop("correct_answer")
        if change and i in change:
            row["correct"] = 1.0 - row["correct"]
        rows.append(json.dumps(row))
    (out / "results.jsonl").write_text("\n".join(rows) + "\n")
    return out


def test_a_correct_column_equal_to_the_reward_is_not_a_warning(tmp_path):
    rows = read_rows(str(renamed_run(tmp_path)))
    assert not any("`correct`" in n for n in rows.notes), rows.notes
    assert "correct" not in rows.graders


def test_a_correct_column_that_differs_is_still_named_and_compared(tmp_path):
    rows = read_rows(str(renamed_run(tmp_path, change={0, 5})))
    assert any(n.startswith("rows also carry `correct`") for n in rows.notes)


def test_blank_pass_examples_name_their_file_for_every_tool():
    for path in (TOOLS / "verifiers" / "blank" / "0.3.1",
                 TOOLS / "inspect_ai" / "blank" / "0.3.285" / "standin_sums_blank_judge.eval",
                 TOOLS / "inspect_ai" / "blank" / "0.3.285" / "standin_sums_blank_judge.json"):
        r = routing.route(read_rows(str(path)), "Qwen/Qwen3-8B")
        assert r.route == "fix_reward", r.summary
        shown = r.summary.split("(e.g. ", 1)[1].split(")", 1)[0]
        assert all(".jsonl" in e or ".eval" in e or ".json" in e for e in shown.split(", ")), shown
