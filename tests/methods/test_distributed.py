"""Under torch.distributed (two gloo ranks on CPU), batch statistics are the global batch's."""

import importlib
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from pick_a_method import methods


def _pad(x, T):
    return torch.nn.functional.pad(x, (0, T - x.shape[1]))


def test_two_gloo_ranks_match_the_full_batch(tmp_path, monkeypatch, batch_factory):
    # the spawned ranks import the worker by module name, so its folder goes on sys.path (inherited by spawn)
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    run = importlib.import_module("methods_dist_worker").run
    trajs = batch_factory(seed=21, n=12, drift=0.1)
    ctx = mp.start_processes(
        run, args=(2, str(tmp_path / "init"), str(tmp_path), trajs), nprocs=2, join=False, start_method="spawn"
    )
    deadline = time.monotonic() + 90
    while not ctx.join(timeout=1):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("the two gloo ranks did not finish within 90 s")
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    for name, knobs in [("FlashReinforce", {"trust": 0.05}), ("SAO", {}), ("BPCO", {}), ("grpo", {"group_size": 2})]:
        full = methods.make_method(name, **knobs).update(trajs, dtype=torch.float64)
        T = full.coefficients.shape[1]
        got = torch.cat([_pad(ranks[r][name][0], T) for r in range(2)])
        assert torch.allclose(got, full.coefficients, atol=1e-15, rtol=1e-12), name
        assert torch.equal(torch.cat([ranks[r][name][1] for r in range(2)]), full.admitted)
    # the global quantities each rank saw
    fr = [ranks[r]["FlashReinforce"][2] for r in range(2)]
    assert fr[0]["batch_size"] == fr[1]["batch_size"] == 12
    assert fr[0]["batch_mean_reward"] == pytest.approx(sum(t["reward"] for t in trajs) / 12)
    n_tokens = sum(sum(bool(x) for x in t["action_mask"]) for t in trajs)
    assert ranks[0]["SAO"][2]["action_tokens"] == ranks[1]["SAO"][2]["action_tokens"] == n_tokens
    # and a single process without an initialized group uses its own batch only
    local = methods.FlashReinforce(trust=0.05).update(trajs[:6], dtype=torch.float64)
    assert local.stats["batch_size"] == 6
    with pytest.raises(ValueError, match="not initialized"):
        methods.SAO().update(trajs, distributed=True)
