"""Async: ipo / icepop / tis per-token corrections, inclusive bounds, staleness, NaN safety."""

import math

import pytest
import torch

from pick_a_method.methods import GRPO, OPD, Async, Batch
from pick_a_method.methods.rules.corrections import correction_weights

F64 = torch.float64


def test_correction_weights_hand_values():
    lp = torch.tensor([[math.log(0.5), math.log(0.9), math.log(0.1), -0.2]], dtype=F64)
    blp = torch.tensor([[math.log(0.5), math.log(0.7), math.log(0.4), -0.2]], dtype=F64)
    mask = torch.tensor([[True, True, True, False]])
    w, kept, rho = correction_weights(lp, blp, mask, "ipo", ipo_threshold=0.25)
    # |0.9-0.7| = 0.2 is kept, |0.1-0.4| = 0.3 is masked; the masked position is 0 whatever it holds
    assert kept.tolist() == [[True, True, False, False]]
    assert w[0].tolist() == pytest.approx([1.0, 0.9 / 0.7, 0.0, 0.0])
    assert rho[0].tolist() == pytest.approx([1.0, 0.9 / 0.7, 0.25, 0.0])
    # icepop bounds are inclusive: rho = 1 exactly is kept with low = 1
    w, kept, _ = correction_weights(lp, blp, mask, "icepop", ratio=(1.0, 1.2))
    assert kept.tolist() == [[True, False, False, False]]
    w, kept, _ = correction_weights(lp, blp, mask, "icepop", ratio=(0.2, 1.3))
    assert kept.tolist() == [[True, True, True, False]]
    assert w[0].tolist() == pytest.approx([1.0, 0.9 / 0.7, 0.25, 0.0])
    w, kept, _ = correction_weights(lp, blp, mask, "tis", cap=1.2)
    assert w[0].tolist() == pytest.approx([1.0, 1.2, 0.25, 0.0])


def test_async_grpo_applies_the_correction_to_inner_coefficients():
    batch = [
        {"reward": 1, "logprobs": [-0.5, -0.1], "behavior_logprobs": [-0.5, -2.0]},
        {"reward": 0, "logprobs": [-0.5, -0.1], "behavior_logprobs": [-0.5, -2.0]},
    ]
    inner = GRPO(group_size=2).update(batch, dtype=F64)
    for corr, factor in [("icepop", 0.0), ("ipo", 0.0), ("tis", 2.0)]:
        u = Async(method=GRPO(group_size=2), correction=corr).update(batch, dtype=F64)
        assert u.method == "async grpo"
        assert u.coefficients[:, 0].tolist() == pytest.approx(inner.coefficients[:, 0].tolist())
        assert u.coefficients[:, 1].tolist() == pytest.approx((inner.coefficients[:, 1] * factor).tolist())
    ice = Async(method=GRPO(group_size=2), correction="icepop", ratio=(0.5, 10.0)).update(batch, dtype=F64)
    assert ice.coefficients[0, 1].item() == pytest.approx(inner.coefficients[0, 1].item() * math.exp(1.9))
    lp = Batch.from_trajectories(batch, dtype=F64).logprobs.requires_grad_(True)
    ice.loss(lp).backward()
    assert torch.equal(lp.grad, -ice.coefficients)


def test_async_drops_stale_trajectories_and_survives_overflow():
    batch = [
        {"reward": 1, "logprobs": [-0.5, float("nan")], "behavior_logprobs": [-80.0, 3.0], "action_mask": [1, 0], "staleness": 2},
        {"reward": 0, "logprobs": [-0.5], "behavior_logprobs": [-0.5], "staleness": 12},
    ]
    u = Async(method=GRPO(group_size=2), correction="tis", off_policy_steps=8).update(batch, dtype=F64)
    assert u.admitted.tolist() == [True, False]
    assert torch.isfinite(u.coefficients).all()
    assert u.coefficients[1].abs().sum() == 0
    assert u.coefficients[0, 0].item() == pytest.approx(0.5 / 2 * 2.0)  # ratio exp(20) capped at 2
    assert u.stats["stale_trajectories"] == 1


def test_async_opd_and_on_policy_note():
    batch = [{"reward": 0, "logprobs": [-1.0], "teacher_logprobs": [-0.5]}]
    u = Async(method=OPD(teacher="t")).update(batch, dtype=F64)
    assert u.coefficients[0, 0].item() == pytest.approx(0.5)
    assert any("on-policy" in n for n in u.notes)
