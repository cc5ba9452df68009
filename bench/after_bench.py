"""`after` timings: 10k tasks x 8 rollouts x 4 arms (before, after, random selection, random reward) read from JSONL
files and judged, against a target of under a second; the judging alone from rows already read; and with
--anchor the anchor SDK's compare_runs on the before/after pair (one comparison, no controls).

    python bench/after_bench.py                    # best of 5
    python bench/after_bench.py --tasks 100000     # a larger suite
    python bench/after_bench.py --anchor           # also whileai's compare_runs (pure Python; tens of seconds)

Timings are best of --repeat, in one process (the first call's imports are timed apart, as `cold`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from route_bench import best  # best of `repeat` (bench/ is on sys.path when run as a script)

K = 8
TARGET_S = 1.0  # 10k tasks x 8 rollouts x 4 arms read and judged in under a second


def write_arms(folder: Path, tasks: int, seed: int = 0) -> dict[str, Path]:
    """Four arms on the same tasks: before at a per-task rate from Beta(2, 2), the trained arm 0.05 up, a random
    selection 0.03 up, a random reward at before's rate. Rows like an eval tool's plain export."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, tasks)
    gains = {"before": 0.0, "after": 0.05, "random_selection": 0.03, "random_reward": 0.0}
    paths = {}
    for name, gain in gains.items():
        passed = rng.random((tasks, K)) < np.clip(p + gain, 0, 1)[:, None]
        cut = rng.random((tasks, K)) < 0.02
        path = folder / f"{name}.jsonl"
        with open(path, "w") as f:
            for t in range(tasks):
                for j in range(K):
                    f.write(json.dumps({"task_id": f"task-{t}", "reward": float(passed[t, j]),
                                        "truncated": bool(cut[t, j]), "model": f"model-{name}"}) + "\n")
        paths[name] = path
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--anchor", action="store_true", help="also time whileai's compare_runs on before/after")
    args = ap.parse_args()
    print(f"# after_bench: {args.tasks:,} tasks x {K} rollouts x 4 arms; Python {platform.python_version()}, "
          f"{os.cpu_count()} cores, {platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_arms(Path(tmp), args.tasks)
        size = sum(p.stat().st_size for p in paths.values())
        print(f"files: 4 JSONL, {4 * args.tasks * K:,} rows, {size / 1e6:.1f} MB")
        t0 = time.perf_counter()
        from pick_a_method import routing
        v = routing.after(**{k: str(p) for k, p in paths.items()})
        cold = time.perf_counter() - t0
        call = lambda: routing.after(**{k: str(p) for k, p in paths.items()})  # noqa: E731
        read = lambda: [routing.read_rows(str(p)) for p in paths.values()]  # noqa: E731
        full = best(call, args.repeat)
        reading = best(read, args.repeat)
        rows = {k: routing.read_rows(str(p)) for k, p in paths.items()}

        def judge_fresh():  # tables are cached on the rows: drop them so each call builds its own
            for r in rows.values():
                r._tables.clear()
            routing.after(**rows)
        judging = best(judge_fresh, args.repeat)
        print(f"verdict: {v.verdict}: {v.summary}")
        print(f"{'read and judged (4 files)':34s} {full:8.3f} s   target < {TARGET_S:g} s: "
              f"{'met' if full < TARGET_S else 'NOT met'}")
        print(f"{'  of which reading the 4 files':34s} {reading:8.3f} s")
        print(f"{'  judging rows already read':34s} {judging:8.3f} s")
        print(f"{'first call in the process (cold)':34s} {cold:8.3f} s   (imports numpy, pyarrow, pydantic)")
        if args.anchor:
            from whileai.simulations.score.stats import compare_runs
            plain = {k: [json.loads(line) for line in open(paths[k])] for k in ("before", "after")}
            t0 = time.perf_counter()
            anchor = compare_runs(plain["before"], plain["after"])
            took = time.perf_counter() - t0
            print(f"{'whileai compare_runs (1 pair)':34s} {took:8.3f} s   delta {anchor['delta']:+.4f} "
                  f"{tuple(round(x, 4) for x in anchor['ci95'])}; after: {v.paired.mean_diff:+.4f} "
                  f"{tuple(round(x, 4) for x in v.paired.ci95)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
