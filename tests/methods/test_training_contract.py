"""The rules inside a real training loop: grad-carrying inputs, half precision, micro-batches, the hot path.

Every rule is run on a Batch whose log-probs are the very leaf tensor the loss is then taken on (a
trainer's state: the tensor carries its graph), and on trajectory dicts holding such tensors.
"""

import math

import pytest
import torch

from pick_a_method import methods
from pick_a_method.methods import Batch

F64 = torch.float64
RETIRED = {"batch_mean_reward", "batch_size", "lambda_mean", "clipped_token_share", "kept_token_share", "clamped_tokens"}
COMMON = {"trajectories", "action_tokens", "admitted_share"}


def rules():
    """One object per rule and per branch that forms its coefficients differently."""
    out = [
        methods.GRPO(group_size=4),
        methods.GRPO(group_size=4, normalize_std=True),
        methods.MaxRL(group_size=4),
        methods.RAE(),
        methods.FlashReinforce(trust=0.5),
        methods.SAO(),
        methods.BPCO(),
        methods.GroupwiseGrading(group_size=4),
        methods.ReinforceAda(keep=4),
    ]
    for div in ("reverse_kl", "forward_kl", "jsd"):
        out.append(methods.OPD(teacher="t", divergence=div))
    out.append(methods.OPSD(divergence="forward_kl"))
    for corr in ("ipo", "icepop", "tis"):
        out.append(methods.Async(method={"name": "grpo", "group_size": 4}, correction=corr))
    out.append(methods.Async(method={"name": "opd", "teacher": "t", "divergence": "forward_kl"}, correction="ipo"))
    return out


def ids(objs):
    return [f"{o.name}-{i}" for i, o in enumerate(objs)]


def policy_tensors(B=8, T=10, seed=0, dtype=F64):
    """A trainer's tensors: log-probs from a (tiny) differentiable model, so they carry a graph."""
    g = torch.Generator().manual_seed(seed)
    theta = torch.randn(B, T, generator=g, dtype=F64, requires_grad=True)
    lp = torch.nn.functional.logsigmoid(theta).to(dtype)  # <= 0, carries grad
    behavior = (lp.detach() + 0.05 * torch.randn(B, T, generator=g, dtype=F64).to(dtype)).clamp(max=-1e-4)
    teacher = lp * 0.8 - 0.1  # carries grad too: a rule must not differentiate through it either
    values = torch.rand(B, T, generator=g, dtype=F64).to(dtype)
    mask = torch.rand(B, T, generator=g) > 0.2
    mask[:, 0] = True
    rewards = (torch.rand(B, generator=g, dtype=F64) < 0.5).to(F64)
    groups = torch.arange(B) // 4
    return theta, lp, behavior, teacher, values, mask, rewards, groups


def batch_of(lp, behavior, teacher, values, mask, rewards, groups):
    return Batch(rewards=rewards, logprobs=lp, behavior_logprobs=behavior, teacher_logprobs=teacher,
                 values=values, mask=mask, groups=groups)


@pytest.mark.parametrize("obj", rules(), ids=ids(rules()))
def test_grad_carrying_inputs_give_constant_coefficients_and_the_exact_gradient(obj):
    theta, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors()
    lp_leaf = lp.detach().requires_grad_(True)  # the tensor the loss is taken on, and the one in the Batch
    teacher_g = lp_leaf * 0.8 - 0.1
    upd = obj.update(batch_of(lp_leaf, behavior, teacher_g, values, mask, rewards, groups))
    assert not upd.coefficients.requires_grad and upd.coefficients.grad_fn is None
    assert not upd.advantages.requires_grad
    upd.loss(lp_leaf).backward()
    assert torch.equal(lp_leaf.grad, -upd.coefficients)
    # and the coefficients are those of the detached batch, bit for bit
    ref = type(obj)(**{k: getattr(obj, k) for k in type(obj).model_fields}).update(
        batch_of(lp.detach(), behavior, teacher.detach(), values, mask, rewards, groups)
    )
    assert torch.equal(upd.coefficients, ref.coefficients)


@pytest.mark.parametrize("obj", rules(), ids=ids(rules()))
def test_through_a_model_the_gradient_is_the_coefficients_chain_ruled(obj):
    theta, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors()
    upd = obj.update(batch_of(lp, behavior, teacher, values, mask, rewards, groups))
    upd.loss(lp).backward()  # the same graph-carrying tensor that went into the Batch
    sig = torch.sigmoid(theta.detach())
    expect = -upd.coefficients * (1 - sig) * mask  # d logsigmoid(theta) / d theta = 1 - sigmoid
    assert torch.allclose(theta.grad, expect, rtol=1e-12, atol=1e-15)


def test_trajectory_dicts_holding_grad_carrying_tensors():
    theta, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors(B=4, T=6)
    trajs = [{"reward": float(rewards[i]), "logprobs": lp[i], "behavior_logprobs": behavior[i],
              "teacher_logprobs": teacher[i], "values": values[i], "task_id": 0} for i in range(4)]
    for obj in (methods.FlashReinforce(trust=0.5), methods.SAO(), methods.BPCO(), methods.OPD(teacher="t"),
                methods.GRPO(group_size=4), methods.Async(method={"name": "grpo", "group_size": 4})):
        upd = obj.update(trajs, dtype=F64)
        assert upd.coefficients.grad_fn is None
        loss = upd.loss(lp)
        (g,) = torch.autograd.grad(loss, lp)
        assert torch.equal(g, -upd.coefficients), obj.name


# ------------------------------------------------------------------------------------------------
# Precision
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obj", rules(), ids=ids(rules()))
def test_bf16_logprobs_get_the_float32_rules_gradient_rounded_to_bf16(obj):
    _, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors(dtype=torch.float32)
    lp16 = lp.detach().to(torch.bfloat16).requires_grad_(True)
    b16 = batch_of(lp16, behavior.to(torch.bfloat16), teacher.detach().to(torch.bfloat16),
                   values.to(torch.bfloat16), mask, rewards, groups)
    fresh = lambda: type(obj)(**{k: getattr(obj, k) for k in type(obj).model_fields})  # noqa: E731 (rae state)
    upd = fresh().update(b16)
    assert upd.coefficients.dtype == torch.float32  # computed in float32, not bf16
    ref = fresh().update(batch_of(lp16.detach().float(), behavior.to(torch.bfloat16).float(),
                                  teacher.detach().to(torch.bfloat16).float(), values.to(torch.bfloat16).float(),
                                  mask, rewards, groups))
    assert torch.equal(upd.coefficients, ref.coefficients)
    loss = upd.loss(lp16)
    assert loss.dtype == torch.float32
    loss.backward()
    assert lp16.grad.dtype == torch.bfloat16
    assert torch.equal(lp16.grad, (-ref.coefficients).to(torch.bfloat16))


def test_fp16_at_a_million_tokens_the_loss_is_exact_and_the_gradient_loss_is_stated():
    B, T = 1024, 1024
    g = torch.Generator().manual_seed(3)
    lp = (-1.0 + 0.1 * torch.randn(B, T, generator=g)).clamp(max=-1e-3)
    rewards = torch.rand(B, generator=g)
    lp16 = lp.half().requires_grad_(True)
    upd = methods.FlashReinforce().update(Batch(rewards=rewards, logprobs=lp16))
    ref = methods.FlashReinforce().update(Batch(rewards=rewards, logprobs=lp16.detach().double()))
    loss = upd.loss(lp16)
    exact = float(ref.loss(lp16.detach().double()))
    value = float(loss.detach())
    assert loss.dtype == torch.float32 and math.copysign(1, value) == math.copysign(1, exact)
    # the terms cancel (centred advantages): float32 accuracy is relative to the sum of their magnitudes
    magnitude = float((ref.coefficients.abs() * lp16.detach().double().abs()).sum())
    assert abs(value - exact) <= 1e-6 * magnitude and abs(value - exact) < 0.01 * abs(exact)
    assert any("fp16 log-probs" in n and "GradScaler" in n for n in upd.notes)
    # a scaled loss (what GradScaler does) gives every coefficient back to fp16's precision
    (loss * 2.0**16).backward()
    got = lp16.grad.float() / 2.0**16
    assert torch.allclose(got, -upd.coefficients, rtol=2.0**-10, atol=1e-12)


def test_rewards_keep_their_precision():
    lp = torch.full((2, 3), -0.5, dtype=torch.bfloat16)
    b = Batch(rewards=[0.123456, 1.0], logprobs=lp)
    assert b.rewards.dtype == torch.float32 and float(b.rewards[0]) == pytest.approx(0.123456, rel=1e-7)
    fb = Batch.from_trajectories([{"reward": 0.123456, "logprobs": [-0.5]}], dtype=torch.bfloat16)
    assert fb.rewards.dtype == torch.float32 and float(fb.rewards[0]) == pytest.approx(0.123456, rel=1e-7)
    assert fb.to(dtype=torch.float16).rewards.dtype == torch.float32
    u = methods.FlashReinforce().update([{"reward": 0.123456, "logprobs": [-0.5]}, {"reward": 0.0, "logprobs": [-0.5]}],
                                        dtype=torch.bfloat16)
    assert u.stats["mean_reward"] == pytest.approx(0.061728, rel=1e-6)
    # a reward given as a one-element tensor (bf16 included) is read as the number it holds
    t = Batch.from_trajectories([{"reward": torch.tensor(0.75, dtype=torch.bfloat16), "logprobs": [-0.5]}])
    assert float(t.rewards[0]) == 0.75


def test_a_bf16_tensor_in_a_trajectory_dict_is_read_exactly_and_bad_dtypes_name_the_field():
    row = torch.tensor([-0.1234, -2.5, -0.001], dtype=torch.bfloat16)
    b = Batch.from_trajectories([{"reward": 1.0, "logprobs": [-1.0, -1.0, -1.0], "behavior_logprobs": row}],
                                dtype=F64)
    assert torch.equal(b.behavior_logprobs[0], row.double())
    with pytest.raises(ValueError, match=r"trajectory 1: values is a torch.complex64 tensor"):
        Batch.from_trajectories([{"reward": 1, "logprobs": [-1.0]},
                                 {"reward": 1, "logprobs": [-1.0], "values": torch.zeros(1, dtype=torch.complex64)}])
    with pytest.raises(ValueError, match=r"trajectory 0: logprobs is a torch.bool tensor"):
        Batch.from_trajectories([{"reward": 1, "logprobs": torch.ones(2, dtype=torch.bool)}])
    with pytest.raises(ValueError, match=r"trajectory 0: reward must be one finite number"):
        Batch.from_trajectories([{"reward": torch.ones(2), "logprobs": [-1.0]}])


# ------------------------------------------------------------------------------------------------
# Ratio caps
# ------------------------------------------------------------------------------------------------


def test_flash_reinforce_caps_one_wild_token_of_a_long_row():
    # 999 tokens on-policy and one whose sampler probability was 1e-6 while the learner's is 0.9: the row's
    # mean Bernoulli KL stays under trust (the gate admits it), the ratio is 9e5
    n = 1000
    lp = [-0.5] * n
    blp = list(lp)
    lp[7], blp[7] = math.log(0.9), math.log(1e-6)
    batch = [{"reward": 1.0, "logprobs": lp, "behavior_logprobs": blp}, {"reward": 0.0, "logprobs": [-0.5] * n}]
    u = methods.FlashReinforce().update(batch, dtype=F64)
    assert u.admitted.tolist() == [True, True]
    base = 0.5 / (n * 2)
    assert u.coefficients[0, 7].item() == pytest.approx(20 * base, rel=1e-12)
    assert u.coefficients[0, 0].item() == pytest.approx(base, rel=1e-12)
    assert u.stats["capped_token_share"] == pytest.approx(1 / (2 * n))
    assert any("ratio cap bound" in n_ for n_ in u.notes)
    raw = methods.FlashReinforce(ratio_cap=math.inf).update(batch, dtype=F64)
    assert raw.coefficients[0, 7].item() == pytest.approx(9e5 * base, rel=1e-9)
    assert not any("ratio cap" in n_ for n_ in raw.notes)


def test_bpco_caps_a_negative_advantage_token_whose_probability_rose():
    batch = [{"reward": 0.0, "logprobs": [math.log(0.5), -0.3], "behavior_logprobs": [math.log(1e-4), -0.3],
              "values": [0.9, 0.5]}]
    u = methods.BPCO().update(batch, dtype=F64)
    raw = methods.BPCO(ratio_cap=math.inf).update(batch, dtype=F64)
    assert u.advantages[0, 0] < 0 and raw.coefficients[0, 0] / u.coefficients[0, 0] == pytest.approx(5000 / 20)
    assert u.stats["capped_token_share"] == 0.5 and any("ratio cap bound" in n for n in u.notes)


def test_async_ipo_caps_a_kept_ratio():
    # |0.05 - 1e-5| <= ipo_threshold 0.1: kept, with a ratio of 5000
    batch = [{"reward": float(i % 2), "logprobs": [math.log(0.05), -0.2], "behavior_logprobs": [math.log(1e-5), -0.2],
              "task_id": 0} for i in range(4)]
    obj = methods.Async(method={"name": "grpo", "group_size": 4})
    u, raw = obj.update(batch, dtype=F64), methods.Async(method={"name": "grpo", "group_size": 4},
                                                         ratio_cap=math.inf).update(batch, dtype=F64)
    assert raw.coefficients[1, 0] / u.coefficients[1, 0] == pytest.approx(5000 / 20)
    assert any("ratio cap bound" in n for n in u.notes)


def test_opd_forward_kl_caps_the_importance_weight():
    batch = [{"reward": 0.0, "logprobs": [-12.0, -1.0], "teacher_logprobs": [-0.5, -1.0]}]
    u = methods.OPD(teacher="t", divergence="forward_kl").update(batch, dtype=F64)
    assert u.advantages[0, 0].item() == pytest.approx(19.0) and u.advantages[0, 1].item() == 0.0
    assert any("ratio cap bound" in n for n in u.notes)
    with pytest.raises(ValueError, match="ratio_cap must be"):
        methods.OPD(teacher="t", ratio_cap=0.5)


# ------------------------------------------------------------------------------------------------
# Micro-batches
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obj", rules(), ids=ids(rules()))
def test_slices_of_one_update_sum_to_the_full_batch_gradient(obj):
    _, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors(B=8)
    lp = lp.detach()
    upd = obj.update(batch_of(lp, behavior, teacher.detach(), values, mask, rewards, groups))
    full = lp.clone().requires_grad_(True)
    upd.loss(full).backward()
    micro = lp.clone().requires_grad_(True)
    total = 0.0
    for rows in (slice(0, 3), slice(3, 5), torch.tensor([5, 6, 7])):
        part = upd.loss(micro[rows], rows=rows)
        part.backward()
        total += float(part.detach())
    assert torch.allclose(micro.grad, full.grad, rtol=0, atol=1e-18)
    assert total == pytest.approx(float(upd.loss(lp)), rel=1e-12, abs=1e-15)
    if upd.value_targets is not None:
        v = values.clone()
        assert sum(float(upd.value_loss(v[r], rows=r)) for r in (slice(0, 4), slice(4, 8))) == pytest.approx(
            float(upd.value_loss(v)), rel=1e-12)
    with pytest.raises(ValueError, match="rows=slice"):
        upd.loss(lp[:3], rows=slice(0, 2))


# ------------------------------------------------------------------------------------------------
# The hot path and the stats vocabulary
# ------------------------------------------------------------------------------------------------


class SyncCounter:
    """Counts tensor -> Python conversions (each one is a host sync on a GPU)."""

    NAMES = ("item", "tolist", "__bool__", "__float__", "__int__")

    def __init__(self, monkeypatch):
        self.count = 0
        for name in self.NAMES:
            orig = getattr(torch.Tensor, name)

            def wrapped(self_t, *a, _orig=orig, **k):
                self.count += 1
                return _orig(self_t, *a, **k)

            monkeypatch.setattr(torch.Tensor, name, wrapped)


@pytest.mark.parametrize("obj", rules(), ids=ids(rules()))
def test_stats_false_keeps_the_coefficients_and_drops_the_syncs(obj, monkeypatch):
    _, lp, behavior, teacher, values, mask, rewards, groups = policy_tensors(B=8)
    b = batch_of(lp.detach(), behavior, teacher.detach(), values, mask, rewards, groups)
    fresh = lambda: type(obj)(**{k: getattr(obj, k) for k in type(obj).model_fields})  # noqa: E731
    full = fresh().update(b)
    assert COMMON <= set(full.stats) and not RETIRED & set(full.stats), sorted(full.stats)
    counter = SyncCounter(monkeypatch)
    hot = fresh().update(b, stats=False, validate=False)
    hot_syncs = counter.count
    counter.count = 0
    fresh().update(b)
    assert hot.stats == {} and hot.notes == []
    assert torch.equal(hot.coefficients, full.coefficients) and torch.equal(hot.admitted, full.admitted)
    assert hot_syncs < counter.count
    # the rules whose coefficients need no host-side decision take none but the finite checks that pick the
    # faster masking on a CPU (one per token field read; on a GPU they are skipped)
    if obj.name in ("flash_reinforce", "opd", "opsd"):
        assert hot_syncs <= 2, hot_syncs


def test_group_keys_keep_their_kind():
    def groups(keys):
        trajs = [{"reward": 1.0, "logprobs": [-0.1], **k} for k in keys]
        return Batch.from_trajectories(trajs).groups.tolist()

    assert groups([{"group": 1}, {"task_id": "1"}]) == [0, 1]
    assert groups([{"task_id": 1}, {"task_id": "1"}, {"task_id": 1.0}, {"task_id": True}]) == [0, 1, 0, 2]
    assert groups([{"task_id": "a"}, {"task_id": "a"}]) == [0, 0]


def test_opds_clamp_note_counts_action_tokens_only():
    lp = torch.tensor([[-0.5, -0.6, -90.0], [-0.4, -0.3, -0.2]], dtype=F64)  # -90: padding past row 0's length
    teacher = torch.tensor([[-0.4, -0.7, -0.1], [-0.5, -0.2, -0.3]], dtype=F64)
    b = Batch(rewards=[0.0, 0.0], logprobs=lp, teacher_logprobs=teacher, lengths=[2, 3])
    u = methods.OPD(teacher="t", divergence="forward_kl").update(b)
    assert not any("clamped" in n for n in u.notes)
    lp[1, 0] = -30.0  # an action token 29.5 away from the teacher
    u = methods.OPD(teacher="t", divergence="forward_kl", ratio_cap=math.inf).update(b)
    assert any("on 1 action tokens" in n for n in u.notes)
