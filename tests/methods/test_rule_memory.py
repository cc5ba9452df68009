"""Peak extra memory of every rule under the device policy: at most RULE_EXTRA_TENSORS (6) [B, T] tensors of the
input dtype, outputs included, in float32 and bf16, on the hot and the default path (counted on a CPU with
``rules.probe.MemoryTracker``: the storages the rule's operators allocate, live at once). T = 1024, so the
per-row [B] vectors (a thousandth of a tensor each) stay inside the margin."""

import sys
from pathlib import Path

import pytest
import torch

from pick_a_method.methods import SAO, defaults as D
from pick_a_method.methods.rules.policy import use_policy
from pick_a_method.methods.rules.probe import MemoryTracker, OpCounter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rule_cases import HOST_RULES, batch, rules  # noqa: E402

B, T = 128, 1024
MARGIN = 0.05  # the [B] vectors: about 30 of them at most, 1/T of a tensor each


def peak(make, dtype, **kwargs):
    b = batch(B, T, dtype, short=True, stale=True)
    with use_policy("device"), MemoryTracker() as m:
        make().update(b, **kwargs)
    return m.peak / (B * T * b.logprobs.element_size())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name", list(rules()) + list(HOST_RULES))
def test_peak_extra_memory_is_at_most_six_tensors(name, dtype):
    make = {**rules(), **HOST_RULES}[name]
    for kwargs in ({"stats": False, "validate": False}, {}):
        got = peak(make, dtype, **kwargs)
        assert got <= D.RULE_EXTRA_TENSORS + MARGIN, (kwargs, got)


def test_the_tracker_counts_what_is_held_and_frees_what_is_dropped():
    with MemoryTracker() as m:
        x = torch.empty(1000)
        y = torch.empty(1000)
        del x
        z = y[:10].exp_()  # a view and an in-place result: nothing new
        w = torch.empty(500)
    assert m.peak == 8000 and m.live == 6000 and z.numel() == 10 and w.numel() == 500


def test_a_small_gae_alpha_reads_but_stays_exact_on_the_device_path():
    # alpha = 0.02: lambda^(L-1) may underflow, so the device path reads which rows are special, as on a CPU
    b = batch(16, 100, torch.float32, short=True)
    cpu = SAO(gae_alpha=0.02).update(b)
    with use_policy("device"), OpCounter() as c:
        dev = SAO(gae_alpha=0.02).update(b, stats=False, validate=False)
    assert c.syncs > 0
    assert torch.isfinite(dev.coefficients).all()
    assert torch.allclose(dev.coefficients, cpu.coefficients, atol=1e-6 * float(cpu.coefficients.abs().max()), rtol=0)
