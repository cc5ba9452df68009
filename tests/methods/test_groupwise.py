"""GroupwiseGrading: ranking factors, eq. 3 redistribution, both modes, grader failures, spread, update."""

import pytest
import torch

from pick_a_method.methods import GroupwiseGrading
from pick_a_method.methods.rules.groupwise import factors_from_ranking, redistribute, spread


def test_factors_from_ranking():
    assert factors_from_ranking([3, 1, 0]) == {3: 1.0, 1: 0.75, 0: 0.5}
    assert factors_from_ranking([3, [1, 0], 5]) == {3: 1.0, 1: 0.75, 0: 0.75, 5: 0.5}
    assert list(factors_from_ranking(list(range(5)), 0.2).values()) == pytest.approx([1.0, 0.8, 0.6, 0.4, 0.2])
    assert factors_from_ranking([7]) == {7: 1.0}
    with pytest.raises(ValueError, match="once"):
        factors_from_ranking([1, 1])


def test_redistribute_examples():
    R = [1, 1, 1, 0, 0, 1, 0, 0]
    f = {0: 1, 1: 0.75, 2: 0.75, 5: 0.5}
    shaped, lam = redistribute(R, f)
    assert lam == pytest.approx(4 / 3)
    assert shaped == pytest.approx([0.6667, 0.5, 0.5, -0.5, -0.5, 0.3333, -0.5, -0.5], abs=1e-4)
    capped, lam = redistribute(R, f, cap=1.0)
    assert capped == pytest.approx([0.5625, 0.4375, 0.4375, -0.4375, -0.4375, 0.3125, -0.4375, -0.4375])
    assert sum(capped) == pytest.approx(0.0)
    plain, lam = redistribute([1, 1], {0: 1, 1: 1})  # all pass: unshaped
    assert plain == [0.0, 0.0] and lam is None
    with pytest.raises(ValueError, match="pass 5 needs a factor"):
        redistribute(R, {0: 1, 1: 1, 2: 1})


def _items(completions, rewards):
    return [{"prompt": "p", "completion": c, "reward": r, "task_id": "t"} for c, r in zip(completions, rewards)]


def ranking_grader(group):
    passes = sorted((it for it in group if it["passed"]), key=lambda it: len(it["completion"]))
    return {"ranking": [it["index"] for it in passes], "hacks": [it["index"] for it in group if "HACK" in it["completion"]]}


def test_advantage_mode_with_a_hack():
    g = GroupwiseGrading(grader=ranking_grader)
    out = g.group(_items(["a", "abcdef", "HACK", "x", "y"], [1, 1, 1, 0, 0]))
    assert out == pytest.approx([1.2, 0.8, 0.0, 0.0, 0.0])
    assert g.stats["hacks"] == 1 and g.stats["grader_calls"] == 1


def test_reward_mode_and_grader_failures():
    g = GroupwiseGrading(mode="reward", grader=lambda item, rubric: {"solution": 0.9 if item["completion"] == "a" else 0.6, "behavior": 0.8})
    assert g.group(_items("abcde", [1, 1, 1, 0, 0])) == pytest.approx([0.72, 0.48, 0.48, 0, 0])

    def broken(group):
        raise RuntimeError("judge down")

    b = GroupwiseGrading(grader=broken)
    assert b.group(_items("ab", [1, 0])) == [1.0, 0.0]
    assert b.stats["grader_failures"] == 1
    out_of_range = GroupwiseGrading(mode="reward", grader=lambda item, rubric: {"solution": 2.0, "behavior": 1.0})
    assert out_of_range.group(_items("ab", [1, 0])) == [1.0, 0.0]


def test_shape_flat_layout_and_errors():
    g = GroupwiseGrading(grader=ranking_grader, concurrency=4)
    out = g.shape([1, 1, 0, 1, 0, 0], ["p"] * 6, ["aa", "a", "x", "a", "x", "y"], group_size=3)
    # "a" (index 1) is shorter, so it ranks first; the output is shaped advantages + the group mean
    assert out[:3] == pytest.approx([a + 2 / 3 for a in redistribute([1, 1, 0], {1: 1.0, 0: 0.5})[0]])
    assert out[:3][1] > out[:3][0] > out[:3][2]
    assert out[3:] == pytest.approx([1.0, 0.0, 0.0])  # one pass: nothing to redistribute
    with pytest.raises(ValueError, match="groups of 4"):
        g.shape([1, 0, 1], ["p"] * 3, ["a"] * 3, group_size=4)


def test_spread():
    assert not spread([0.93] * 20).ok
    assert spread([0.1, 0.5, 0.9, 0.3]).ok
    assert not spread([0.5]).ok


def test_update_turns_shaped_advantages_into_coefficients():
    trajs = [
        {"reward": r, "logprobs": [-0.5, -0.5], "completion": c, "prompt": "p", "task_id": "t"}
        for c, r in zip(["a", "abcdef", "HACK", "x", "y"], [1, 1, 1, 0, 0])
    ]
    u = GroupwiseGrading(grader=ranking_grader).update(trajs, dtype=torch.float64)
    expected = [1.2 - 0.4, 0.8 - 0.4, -0.4, -0.4, -0.4]
    assert u.advantages[:, 0].tolist() == pytest.approx(expected)
    assert u.coefficients[:, 0].tolist() == pytest.approx([a / 10 for a in expected])
    preview = GroupwiseGrading(group_size=5).update(trajs, dtype=torch.float64)
    assert any("no grader" in n for n in preview.notes)
    assert preview.advantages[:, 0].tolist() == pytest.approx([0.4, 0.4, 0.4, -0.6, -0.6])
