"""track's speed: 1,000 verl steps x 512 rollouts read and judged (replies hashed, every check made), a second call
after 10 new steps (the cached steps not read again), and 10,000 steps of a metrics log alone. Peak memory is the
resident set's high-water mark. The files are written once under --folder (about 250 MB).

    python bench/track_bench.py [--folder /tmp/track-bench]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
WORDS = ["the", "answer", "is", "so", "we", "compute", "step", "then", "x", "="]


def verl_step(folder: Path, step: int, rng: random.Random) -> None:
    lines = []
    for g in range(64):
        prompt = f"Problem {step}-{g}: " + " ".join(rng.choice(WORDS) for _ in range(20))
        rate = rng.random()
        for _ in range(8):
            ok = float(rng.random() < rate)
            out = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80)))
            lines.append(json.dumps({"input": prompt, "output": out, "gts": "42", "score": ok, "step": step,
                                     "acc": ok}))
    (folder / f"{step}.jsonl").write_text("\n".join(lines) + "\n")


def make(folder: Path, steps: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for s in range(1, steps + 1):
        if not (folder / f"{s}.jsonl").exists():
            verl_step(folder, s, rng)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--folder", default="/tmp/track-bench")
    args = p.parse_args()
    root = Path(args.folder)
    run, metrics = root / "verl", root / "metrics"
    make(run, 1000)
    for extra in range(1001, 1011):
        (run / f"{extra}.jsonl").unlink(missing_ok=True)
    metrics.mkdir(parents=True, exist_ok=True)
    with (metrics / "experiment.jsonl").open("w") as f:
        for s in range(1, 10_001):
            f.write(json.dumps({"step": s, "data": {"critic/score/mean": 0.5, "response_length/mean": 300.0,
                                                    "response_length/clip_ratio": 0.02, "actor/entropy": 0.4}})
                    + "\n")
    from pick_a_method.routing.during_training import cache, tracker  # imports outside the timings

    later = time.time() + 3600  # every step settled
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    first = tracker.track(run, now=later)
    first_s = time.perf_counter() - t
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    make(run, 1010)
    t = time.perf_counter()
    second = tracker.track(run, now=later)
    second_s = time.perf_counter() - t
    cache.clear()
    t = time.perf_counter()
    alone = tracker.track(metrics, now=later)
    metrics_s = time.perf_counter() - t
    print(f"1,000 steps x 512 rollouts read and judged: {first_s:.2f} s ({first.verdict}; {first.run.steps_read} "
          f"steps)")
    print(f"second call, 10 new steps: {second_s:.3f} s ({second.run.steps_read} steps, {second.run.new_windows} new "
          f"window)")
    print(f"10,000 steps of metrics alone: {metrics_s:.3f} s ({alone.run.steps_read} steps)")
    print(f"peak resident memory: {rss1 / 1024:.0f} MB (before the first call {rss0 / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
