"""Route timings at 10k, 100k and 1M rows (k = 8), from JSONL and from memory, beside the anchor SDK, and
reading side by side with polars' read_ndjson and pyarrow's read_json (the columnar reader's engine).

    python bench/route_bench.py                 # all sizes; the anchor at 10k and 100k if whileai is installed
    python bench/route_bench.py --anchor-1m     # also the anchor's pass_at on 1M rows (about 4 minutes)
    python bench/route_bench.py --sizes 1000000 --repeat 5   # the issue-10 target: read+route <= 1.5x polars

Timings are best of `--repeat`; peak memory is the max RSS of a fresh process that reads and routes the
largest file. polars is not a dependency: its column is skipped unless it is installed.
Also times the server's spawn-to-tools/list over stdio, and checks torch stays unimported.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pick_a_method import routing  # noqa: E402  (the installed project: pip install -e .)

K = 8


def make_rows(n_rows: int, seed: int = 0) -> list[dict]:
    """Rows like the anchor's benchmark: task_id, reward; 8 rollouts per task, pass probability uniform."""
    rng = np.random.default_rng(seed)
    n_tasks = n_rows // K
    p = rng.uniform(size=n_tasks)
    passed = rng.uniform(size=(n_tasks, K)) < p[:, None]
    return [{"task_id": f"task-{t}", "reward": float(passed[t, j]), "truncated": False, "model": "Qwen/Qwen3-8B"}
            for t in range(n_tasks) for j in range(K)]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def spawn_to_tools_list() -> tuple[float, bool]:
    """Seconds from spawning `pick-a-method` to its tools/list reply, and whether torch got imported."""
    exe = [sys.executable, "-m", "pick_a_method.server.cli"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(exe, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=Path(__file__).resolve().parent.parent)
    send = lambda m: (proc.stdin.write(json.dumps(m) + "\n"), proc.stdin.flush())  # noqa: E731
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    proc.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=30)
    probe = subprocess.run([sys.executable, "-c", "import sys; from pick_a_method.server.app import create_server; "
                            "create_server(); print('torch' in sys.modules)"],
                           capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    return elapsed, probe.stdout.strip() == "True"


def peak_rss_mb(path: Path) -> float:
    """Peak RSS (VmHWM) of a fresh process that reads `path` and routes it (interpreter and imports included).
    Not ru_maxrss: after fork + exec it still counts the parent's memory, which holds the 1M-row list here."""
    code = ("import sys; from pick_a_method import routing; "
            "routing.route(routing.read_rows(sys.argv[1]), 'Qwen/Qwen3-8B'); "
            "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')) / 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--anchor-1m", action="store_true", help="also run the anchor's pass_at on 1M rows (minutes)")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    try:
        import whileai.simulations as anchor  # the anchor SDK, installed beside the project
    except ImportError:
        anchor = None
        print("whileai not installed: anchor columns skipped (pip install whileai==0.131)")

    try:
        import polars as pl
    except ImportError:
        pl = None
        print("polars not installed: its column is skipped (pip install polars)")
    import pyarrow.json as pj

    print(f"{'rows':>9} {'route(list)':>12} {'route(jsonl)':>13} {'read_rows':>10} {'polars':>8} {'pyarrow':>8} "
          f"{'vs polars':>9} {'anchor pass_at':>15} {'ratio':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in map(int, args.sizes.split(",")):
            rows = make_rows(n)
            path = Path(tmp) / f"rows_{n}.jsonl"
            with open(path, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
            in_memory = best(lambda: routing.route(rows, "Qwen/Qwen3-8B"), args.repeat)
            from_file = best(lambda: routing.route(routing.read_rows(path), "Qwen/Qwen3-8B"), args.repeat)
            read_only = best(lambda: routing.read_rows(path), args.repeat)
            polars_t = best(lambda: pl.read_ndjson(path), args.repeat) if pl is not None else None
            arrow_t = best(lambda: pj.read_json(path), args.repeat)
            vs = f"{from_file / polars_t:.2f}x" if polars_t else ""
            anchor_t = ratio = ""
            if anchor is not None and (n <= 100_000 or args.anchor_1m):
                t = best(lambda: anchor.pass_at(rows), 1 if n > 10_000 else args.repeat)
                anchor_t, ratio = f"{t:.3f}s", f"{t / in_memory:.0f}x"
            shown = f"{polars_t:.3f}s" if polars_t else "-"
            print(f"{n:>9} {in_memory:>11.4f}s {from_file:>12.4f}s {read_only:>9.4f}s {shown:>8} {arrow_t:>7.3f}s "
                  f"{vs:>9} {anchor_t:>15} {ratio:>8}", flush=True)
            del rows
            if n == max(map(int, args.sizes.split(","))):
                print(f"peak RSS of route on {n:,} rows from JSONL, in a fresh process: {peak_rss_mb(path):.0f} MB")
    elapsed, torch_loaded = spawn_to_tools_list()
    print(f"stdio spawn -> tools/list: {elapsed:.2f}s; torch imported by the server: {torch_loaded}")


if __name__ == "__main__":
    main()
