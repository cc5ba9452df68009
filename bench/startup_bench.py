"""Start-up timings a client feels: spawn -> tools/list over stdio, and `pick-a-method --help`.

    python bench/startup_bench.py              # best and median of 7 runs each
    python bench/startup_bench.py --repeat 15

Targets: spawn -> tools/list <= 0.8 s, `--help` <= 0.3 s. Not asserted in tests: a loaded machine
would make them flaky. Beside each wall time the script gives the CPU seconds the process used (user + system, read
from the reaped child), which another agent's load on a shared machine does not inflate. The script also reports the floor under the first: a bare `python -c "import mcp"` (the
SDK's package import, which every MCPServer pays), the load average while it ran, the size of the tools/list
reply (characters), and whether `--help` loaded the MCP SDK, torch or transformers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def command() -> list[str]:
    exe = shutil.which("pick-a-method", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "pick_a_method.server.cli"]


# The official SDK's own floor: an MCPServer with no tools, served over stdio the same way.
BARE_SERVER = [sys.executable, "-c", "from mcp.server.mcpserver import MCPServer; MCPServer('bare').run('stdio')"]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def spawn_to_tools_list(cmd: list[str] | None = None) -> tuple[float, float, int, float]:
    """Seconds from spawning the server to its initialize and tools/list replies, the listing's length, and the CPU
    seconds the server used from spawn to exit."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd or command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    proc.stdout.readline()
    initialized = time.perf_counter() - t0
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    reply = proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=30)
    return (initialized, elapsed, len(json.dumps(json.loads(reply)["result"], separators=(",", ":"))),
            _children_cpu() - cpu0)


def import_mcp_seconds() -> float:
    """A fresh interpreter's `import mcp`, timed inside it: what no server on the official SDK can start under."""
    code = "import time; t = time.perf_counter(); import mcp; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def help_seconds() -> tuple[float, float]:
    """Wall and CPU seconds of `pick-a-method --help`."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run([*command(), "--help"], check=True, capture_output=True)
    return time.perf_counter() - t0, _children_cpu() - cpu0


def heavy_modules_on_help() -> list[str]:
    code = ("import contextlib, io, sys; from pick_a_method.server import cli\n"
            "try:\n    with contextlib.redirect_stdout(io.StringIO()):\n        cli.main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(','.join(m for m in ('mcp', 'torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7, help="runs of each measurement (default 7)")
    args = p.parse_args()
    load = os.getloadavg()[0]
    spawn = [spawn_to_tools_list() for _ in range(args.repeat)]
    helps = [help_seconds() for _ in range(args.repeat)]
    floor = [import_mcp_seconds() for _ in range(args.repeat)]
    bare = [spawn_to_tools_list(BARE_SERVER) for _ in range(args.repeat)]
    times, inits, cpus = [s[1] for s in spawn], [s[0] for s in spawn], [s[3] for s in spawn]
    print(f"command: {' '.join(command())}; {os.cpu_count()} CPUs, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"spawn -> tools/list: best {min(times):.3f} s, median {statistics.median(times):.3f} s "
          f"(target 0.8 s); CPU {min(cpus):.3f} s best; reply {spawn[0][2]:,} characters")
    print(f"spawn -> initialize: best {min(inits):.3f} s, median {statistics.median(inits):.3f} s")
    print(f"import mcp alone:    best {min(floor):.3f} s, median {statistics.median(floor):.3f} s (the SDK's floor)")
    print(f"a bare MCPServer:    best {min(s[1] for s in bare):.3f} s, median {statistics.median(s[1] for s in bare):.3f} "
          f"s (spawn -> tools/list, no tools); CPU {min(s[3] for s in bare):.3f} s best")
    print(f"--help: best {min(h for h, _ in helps):.3f} s, median {statistics.median(h for h, _ in helps):.3f} s "
          f"(target 0.3 s); CPU {min(c for _, c in helps):.3f} s best")
    print(f"modules --help loaded: {heavy_modules_on_help() or 'none of mcp, torch, transformers'}")


if __name__ == "__main__":
    main()
