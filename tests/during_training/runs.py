"""Small runs written the way each trainer writes them, for the tests (the real fixtures are under
tests/fixtures/trainer_runs/, made by the trainers' own code; these are made by hand to the same record shapes)."""

from __future__ import annotations

import json
import random
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "trainer_runs"


def verl_step(folder: Path, step: int, *, prompts: int = 8, k: int = 4, seed: int = 0, uid: bool = False,
              rate: float | None = None, blank_pass: bool = False) -> Path:
    rng = random.Random(seed * 1000 + step)
    lines = []
    for p in range(prompts):
        r = rng.random() if rate is None else rate
        for i in range(k):
            ok = rng.random() < r
            row = {"input": f"prompt {p}", "output": f"reply {rng.random()}", "gts": "1", "score": float(ok),
                   "step": step, "acc": float(ok)}
            if uid:
                row["uid"] = f"u{p}_0_{i}"
            lines.append(row)
    if blank_pass:
        lines[0].update(output="  ", score=1.0)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{step}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def verl_run(folder: Path, steps: int, **kw) -> Path:
    for s in range(1, steps + 1):
        verl_step(folder, s, **kw)
    return folder


def prime_record(group: str, score: float, reply: str, *, stop: str | None = None, finish: str = "stop") -> dict:
    """One verifiers episode record (Episode.to_record, verifiers 0.4) as prime-rl's FileMonitor writes it."""
    return {"id": f"{group}-{random.random()}", "env": {"id": "e", "name": "math"},
            "task": {"type": "t", "data": {}, "key": group, "hash": group}, "group": {"id": group},
            "ok": True, "errors": [], "stop_condition": stop, "is_completed": True,
            "traces": [{"agent": {"name": "a", "trainable": True},
                        "nodes": [{"role": "user", "content": "q"}, {"role": "assistant", "content": reply}],
                        "calls": [{"finish_reason": finish, "usage": {}}],
                        "rewards": {"correct": {"score": score, "weight": 1.0}}, "metrics": {}, "info": {}}]}


def prime_run(root: Path, steps: int, *, cut_pass_at: int | None = None) -> Path:
    rng = random.Random(0)
    for s in range(1, steps + 1):
        folder = root / "rollouts" / f"step_{s}" / "train" / "all"
        folder.mkdir(parents=True)
        records = []
        for g in range(8):
            rate = rng.random()
            for i in range(4):
                ok = rng.random() < rate
                cut = i == 0 and g == 0
                records.append(prime_record(f"g{s}-{g}", float(ok and not cut), f"answer {rng.random()}",
                                            stop="max_output_tokens" if cut else None))
        if cut_pass_at is not None and s >= cut_pass_at:
            records[0]["traces"][0]["rewards"]["correct"]["score"] = 1.0  # the cut-off one passes
        (folder / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with (root / "metrics.jsonl").open("w") as f:
        for s in range(1, steps + 1):
            f.write(json.dumps({"step": s, "time": 0.0, "train/agg/all/a/solved_some": 0.6,
                                "train/agg/all/a/entropy": 0.5 - s / 1000}) + "\n")
    return root
