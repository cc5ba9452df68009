"""Worker for test_distributed: a 3-rank gloo world whose first two ranks form the data-parallel group."""

import os

import torch
import torch.distributed as dist

RULES = [
    ("FlashReinforce", {"trust": 0.05}),
    ("SAO", {}),
    ("BPCO", {}),
    ("grpo", {"group_size": 2}),
    ("opd", {"teacher": "t"}),
    ("async grpo", {"method": None}),
]


def rule_objects():
    from pick_a_method import methods

    out = []
    for name, knobs in RULES:
        if name == "async grpo":
            out.append((name, methods.Async(method={"name": "grpo", "group_size": 2}, correction="icepop")))
        else:
            out.append((name, methods.make_method(name, **knobs)))
    return out


def run(rank: int, world: int, init_file: str, out_dir: str, trajectories: list) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        dp = dist.new_group([0, 1])  # every rank must call new_group, members or not
        results: dict = {"subset": {}, "default": {}, "world": {}, "errors": {}}
        half = len(trajectories) // 2
        third = len(trajectories) // 3
        for name, obj in rule_objects():
            if rank < 2:  # the data-parallel group: each rank holds half the batch
                mine = trajectories[rank * half : (rank + 1) * half]
                u = obj.update(mine, dtype=torch.float64, process_group=dp)
                results["subset"][name] = (u.coefficients, u.admitted, dict(u.stats), list(u.notes))
                # no process_group: this rank's batch only, and a note says so (no all-reduce over the world)
                d = obj.update(mine, dtype=torch.float64)
                results["default"][name] = (d.coefficients, dict(d.stats), list(d.notes))
            else:  # rank 2 is not in the group: it may not use it
                try:
                    obj.update(trajectories[:half], dtype=torch.float64, process_group=dp)
                except ValueError as exc:
                    results["errors"][name] = str(exc)
            # distributed=True: the whole world, each rank a third
            mine3 = trajectories[rank * third : (rank + 1) * third]
            w = obj.update(mine3, dtype=torch.float64, distributed=True)
            results["world"][name] = (w.coefficients, dict(w.stats))
        torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()
