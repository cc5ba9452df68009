"""Batch construction: padding, aliases, groups, and errors that name the trajectory and field."""

import numpy as np
import pytest
import torch

from pick_a_method.methods.batch import Batch, as_batch


def test_padding_mask_and_lengths():
    b = Batch.from_trajectories(
        [
            {"reward": 1, "logprobs": [-0.1, -0.2, -0.3], "action_mask": [1, 0, 1]},
            {"reward": True, "logprobs": np.array([-0.5])},
        ],
        dtype=torch.float64,
    )
    assert b.logprobs.shape == (2, 3) and b.dtype == torch.float64
    assert b.mask.tolist() == [[True, False, True], [True, False, False]]
    assert b.lengths.tolist() == [3, 1]
    assert b.rewards.tolist() == [1.0, 1.0]
    assert b.behavior_logprobs is None and b.values is None and b.groups is None


def test_aliases_groups_agents_staleness_and_info():
    b = Batch.from_trajectories(
        [
            {"reward": 0, "logprobs": [-1.0], "token_logprobs": [-1.5], "task_id": "a", "agent": "p0", "lag": 2, "prompt": "x"},
            {"reward": 1, "logprobs": [-1.0], "task_id": "b", "agent": "p1", "lag": 0},
            {"reward": 1, "logprobs": [-1.0], "task_id": "a", "agent": "p0", "lag": 1},
        ]
    )
    assert b.groups.tolist() == [0, 1, 0]
    assert b.agents == ["p0", "p1", "p0"]
    assert b.staleness.tolist() == [2, 0, 1]
    # the trajectories without behavior logprobs read as on-policy
    assert b.missing == {"behavior_logprobs": [1, 2]}
    assert b.behavior_logprobs[:, 0].tolist() == pytest.approx([-1.5, -1.0, -1.0])
    assert b.info[0]["prompt"] == "x" and "logprobs" not in b.info[0]


@pytest.mark.parametrize(
    "trajs, needle",
    [
        ([], "empty"),
        ([{"logprobs": [-1.0]}], "trajectory 0 has no 'reward'"),
        ([{"reward": 1, "logprobs": [-1.0]}, {"reward": float("nan"), "logprobs": [-1.0]}], "trajectory 1: reward"),
        ([{"reward": None, "logprobs": [-1.0]}], "trajectory 0: reward"),
        ([{"reward": "1", "logprobs": [-1.0]}], "trajectory 0: reward"),
        ([{"reward": 1}], "trajectory 0 has no 'logprobs'"),
        ([{"reward": 1, "logprobs": []}], "trajectory 0: logprobs is empty"),
        ([{"reward": 1, "logprobs": "abc"}], "trajectory 0: logprobs must be a sequence"),
        ([{"reward": 1, "logprobs": [-1.0, None]}], r"trajectory 0: logprobs\[1\] must be a number"),
        (
            [{"reward": 1, "logprobs": [-1.0]}, {"reward": 1, "logprobs": [-1.0, -2.0], "behavior_logprobs": [-1.0]}],
            "trajectory 1: behavior_logprobs has 1 entries but logprobs has 2",
        ),
        ([{"reward": 1, "logprobs": [-1.0], "values": [0.1, 0.2]}], "trajectory 0: values has 2"),
        ([{"reward": 1, "logprobs": [-1.0], "action_mask": [1, 1]}], "trajectory 0: action_mask has 2"),
        ([{"reward": 1, "logprobs": [-1.0], "task_id": "a"}, {"reward": 1, "logprobs": [-1.0]}], "trajectory 1 names no group"),
        ([{"reward": 1, "logprobs": [-1.0], "staleness": -1}], "trajectory 0: staleness"),
        (["not a dict"], "trajectory 0 is a str"),
    ],
)
def test_bad_trajectories_name_index_and_field(trajs, needle):
    with pytest.raises(ValueError, match=needle):
        Batch.from_trajectories(trajs)


def test_tensor_batch_checks_shapes():
    with pytest.raises(ValueError, match="rewards must have shape"):
        Batch(rewards=torch.zeros(3), logprobs=torch.zeros(2, 4))
    with pytest.raises(ValueError, match="values must be a"):
        Batch(rewards=torch.zeros(2), logprobs=torch.zeros(2, 4), values=torch.zeros(2, 3))
    b = Batch(rewards=torch.zeros(2), logprobs=torch.zeros(2, 4), mask=torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]]))
    assert b.mask.dtype == torch.bool and b.float_mask().sum().item() == 3


def test_as_batch_casts():
    b = Batch.from_trajectories([{"reward": 1, "logprobs": [-1.0]}], dtype=torch.float32)
    assert as_batch(b) is b
    assert as_batch(b, dtype=torch.float64).dtype == torch.float64
