"""What an update does on a GPU, checked on a CPU: under the device policy every rule's hot path dispatches as many
operators (kernel launches) at B = 8192 as at B = 256 and waits on the host never; the default path waits once.
The device policy's code gives the CPU policy's numbers, stats and notes, and refuses bad input the same way."""

import math
import sys
from pathlib import Path

import pytest
import torch

from pick_a_method.methods.rules.policy import DEVICE, use_policy
from pick_a_method.methods.rules.probe import OpCounter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rule_cases import F64, HOST_RULES, batch, rules  # noqa: E402


def counted(make, b, **kwargs):
    with use_policy("device"), OpCounter() as c:
        make().update(b, **kwargs)
    return c


@pytest.mark.parametrize("name", list(rules()) + list(HOST_RULES))
def test_operators_do_not_grow_with_the_batch(name):
    make = {**rules(), **HOST_RULES}[name]
    for kwargs in ({"stats": False, "validate": False}, {}):
        small = counted(make, batch(256), **kwargs)
        large = counted(make, batch(8192), **kwargs)
        assert small.ops == large.ops, (kwargs, small.by_name - large.by_name, large.by_name - small.by_name)


@pytest.mark.parametrize("name", list(rules()))
def test_the_hot_path_never_waits_and_the_default_path_waits_once(name):
    make = rules()[name]
    hot = counted(make, batch(512, 16, stale=True, short=True), stats=False, validate=False)
    assert hot.syncs == 0, dict(hot.sync_names)
    default = counted(make, batch(512, 16, stale=True, short=True))
    assert default.syncs == 1, dict(default.sync_names)


def test_fp16_and_validation_without_stats_still_read_once():
    b = batch(64, 16, dtype=torch.float16)
    assert counted(rules()["sao"], b).syncs == 1  # the fp16 note's counts ride in the same read
    assert counted(rules()["grpo"], b, stats=False).syncs == 1  # the verdicts alone


def test_host_rules_read_a_bounded_number_of_times():
    assert counted(HOST_RULES["rae"], batch(512), stats=False, validate=False).syncs == 1  # the rewards, for the scan
    for make in HOST_RULES.values():
        assert counted(make, batch(512)).syncs <= 8


def test_the_device_chunks_are_as_few_as_memory_allows():
    # float32: SAO's outputs (coefficients, advantages) take 2 of the 6 tensors, its 5 temporaries the rest:
    # 2 chunks, at any B; bf16: the float32 temporaries take twice the room
    for B in (256, 8192, 100_000):
        assert len(DEVICE.chunks(B, 1024, temps=5, compute=torch.float32, given=torch.float32, outputs=2)) == 2
        assert len(DEVICE.chunks(B, 1024, temps=5, compute=torch.float32, given=torch.bfloat16, outputs=4)) == 7
        assert len(DEVICE.chunks(B, 1024, temps=1, compute=torch.float32, given=torch.float32)) == 1
    # past RULE_CHUNK_BYTES the chunks multiply (a 2 GiB bound on one chunk's temporaries)
    assert len(DEVICE.chunks(2**20, 4096, temps=1, compute=torch.float32, given=torch.float32)) == 8


def close(a, b):
    return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("dtype", [F64, torch.float32])
@pytest.mark.parametrize("name", list(rules()))
def test_the_device_path_gives_the_cpu_paths_update(name, dtype):
    make = rules()[name]
    b = batch(64, 40, dtype, seed=3, stale=True, short=True)
    cpu = make().update(b)
    with use_policy("device"):
        dev = make().update(b)
    tol = 1e-12 if dtype == F64 else 1e-6
    scale = float(cpu.coefficients.abs().max()) or 1.0
    assert torch.allclose(dev.coefficients, cpu.coefficients, atol=tol * scale, rtol=0)
    assert torch.allclose(dev.advantages, cpu.advantages, atol=tol * max(1.0, float(cpu.advantages.abs().max())), rtol=0)
    assert torch.equal(dev.admitted, cpu.admitted)
    assert dev.stats.keys() == cpu.stats.keys()
    assert all(close(dev.stats[k], cpu.stats[k]) for k in cpu.stats if dtype == F64), (dev.stats, cpu.stats)
    assert dev.notes == cpu.notes


def test_bad_input_is_refused_the_same_way_on_the_device_path():
    cases = [
        (rules()["grpo"], {"rewards": float("nan")}, "trajectory 3: reward is nan"),
        (rules()["sao"], {"logprobs": 0.5}, r"trajectory 3: logprobs\[2\] is 0.5"),
        (rules()["bpco"], {"values": 2.0}, r"trajectory 3: values\[2\] is 2.0, outside reward_range"),
        (rules()["max_rl"], {"rewards": -1.0}, "trajectory 3: reward is -1.0"),
        (rules()["async_icepop"], {"behavior_logprobs": float("inf")}, r"behavior_logprobs\[2\] is inf"),
    ]
    for make, bad, message in cases:
        b = batch(16)
        for field, value in bad.items():
            x = getattr(b, field)
            if x.dim() == 1:
                x[3] = value
            else:
                x[3, 2] = value
        for policy in ("cpu", "device"):
            with use_policy(policy), pytest.raises(ValueError, match=message):
                make().update(b)
