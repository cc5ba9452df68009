"""Past one machine: DuckDB's per-task summary of N rows of Parquet, and the route on the summary.

    python bench/summary_bench.py --rows 100000000 --tasks 50000 --memory-limit 4GB

Makes the rows with DuckDB's own SQL (tasks scrambled, a teacher beside the trained model, ungraded rewards,
cut-offs by flag and finish reason that fail, so the route goes past question 1, token counts), then times, each
in a fresh process so its peak RSS (ru_maxrss: the interpreter and imports included) is its own:
`pick-a-method summarize` (DuckDB, out of core: spilling to --temp-dir past --memory-limit), and reading + routing
the summary (best of --repeat, the route alone too).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MAKE = """
import duckdb, sys
rows, n, tasks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
k = max(n // tasks, 1)
duckdb.sql(f'''COPY (SELECT * REPLACE (CASE WHEN truncated OR finish_reason = 'length' THEN 0.0 * reward
      ELSE reward END AS reward) FROM (SELECT
    'task-' || ((i // {k}) * 7919 % {tasks}) AS task_id,
    CASE WHEN i % 997 = 0 THEN NULL WHEN hash(i) % 100 < 10 + (i // {k}) % 80 THEN 1.0 ELSE 0.0 END AS reward,
    CASE WHEN (i // {max(k // 2, 1)}) % 2 = 0 THEN 'Qwen/Qwen3-8B' ELSE 'teacher-70b' END AS model,
    hash(i * 3) % 61 = 0 AS truncated,
    CASE WHEN hash(i * 5) % 53 = 0 THEN 'length' ELSE 'stop' END AS finish_reason,
    (hash(i * 7) % 2000)::INTEGER AS completion_tokens
    FROM range({n}) t(i))) TO '{rows}' (FORMAT parquet)''')
"""

SUMMARIZE = """
import json, resource, sys, time
from pick_a_method.server.cli import main
t = time.perf_counter()
argv = ["summarize", sys.argv[1], "--out", sys.argv[2], "--overwrite"] + sys.argv[3:]
assert main(argv) == 0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": peak}))
"""

ROUTE = """
import json, resource, sys, time
from pick_a_method import routing
best_read, best_route = float("inf"), float("inf")
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    rows = routing.read_rows(sys.argv[1])
    t1 = time.perf_counter()
    verdict = routing.route(rows, model="Qwen/Qwen3-8B")
    t2 = time.perf_counter()
    best_read, best_route = min(best_read, t2 - t), min(best_route, t2 - t1)
print(json.dumps({"read_and_route_s": best_read, "route_s": best_route, "route": verdict.route,
                  "n_rows": verdict.n_rows, "summary_rows": len(rows),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=100_000_000)
    p.add_argument("--tasks", type=int, default=50_000)
    p.add_argument("--memory-limit", default="4GB", help="DuckDB's memory_limit for summarize")
    p.add_argument("--dir", default=None, help="where the rows, the summary and the spill go (default: a tmp folder)")
    p.add_argument("--repeat", type=int, default=5, help="reads + routes of the summary, best kept")
    a = p.parse_args()
    work = Path(a.dir or tempfile.mkdtemp(prefix="summary-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows, summary = work / "rows.parquet", work / "rows.summary.parquet"
    if not rows.exists():
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", MAKE, str(rows), str(a.rows), str(a.tasks)], check=True)
        mb = rows.stat().st_size / 1e6
        print(f"made {a.rows:,} rows ({mb:.0f} MB of Parquet) in {time.perf_counter() - t:.1f} s")
    s = run(SUMMARIZE, str(rows), str(summary), "--memory-limit", a.memory_limit, "--temp-dir", str(work / "spill"))
    print(f"summarize: {s['seconds']:.1f} s, peak RSS {s['peak_mb']:.0f} MB (memory_limit {a.memory_limit})")
    r = run(ROUTE, str(summary), str(a.repeat))
    print(f"route on the summary ({r['summary_rows']:,} rows for {r['n_rows']:,} rollouts): read + route "
          f"{r['read_and_route_s']:.3f} s, route alone {r['route_s']:.3f} s, peak RSS {r['peak_mb']:.0f} MB "
          f"-> {r['route']}")


if __name__ == "__main__":
    main()
