"""ReinforceAda: both exits, balanced picking, pass-rate advantages, errors."""

import pytest
import torch

from pick_a_method.methods import ReinforceAda
from pick_a_method.methods.rules.reinforce_ada import balanced_pick


def scripted(outcomes):
    """draw() returning the next scripted round for each prompt (by prompt name)."""
    rounds = {p: iter(rs) for p, rs in outcomes.items()}
    calls = []

    def draw(prompts, k):
        calls.append(list(prompts))
        return [next(rounds[p]) for p in prompts]

    return draw, calls


def test_balanced_exit_retires_a_prompt_once_it_splits():
    ada = ReinforceAda(keep=4, round_size=4, max_rounds=3)
    draw, calls = scripted(
        {"easy": [[1, 1, 1, 1], [1, 1, 0, 0]], "split": [[1, 0, 1, 0]], "hard": [[0] * 4, [0] * 4, [0] * 4]}
    )
    res = ada(draw, ["easy", "split", "hard"])
    assert calls == [["easy", "split", "hard"], ["easy", "hard"], ["hard"]]
    easy, split, hard = res.groups
    assert split.retired and split.drawn == 4 and split.pass_rate == 0.5
    assert split.advantages == [0.5, -0.5, 0.5, -0.5]
    assert easy.retired and easy.drawn == 8 and easy.pass_rate == pytest.approx(6 / 8)
    assert sorted(easy.rewards) == [0, 0, 1, 1]
    assert not hard.retired and hard.drawn == 12 and not hard.has_gradient
    assert res.stats["no_gradient"] == pytest.approx(1 / 3)
    assert res.rounds == 3


def test_positive_exit_retires_at_the_first_right_answer():
    ada = ReinforceAda(keep=2, round_size=2, max_rounds=4, exit="positive")
    draw, calls = scripted({"a": [[0, 0], [0.9, 0]], "b": [[1, 1]]})
    res = ada(draw, ["a", "b"])
    assert calls == [["a", "b"], ["a"]]
    assert res.groups[0].retired and res.groups[0].pass_rate == 0.25
    assert res.groups[1].advantages == [0.0, 0.0]  # all right: a unanimous group carries nothing


def test_non_binary_reward_quirk_and_threshold():
    res = ReinforceAda(keep=4, round_size=4, max_rounds=1)(lambda ps, k: [[0.8] * k for _ in ps], ["p"])
    assert res.groups[0].advantages == pytest.approx([-0.2] * 4)  # reward minus a pass fraction


def test_balanced_pick_tops_up_from_the_spare_side():
    assert balanced_pick("abcdef", [1, 1, 1, 1, 0, 1], keep=4, threshold=0.7) == [0, 1, 2, 4]
    assert balanced_pick("abc", [0, 0, 0], keep=2, threshold=0.7) == [0, 1]


def test_errors():
    ada = ReinforceAda(keep=2, round_size=2, max_rounds=1)
    with pytest.raises(ValueError, match="at least one prompt"):
        ada(lambda ps, k: [], [])
    with pytest.raises(ValueError, match="returned 1 lists for 2"):
        ada(lambda ps, k: [[1, 0]], ["a", "b"])
    with pytest.raises(ValueError, match="returned 1 samples for prompt 0"):
        ada(lambda ps, k: [[1]], ["a"])
    with pytest.raises(ValueError, match="numeric 'reward'"):
        ada(lambda ps, k: [["x", "y"]], ["a"])


def test_update_from_kept_trajectories():
    ada = ReinforceAda(keep=2, round_size=4, max_rounds=1)
    res = ada(lambda ps, k: [[{"reward": 1.0, "logprobs": [-0.5]}, {"reward": 0.0, "logprobs": [-0.5]}, {"reward": 0.0, "logprobs": [-0.5]}, {"reward": 0.0, "logprobs": [-0.5]}] for _ in ps], ["p"])
    trajs = res.trajectories()
    assert [t["advantage"] for t in trajs] == [0.75, -0.25]
    u = ada.update(trajs, dtype=torch.float64)
    assert u.advantages[:, 0].tolist() == pytest.approx([0.75, -0.25])
    assert u.coefficients[:, 0].tolist() == pytest.approx([0.375, -0.125])
