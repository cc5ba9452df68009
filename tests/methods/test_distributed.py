"""Under torch.distributed (gloo on CPU): statistics over the process group asked for, and only then.

One 3-rank world: ranks 0 and 1 form the data-parallel group (a subset of the world, as when rank 2
holds another pipeline stage); the default (no process_group) never all-reduces; distributed=True
takes the world group.
"""

import importlib
import importlib.util
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from pick_a_method import methods


def _pad(x, T):
    return torch.nn.functional.pad(x, (0, T - x.shape[1]))


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dist")
    here = str(Path(__file__).parent)
    import sys

    sys.path.insert(0, here)  # the spawned ranks import the worker by module name (sys.path is inherited)
    try:
        worker = importlib.import_module("methods_dist_worker")
        # this folder's conftest by path (another folder's conftest may own the name "conftest")
        spec = importlib.util.spec_from_file_location("methods_conftest", Path(here) / "conftest.py")
        fixtures = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fixtures)
        random_batch = fixtures.random_batch

        trajs = random_batch(seed=21, n=12, drift=0.1)
        for i, t in enumerate(trajs):
            t["task_id"] = i // 2  # groups of two, never split across ranks
            t["teacher_logprobs"] = [x - 0.05 * (k % 3) for k, x in enumerate(t["logprobs"])]
        ctx = mp.start_processes(
            worker.run, args=(3, str(tmp / "init"), str(tmp), trajs), nprocs=3, join=False, start_method="spawn"
        )
        deadline = time.monotonic() + 150
        while not ctx.join(timeout=1):
            if time.monotonic() > deadline:
                for p in ctx.processes:
                    p.kill()
                pytest.fail("the three gloo ranks did not finish within 150 s")
        return trajs, worker, [torch.load(tmp / f"rank{r}.pt") for r in range(3)]
    finally:
        sys.path.remove(here)


def _full(worker, trajs):
    return {name: obj.update(trajs, dtype=torch.float64) for name, obj in worker.rule_objects()}


def test_a_subset_group_matches_the_full_batch(ranks):
    trajs, worker, got = ranks
    for name, full in _full(worker, trajs).items():
        T = full.coefficients.shape[1]
        coef = torch.cat([_pad(got[r]["subset"][name][0], T) for r in range(2)])
        assert torch.allclose(coef, full.coefficients, atol=1e-15, rtol=1e-12), name
        assert torch.equal(torch.cat([got[r]["subset"][name][1] for r in range(2)]), full.admitted), name
        for r in range(2):
            s = got[r]["subset"][name][2]
            assert s["trajectories"] == 12 and s["action_tokens"] == full.stats["action_tokens"], name
            assert not any("no process_group" in n for n in got[r]["subset"][name][3])
    fr = got[0]["subset"]["FlashReinforce"][2]
    assert fr["mean_reward"] == pytest.approx(sum(t["reward"] for t in trajs) / 12)


def test_the_default_reduces_nothing_and_says_so(ranks):
    trajs, worker, got = ranks
    for r in range(2):
        mine = trajs[r * 6 : (r + 1) * 6]
        for name, obj in worker.rule_objects():
            local = obj.update(mine, dtype=torch.float64)  # this process has no group: the rank's own batch
            coef, stats, notes = got[r]["default"][name]
            assert torch.equal(coef, local.coefficients), name
            assert stats["trajectories"] == 6
            assert any("no process_group was given" in n for n in notes), name


def test_a_rank_outside_the_group_is_refused(ranks):
    _, worker, got = ranks
    assert set(got[2]["errors"]) == {name for name, _ in worker.RULES}
    assert all("not a member of process_group" in e for e in got[2]["errors"].values())


def test_distributed_true_takes_the_world(ranks):
    trajs, worker, got = ranks
    for name, full in _full(worker, trajs).items():
        T = full.coefficients.shape[1]
        coef = torch.cat([_pad(got[r]["world"][name][0], T) for r in range(3)])
        assert torch.allclose(coef, full.coefficients, atol=1e-15, rtol=1e-12), name
        assert got[2]["world"][name][1]["trajectories"] == 12


def test_without_an_initialized_group():
    with pytest.raises(ValueError, match="not initialized"):
        methods.SAO().update([{"reward": 1, "logprobs": [-0.1], "values": [0.5]}], distributed=True)
    with pytest.raises(ValueError, match="not initialized"):
        methods.GRPO().update([{"reward": 1, "logprobs": [-0.1]}] * 8, process_group=object())
