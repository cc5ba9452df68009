"""Route timings at 10k, 100k and 1M rows (k = 8), from JSONL and from memory, beside the anchor SDK, and
reading side by side with polars' read_ndjson and pyarrow's read_json (the columnar reader's engine).

    python bench/route_bench.py                 # all sizes; the anchor at 10k and 100k if whileai is installed
    python bench/route_bench.py --anchor-1m     # also the anchor's pass_at on 1M rows (about 4 minutes)
    python bench/route_bench.py --sizes 1000000 --repeat 5   # the target: read+route <= 1.5x polars
    python bench/route_bench.py --sizes 1000000 --repeat 1 --replies   # each row with its reply (question 0)

Timings are best of `--repeat`, the readers taken in turn within each repeat (so a busy spell on a shared
machine slows them alike); the ratios divide by polars' read_ndjson on the same file, and the CPU seconds
(all threads) of read+route and polars are shown too, since on a loaded machine wall time favours the
single-threaded side. Peak memory is VmHWM of a fresh process that reads and routes the largest file.
polars is not a dependency: its columns are skipped unless it is installed (pip install polars).
Also times the server's spawn-to-tools/list over stdio, and checks torch stays unimported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pick_a_method import routing  # noqa: E402  (the installed project: pip install -e .)

K = 8


WORDS = "the answer is so we add carry one step then check result".split()


def make_rows(n_rows: int, seed: int = 0, replies: bool = False) -> list[dict]:
    """Rows like the anchor's benchmark: task_id, reward; 8 rollouts per task, pass probability uniform. With
    `replies`, each row also carries a `completion` of 40-400 characters, each its own text."""
    rng = np.random.default_rng(seed)
    n_tasks = n_rows // K
    p = rng.uniform(size=n_tasks)
    passed = rng.uniform(size=(n_tasks, K)) < p[:, None]
    rows = [{"task_id": f"task-{t}", "reward": float(passed[t, j]), "truncated": False, "model": "Qwen/Qwen3-8B"}
            for t in range(n_tasks) for j in range(K)]
    if replies:
        words = rng.integers(8, 80, size=len(rows))
        for i, r in enumerate(rows):
            r["completion"] = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(words[i])) + f" \\boxed{{{i}}}"
    return rows


TARGET = 1.5  # 1M rows read and routed within 1.5x of polars' read_ndjson alone


def best(fn, repeat: int, warm: bool = False, clock=time.perf_counter) -> float:
    """The fastest of `repeat` calls, in seconds of `clock` (wall time; time.process_time for CPU time), after one
    untimed call where `warm` (first-call imports, the allocator). The other benches time with this too."""
    if warm:
        fn()
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def side_by_side(fns: dict, repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """Best wall and best CPU seconds of each function, all of them run in turn within each repeat."""
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), _cpu()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(_cpu() - c0)
    return {k: min(v) for k, v in wall.items()}, {k: min(v) for k, v in cpu.items()}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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
    ap.add_argument("--replies", action="store_true", help="each row carries its reply (a completion string)")
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

    print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python "
          f"{platform.python_version()}; load average {load()} at the start")
    print(f"{'rows':>9} {'route(list)':>12} {'read_rows':>10} {'read+route':>11} {'polars':>8} {'pyarrow':>8} "
          f"{'read/polars':>12} {'read+route/polars':>18} {'anchor pass_at':>15} {'ratio':>6}")
    sizes = list(map(int, args.sizes.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            rows = make_rows(n, replies=args.replies)
            path = Path(tmp) / f"rows_{n}.jsonl"
            with open(path, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
            routing.read_rows(path)  # imports pyarrow, warms the page cache
            fns = {"route(list)": lambda: routing.route(rows, "Qwen/Qwen3-8B"),
                   "read_rows": lambda: routing.read_rows(path),
                   "read+route": lambda: routing.route(routing.read_rows(path), "Qwen/Qwen3-8B"),
                   "pyarrow": lambda: pj.read_json(path)}
            if pl is not None:
                fns["polars"] = lambda: pl.read_ndjson(path)
            wall, cpu = side_by_side(fns, args.repeat)
            polars_t = wall.get("polars")
            vs_read = f"{wall['read_rows'] / polars_t:.2f}x" if polars_t else "-"
            vs_route = f"{wall['read+route'] / polars_t:.2f}x" if polars_t else "-"
            anchor_t = ratio = ""
            if anchor is not None and (n <= 100_000 or args.anchor_1m):
                t = best(lambda: anchor.pass_at(rows), 1 if n > 10_000 else args.repeat)
                anchor_t, ratio = f"{t:.3f}s", f"{t / wall['route(list)']:.0f}x"
            shown = f"{polars_t:.3f}s" if polars_t else "-"
            print(f"{n:>9} {wall['route(list)']:>11.4f}s {wall['read_rows']:>9.4f}s {wall['read+route']:>10.4f}s "
                  f"{shown:>8} {wall['pyarrow']:>7.3f}s {vs_read:>12} {vs_route:>18} {anchor_t:>15} {ratio:>6}",
                  flush=True)
            del rows
            if n == max(sizes):
                if polars_t:
                    met = "met" if wall["read+route"] <= TARGET * polars_t else "NOT met"
                    print(f"{n:,} rows: read+route {wall['read+route']:.3f}s = {wall['read+route'] / polars_t:.2f}x "
                          f"polars read_ndjson {polars_t:.3f}s (target <= {TARGET}x: {met}); CPU seconds, all "
                          f"threads: read+route {cpu['read+route']:.3f}, polars {cpu['polars']:.3f}, pyarrow "
                          f"read_json {cpu['pyarrow']:.3f}")
                rss = peak_rss_mb(path)
                print(f"peak RSS of read+route on {n:,} rows from JSONL, in a fresh process: {rss:.0f} MB "
                      f"(target < 300 MB: {'met' if rss < 300 else 'NOT met'})")
    print(f"load average {load()} at the end")
    elapsed, torch_loaded = spawn_to_tools_list()
    print(f"stdio spawn -> tools/list: {elapsed:.2f}s; torch imported by the server: {torch_loaded}")


if __name__ == "__main__":
    main()
