"""OPD / OPSD: sampled-token coefficients, the top-k divergence with its tail bucket, gradients, errors."""

import math

import pytest
import torch

from pick_a_method.methods import OPD, OPSD, Batch
from pick_a_method.methods.rules.distill import topk_divergence

F64 = torch.float64
BATCH = [
    {"reward": 0, "logprobs": [-1.0, -2.0, -0.5], "teacher_logprobs": [-0.5, -2.5, -0.5]},
    {"reward": 1, "logprobs": [-0.1], "teacher_logprobs": [-3.0]},
]


def test_sampled_token_coefficients_per_divergence():
    N = 4
    rev = OPD(teacher="t").update(BATCH, dtype=F64)
    assert rev.coefficients[0].tolist() == pytest.approx([0.5 / N, -0.5 / N, 0.0])
    assert rev.coefficients[1, 0].item() == pytest.approx(-2.9 / N)
    assert rev.stats["reverse_kl"] == pytest.approx((-0.5 + 0.5 + 0 + 2.9) / N)
    fwd = OPD(teacher="t", divergence="forward_kl").update(BATCH, dtype=F64)
    assert fwd.coefficients[0, 0].item() == pytest.approx(math.expm1(0.5) / N)
    assert fwd.coefficients[1, 0].item() == pytest.approx(math.expm1(-2.9) / N)
    jsd = OPD(teacher="t", divergence="jsd").update(BATCH, dtype=F64)
    d = 0.5
    assert jsd.coefficients[0, 0].item() == pytest.approx(0.5 * math.log((1 + math.exp(d)) / 2) / N)
    assert jsd.coefficients[0, 2].item() == 0.0  # teacher agrees: no push


def test_jsd_coefficient_is_the_score_function_gradient():
    # one categorical over 3 tokens: E_S[c(a) grad log S(a)] must equal -grad JSD(S, T)
    logits = torch.tensor([0.3, -0.2, 0.9], dtype=F64, requires_grad=True)
    t = torch.log_softmax(torch.tensor([1.0, 0.0, -1.0], dtype=F64), 0)
    s = torch.log_softmax(logits, 0)
    m = torch.logsumexp(torch.stack([s, t]), 0) - math.log(2)
    jsd = 0.5 * (s.exp() * (s - m)).sum() + 0.5 * (t.exp() * (t - m)).sum()
    (g_true,) = torch.autograd.grad(jsd, logits, retain_graph=True)
    from pick_a_method.methods.rules.distill import sampled_token_coefficients

    c = sampled_token_coefficients((t - s).detach(), "jsd")
    surrogate = -(s.exp().detach() * c * s).sum()  # expectation over the student's own samples
    (g_est,) = torch.autograd.grad(surrogate, logits)
    assert torch.allclose(g_est, g_true, atol=1e-12)


def test_opsd_reads_privileged_teacher_logprobs_and_gradient():
    u = OPSD(anchor="live").update(BATCH, dtype=F64)
    assert u.method == "opsd" and any("anchor=live" in n for n in u.notes)
    lp = Batch.from_trajectories(BATCH, dtype=F64).logprobs.requires_grad_(True)
    u.loss(lp).backward()
    assert torch.equal(lp.grad, -u.coefficients)


def test_missing_teacher_logprobs_is_explained():
    with pytest.raises(ValueError, match="OPD needs teacher_logprobs"):
        OPD(teacher="t").update([{"reward": 0, "logprobs": [-1.0]}])
    with pytest.raises(ValueError, match="privileged 'hint'"):
        OPSD(privileged="hint").update([{"reward": 0, "logprobs": [-1.0]}])
    with pytest.raises(ValueError, match=r"trajectory 0: teacher_logprobs\[0\] is 0.5"):
        OPD(teacher="t").update([{"reward": 0, "logprobs": [-1.0], "teacher_logprobs": [0.5]}])


def _full_kl(s_logits, t_logits, kind):
    s = torch.log_softmax(s_logits, -1)
    t = torch.log_softmax(t_logits, -1)
    if kind == "reverse_kl":
        return (s.exp() * (s - t)).sum(-1)
    return (t.exp() * (t - s)).sum(-1)


@pytest.mark.parametrize("kind", ["reverse_kl", "forward_kl"])
def test_topk_with_full_support_is_the_exact_divergence(kind):
    g = torch.Generator().manual_seed(0)
    V = 6
    s_logits = torch.randn(2, 3, V, generator=g, dtype=F64, requires_grad=True)
    t_logits = torch.randn(2, 3, V, generator=g, dtype=F64)
    s = torch.log_softmax(s_logits, -1)
    t = torch.log_softmax(t_logits, -1)
    res = topk_divergence(s, t, divergence=kind)
    exact = _full_kl(s_logits, t_logits, kind)
    assert torch.allclose(res.per_token, exact.detach(), atol=1e-9)
    res.loss.backward()
    assert s_logits.grad is not None and torch.isfinite(s_logits.grad).all()


def test_topk_tail_bucket_penalizes_mass_off_support_and_masks():
    g = torch.Generator().manual_seed(1)
    V, K = 50, 4
    s_full = torch.log_softmax(torch.randn(1, 2, V, generator=g, dtype=F64), -1)
    t_full = torch.log_softmax(torch.randn(1, 2, V, generator=g, dtype=F64) * 3, -1)
    idx = t_full.topk(K, -1).indices
    s, t = s_full.gather(-1, idx), t_full.gather(-1, idx)
    with_tail = topk_divergence(s, t, top_k=K)
    renorm = topk_divergence(s, t, top_k=K, tail=False)
    assert torch.all(with_tail.per_token > 0) and not torch.allclose(with_tail.per_token, renorm.per_token)
    # more columns than top_k: only the teacher's top_k most likely count
    wide = topk_divergence(s_full, t_full, top_k=K)
    assert torch.allclose(wide.per_token, with_tail.per_token)
    # a masked position may hold NaN without leaking
    s2 = s.clone().requires_grad_(True)
    bad = s2.detach().clone()
    bad[0, 1] = float("nan")
    mask = torch.tensor([[True, False]])
    res = topk_divergence(torch.where(mask[..., None], s2, bad), t, mask, top_k=K)
    res.loss.backward()
    assert torch.isfinite(res.loss) and torch.isfinite(s2.grad).all() and torch.all(s2.grad[0, 1] == 0)


def test_topk_refuses_probabilities_above_one():
    s = torch.log(torch.tensor([[[0.7, 0.6]]], dtype=F64))
    with pytest.raises(ValueError, match="sum to 1.3"):
        topk_divergence(s, torch.log(torch.tensor([[[0.5, 0.3]]], dtype=F64)))


def test_opd_object_topk_loss_uses_its_knobs():
    s = torch.log(torch.tensor([[[0.5, 0.3, 0.1]]], dtype=F64))
    t = torch.log(torch.tensor([[[0.1, 0.6, 0.2]]], dtype=F64))
    a = OPD(teacher="t", top_k=2).topk_loss(s, t)
    b = topk_divergence(s[..., 1:], t[..., 1:])
    assert a.loss.item() == pytest.approx(b.loss.item())
