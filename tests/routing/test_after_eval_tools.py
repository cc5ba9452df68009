"""`after` on files the eval tools wrote themselves: each tool ran the stand-in model twice on the same ten sums,
once with its base policy (the "before" arm, tests/fixtures/eval_tools/<tool>/<version>/) and once with its trained
policy (the "after" arm, <tool>/trained/<version>/; standin_model.py TRAINED_POLICY). Read as-is, the verdict must be
what the policies imply, and the paired difference must match the anchor SDK's compare_runs on the same rows.

Per task, passes of 4 (base -> trained): 4 -> 4, 4 -> 3, 0 -> 0, 0 -> 3, then 2 -> 4, 3, 4, 3, 3, 4. So after - before
is +0.275, one task flips fail -> pass (task 3), none pass -> fail, one falls (task 1), and the cut-offs go from 3 of
40 (one of them passing) to 1 of 40.
"""

from pathlib import Path

import numpy as np
import pytest

from pick_a_method.routing import after, read_rows

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
PAIRS = {
    "inspect-ai 0.3.285": (TOOLS / "inspect_ai" / "0.3.285" / "standin_sums.eval",
                           TOOLS / "inspect_ai" / "trained" / "0.3.285" / "standin_sums.eval", "sum-"),
    "verifiers 0.3.1": (TOOLS / "verifiers" / "0.3.1", TOOLS / "verifiers" / "trained" / "0.3.1", ""),
}
BEFORE = [4, 4, 0, 0, 2, 2, 2, 2, 2, 2]
AFTER = [4, 3, 0, 3, 4, 3, 4, 3, 3, 4]


@pytest.mark.parametrize("tool", PAIRS)
def test_after_reads_both_runs_as_is_and_finds_the_trained_policy_proven(tool):
    before_path, after_path, prefix = PAIRS[tool]
    v = after(str(before_path), str(after_path))
    assert v.verdict == "proven", v.summary
    assert v.n_tasks == 10 and v.paired.mean_diff == pytest.approx(0.275)
    assert v.paired.ci95[0] > 0
    arms = {a.name: a for a in v.arms}
    assert arms["before"].pass_at_1 == pytest.approx(0.5) and arms["after"].pass_at_1 == pytest.approx(0.775)
    assert arms["before"].model == "Qwen/Qwen3-8B" and arms["after"].model == "acme/Qwen3-8B-r1"
    assert arms["before"].k == arms["after"].k == 4
    assert (v.flips.fail_to_pass, v.flips.pass_to_fail, v.flips.up, v.flips.down) == (1, 0, 7, 1)
    assert v.flips.fail_to_pass_tasks == [f"{prefix}3"]
    assert v.cut_offs.before_share == pytest.approx(3 / 40) and v.cut_offs.after_share == pytest.approx(1 / 40)
    assert v.cut_offs.length_hacking is False
    assert any("before: 1 replies cut off" in w for w in v.warnings)  # the base's passing cut-off (sum 5)
    assert v.next_step.arguments["before_rows_path"] == str(before_path)
    assert "fields" not in v.next_step.arguments  # the reader finds its own mapping again: only the caller's is passed


def test_runs_of_two_tools_name_their_tasks_differently_and_pair_by_prompt():
    """vf-eval names the tasks 0..9, inspect sum-0..sum-9: the same prompts, so the same verdict as either tool alone
    (tests/routing/test_after_pairing.py has the rest)."""
    v = after(str(PAIRS["verifiers 0.3.1"][0]), str(PAIRS["inspect-ai 0.3.285"][1]))
    assert v.verdict == "proven" and v.paired_by == "prompt" and v.paired.mean_diff == pytest.approx(0.275)
    assert any("paired by prompt" in w for w in v.warnings)


def test_the_runs_hold_what_the_policies_say():
    for before_path, after_path, prefix in PAIRS.values():
        for path, counts in ((before_path, BEFORE), (after_path, AFTER)):
            rows = read_rows(path)
            passed = {rows.task_names[t]: 0 for t in range(rows.n_tasks)}
            for t, r in zip(rows.task.tolist(), rows.reward.tolist()):
                passed[rows.task_names[t]] += r == 1.0
            assert [passed[f"{prefix}{i}"] for i in range(10)] == counts


# ---------------------------------------------------------------------------------------------------------
# The anchor SDK's paired comparison on the same rows


def plain(path):
    """The rows as the anchor SDK takes them: task_id and reward."""
    rows = read_rows(path)
    return [{"task_id": rows.task_names[t], "reward": r} for t, r in zip(rows.task.tolist(), rows.reward.tolist())]


def test_the_difference_matches_whileai_compare_runs_and_the_interval_is_wider_on_ten_tasks():
    """Same rows, same pairing by task, same mean difference. The intervals differ by construction: compare_runs
    takes a percentile bootstrap of the ten per-task differences (2000 draws, seed 0), which runs short on few tasks
    (Bowyer et al. 2025, arXiv:2503.01747; bench/coverage_bench.py: 0.84-0.91 on 10 tasks); `after` takes MOVER
    from each arm's score limits, capped at its 40 rollouts, which covers 0.93-0.97 from 40 tasks and is wider here."""
    stats = pytest.importorskip("whileai.simulations.score.stats")
    for before_path, after_path, _ in PAIRS.values():
        anchor = stats.compare_runs(plain(before_path), plain(after_path))
        v = after(str(before_path), str(after_path))
        assert anchor["paired"] and anchor["n_paired"] == v.paired.n_shared == 10
        assert anchor["delta"] == pytest.approx(v.paired.mean_diff, abs=1e-12)
        assert anchor["verdict"] == "b_better"  # both say the checkpoint is better here
        lo, hi = anchor["ci95"]
        assert v.paired.ci95[0] < lo and v.paired.ci95[1] >= hi - 0.03  # ours wider, mostly below


def _big(seed, tasks=400, k=4, gain=0.05):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, tasks)
    rows = lambda q, m: [{"task_id": f"t{i}", "reward": float(x), "model": m}  # noqa: E731
                         for i, qi in enumerate(q) for x in rng.random(k) < qi]
    return rows(p, "base"), rows(np.clip(p + gain, 0, 1), "trained")


def test_on_many_tasks_the_two_intervals_agree():
    """400 tasks x 4: the bootstrap's and MOVER's limits agree within 0.005 (both are near the normal interval
    there); the difference is exact."""
    stats = pytest.importorskip("whileai.simulations.score.stats")
    for seed in range(3):
        b, a = _big(seed)
        anchor = stats.compare_runs(b, a)
        v = after(b, a)
        assert anchor["delta"] == pytest.approx(v.paired.mean_diff, abs=1e-12)
        assert anchor["ci95"][0] == pytest.approx(v.paired.ci95[0], abs=0.005)
        assert anchor["ci95"][1] == pytest.approx(v.paired.ci95[1], abs=0.005)


def test_equal_differences_get_a_point_from_the_bootstrap_and_an_interval_here():
    """Every task one pass of four better: the bootstrap resamples identical differences and returns a point,
    [0.25, 0.25], as if the gain were known exactly. MOVER starts from each arm's own limits and stays an interval,
    though a narrow one: the arms move together perfectly (correlation 1), which cancels most of their spread."""
    stats = pytest.importorskip("whileai.simulations.score.stats")
    b = [{"task_id": f"t{i}", "reward": float(j < 1 + i % 3)} for i in range(30) for j in range(4)]
    a = [{"task_id": f"t{i}", "reward": float(j < 2 + i % 3)} for i in range(30) for j in range(4)]
    anchor = stats.compare_runs(b, a)
    assert anchor["ci95"] == (0.25, 0.25)
    v = after(b, a)
    assert v.paired.mean_diff == pytest.approx(0.25) and v.paired.ci95[1] - v.paired.ci95[0] > 0.01
