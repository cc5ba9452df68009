"""grpo, max_rl, rae: hand values, singleton and unanimous groups, rae ordering and state, normalization."""

import pytest
import torch

from pick_a_method.methods import GRPO, RAE, Async, Batch, MaxRL
from pick_a_method.methods.rules.grouped import grpo_advantages, max_rl_advantages, rae_advantages

F64 = torch.float64


def rows(rewards, tasks=None, lengths=None):
    out = []
    for i, r in enumerate(rewards):
        t = {"reward": r, "logprobs": [-0.5] * (lengths[i] if lengths else 2)}
        if tasks is not None:
            t["task_id"] = tasks[i]
        out.append(t)
    return out


def test_max_rl_hand_values():
    gid = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    R = torch.tensor([1, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=F64)
    assert max_rl_advantages(R, gid).tolist() == [3, -1, -1, -1, 0, 0, 0, 0, 0, 0]


def test_grpo_zero_mean_singleton_and_std():
    gid = torch.tensor([0, 0, 0, 0, 1])
    R = torch.tensor([1, 0, 0, 1, 1], dtype=F64)
    A = grpo_advantages(R, gid)
    assert A.tolist() == [0.5, -0.5, -0.5, 0.5, 0.0]
    std = torch.tensor([1, 0, 0, 1], dtype=F64).std().item()  # Bessel, as verl and TRL
    An = grpo_advantages(R, gid, normalize_std=True)
    assert An[:4].tolist() == pytest.approx([x / (std + 1e-6) for x in [0.5, -0.5, -0.5, 0.5]])
    assert An[4].item() == 0.0


def test_grpo_update_coefficients_are_a_over_n():
    u = GRPO(group_size=2).update(rows([1, 0, 1, 1], lengths=[1, 3, 2, 2]), dtype=F64)
    N = 8
    assert u.stats["action_tokens"] == N
    assert u.coefficients[0, 0].item() == pytest.approx(0.5 / N)
    assert u.coefficients[1, :3].tolist() == pytest.approx([-0.5 / N] * 3)
    assert torch.all(u.coefficients[2:] == 0)
    assert u.stats["mixed_group_share"] == 0.5
    assert any("identical rewards" in n for n in u.notes)
    lp = Batch.from_trajectories(rows([1, 0, 1, 1], lengths=[1, 3, 2, 2]), dtype=F64).logprobs.requires_grad_(True)
    u.loss(lp).backward()
    assert torch.equal(lp.grad, -u.coefficients)


def test_groups_from_task_ids_and_layout_error():
    u = MaxRL().update(rows([1, 0, 0, 0, 1, 1], tasks=["a", "a", "b", "a", "a", "b"]), dtype=F64)
    assert u.advantages[:, 0].tolist() == pytest.approx([1.0, -1.0, -1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not a multiple of group_size=8"):
        GRPO().update(rows([1, 0, 1]))
    with pytest.raises(ValueError, match="trajectory 1: reward is -1.0"):
        MaxRL(group_size=2).update(rows([1, -1]))


def test_rae_orders_within_the_batch_and_keeps_state():
    A, state = rae_advantages(torch.tensor([1.0, 0.0, 1.0], dtype=F64), ["x", "x", "y"], {}, 0.95)
    assert A.tolist() == pytest.approx([1.0, -0.05, 1.0])
    assert state == pytest.approx({"x": 0.95 * 0.05, "y": 0.05})
    r = RAE()
    batch = [{"reward": 1.0, "logprobs": [-1.0], "agent": "p0"}, {"reward": 1.0, "logprobs": [-1.0], "agent": "p1"}]
    r.update(batch, commit=False)
    assert r.baselines == {}
    r.update(batch)
    assert r.baselines == pytest.approx({"p0": 0.05, "p1": 0.05})
    second = r.update(batch, dtype=F64)
    assert second.advantages[:, 0].tolist() == pytest.approx([0.95, 0.95])
    # the same object inside Async shares its state
    a = Async(method=r)
    a.update(batch)
    assert r.baselines["p0"] == pytest.approx(0.95 * (0.95 * 0.05 + 0.05) + 0.05)


def test_rae_works_at_group_size_one():
    u = RAE(group_size=1).update(rows([1.0]), dtype=F64)
    assert u.advantages[0, 0].item() == 1.0


def test_off_policy_rows_get_a_note():
    t = rows([1, 0])
    t[0]["behavior_logprobs"] = [-2.0, -0.5]
    u = GRPO(group_size=2).update(t)
    assert any("wrap it in Async" in n for n in u.notes)
