"""Worker for test_distributed: one data-parallel rank computing its half of the batch under gloo."""

import os

import torch
import torch.distributed as dist


def run(rank: int, world: int, init_file: str, out_dir: str, trajectories: list) -> None:
    from pick_a_method import methods

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        half = len(trajectories) // world
        mine = trajectories[rank * half : (rank + 1) * half]
        results = {}
        for name, knobs in [("FlashReinforce", {"trust": 0.05}), ("SAO", {}), ("BPCO", {}), ("grpo", {"group_size": 2})]:
            u = methods.make_method(name, **knobs).update(mine, dtype=torch.float64)
            results[name] = (u.coefficients, u.admitted, dict(u.stats))
        torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()
