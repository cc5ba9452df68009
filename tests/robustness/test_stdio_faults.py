"""Load and faults against the real `pick-a-method` process over stdio, in raw JSON-RPC lines.

1,000 sequential calls and 50 concurrent ones are all answered correctly with the server's RSS growth under
50 MB after warm-up; malformed lines are ignored or answered and the next request is answered; a client
that disconnects mid-call, SIGTERM and Ctrl-C (idle and busy) each end the process promptly with nothing
but JSON-RPC on stdout. Every wait is bounded: a reader thread feeds a queue read with deadlines.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rowkit import EXAMPLES, MODEL, rows_from_passes

MIXED = rows_from_passes([0, 1, 2, 3, 4] * 4)
REPLY_S = 60.0  # a reply that takes longer is a hang
EXIT_S = 10.0  # a process that takes longer to go after EOF or a signal has hung


def command() -> list[str]:
    exe = shutil.which("pick-a-method")
    return [exe] if exe else [sys.executable, "-m", "pick_a_method.server.cli"]


class Wire:
    """A raw newline-delimited JSON-RPC conversation with a `pick-a-method` process; every read has a deadline."""

    def __init__(self, *args: str, cwd: Path = EXAMPLES.parent):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PICK_A_METHOD_")}
        self.proc = subprocess.Popen([*command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.stdout: queue.Queue[bytes | None] = queue.Queue()
        self.lines: list[bytes] = []  # everything the server wrote on stdout
        self.stderr = bytearray()
        self.next_id = 0
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()  # a full stderr pipe would block it

    def _pump_stdout(self) -> None:
        for raw in self.proc.stdout:
            self.stdout.put(raw)
        self.stdout.put(None)

    def _pump_stderr(self) -> None:
        for raw in self.proc.stderr:
            self.stderr += raw
            del self.stderr[:-200_000]

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> int:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})}
        self.write(json.dumps(msg).encode() + b"\n")
        return self.next_id

    def notify(self, method: str) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def read(self, wanted: set[int], timeout: float = REPLY_S) -> dict[int, dict]:
        """Replies to the ids in `wanted`, read within `timeout`; every stdout line must be JSON-RPC."""
        got: dict[int, dict] = {}
        deadline = time.monotonic() + timeout
        while wanted - set(got):
            try:
                raw = self.stdout.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no reply to {sorted(wanted - set(got))[:10]} within {timeout:g} s; "
                            f"stderr: {self.stderr_text()[-2000:]}")
            assert raw is not None, f"the server closed stdout; stderr: {self.stderr_text()[-2000:]}"
            self.lines.append(raw)
            msg = json_rpc(raw)
            if msg.get("id") in wanted:
                got[msg["id"]] = msg
        return got

    def call(self, method: str, params: dict | None = None, timeout: float = REPLY_S) -> dict:
        i = self.request(method, params)
        return self.read({i}, timeout)[i]

    def initialize(self) -> dict:
        reply = self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "robustness", "version": "0"}})
        self.notify("notifications/initialized")
        return reply

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def wait_exit(self, timeout: float = EXIT_S) -> tuple[int, float]:
        started = time.monotonic()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            pytest.fail(f"the server was still running {timeout:g} s later; stderr: {self.stderr_text()[-2000:]}")
        return code, time.monotonic() - started

    def rest_of_stdout(self) -> list[bytes]:
        """After exit: the remaining stdout lines (each checked to be JSON-RPC)."""
        rest = []
        while True:
            raw = self.stdout.get(timeout=10)
            if raw is None:
                break
            json_rpc(raw)
            rest.append(raw)
        self.lines += rest
        return rest

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def json_rpc(raw: bytes) -> dict:
    text = raw.decode("utf-8")
    try:
        msg = json.loads(text)
    except ValueError:
        pytest.fail(f"a line on stdout is not JSON: {text[:300]!r}")
    assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", text[:300]
    return msg


@pytest.fixture
def wire():
    w = Wire()
    w.initialize()
    yield w
    w.close()


def tool(name: str, arguments: dict) -> dict:
    return {"name": name, "arguments": arguments}


# Calls with their expected answer: a check on the result (or the words of a tool error).
MIXED_PATH = str(EXAMPLES / "mixed.jsonl")
CALLS = [
    (tool("band", {"rows": MIXED}), lambda r: r["structuredContent"]["verdict"] == "mixed"),
    (tool("route", {"rows_path": MIXED_PATH, "model": MODEL}), lambda r: r["structuredContent"]["route"] == "grpo"),
    (tool("pass_at", {"rows": MIXED, "per_task_limit": 2}), lambda r: r["structuredContent"]["pass_at_1"] == 0.5),
    (tool("truncated_passes", {"rows_path": str(EXAMPLES / "cut_off.jsonl")}),
     lambda r: r["structuredContent"]["verdict"] == "fix_reward" and r["structuredContent"]["count"] > 0),
    (tool("holdout_size", {"effect": 0.05, "k": 8}), lambda r: r["structuredContent"]["n_tasks"] >= 2),
    (tool("band", {"rows": [{"task_id": "a", "reward": "nope"}]}),
     lambda r: r["isError"] and "row 0" in r["content"][0]["text"] and "reward" in r["content"][0]["text"]),
    (tool("route", {"rows_path": "no/such/file.jsonl"}),
     lambda r: r["isError"] and "no such file" in r["content"][0]["text"]),
    (tool("prime_rl_config", {"taskset": "refunds-v1", "method": "grpo", "model": MODEL}),
     lambda r: r["structuredContent"]["verdict"] == "ready"),
]


def check_reply(msg: dict, expect) -> None:
    assert "result" in msg, msg
    result = msg["result"]
    if not result.get("isError"):
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert expect(result), json.dumps(result)[:500]


def test_a_thousand_sequential_calls_are_answered_in_bounded_memory(wire, tally):
    for i in range(100):  # warm-up: imports, caches, the thread pool
        request, expect = CALLS[i % len(CALLS)]
        check_reply(wire.call("tools/call", request), expect)
    before = wire.rss_mb()
    started = time.monotonic()
    for i in range(1000):
        request, expect = CALLS[i % len(CALLS)]
        check_reply(wire.call("tools/call", request), expect)
    seconds = time.monotonic() - started
    growth = wire.rss_mb() - before
    tally.count("stdio calls answered in sequence", 1100)
    tally.figure("1,000 sequential stdio calls", f"{seconds:.1f} s ({1000 / seconds:.0f}/s), RSS {before:.0f} MB -> "
                 f"growth {growth:+.1f} MB after 100 warm-up calls")
    assert growth < 50, f"RSS grew {growth:.1f} MB over 1,000 calls"


def test_fifty_concurrent_calls_are_all_answered(wire, tally):
    for request, expect in CALLS:  # warm-up
        check_reply(wire.call("tools/call", request), expect)
    before = wire.rss_mb()
    timings = []
    for _ in range(5):
        started = time.monotonic()
        sent = {}
        for i in range(50):  # all 50 written before any reply is read
            request, expect = CALLS[i % len(CALLS)]
            sent[wire.request("tools/call", request)] = expect
        replies = wire.read(set(sent))
        timings.append(time.monotonic() - started)
        for i, msg in replies.items():
            check_reply(msg, sent[i])
    growth = wire.rss_mb() - before
    tally.count("stdio calls answered 50 at a time", 250)
    tally.figure("50 concurrent stdio calls (x5 rounds)", f"{min(timings):.2f}-{max(timings):.2f} s a round, "
                 f"RSS growth {growth:+.1f} MB")
    assert growth < 50, f"RSS grew {growth:.1f} MB"


MALFORMED = [
    b"this is not json",
    b"{",
    b"[]",
    b"[1, 2]",
    b'"a string"',
    b"null",
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "id": 900}',  # no method
    b'{"jsonrpc": "1.0", "id": 901, "method": "tools/list"}',
    b'{"id": 902, "method": "tools/list"}',  # no jsonrpc
    b'{"jsonrpc": "2.0", "id": 903, "method": "no/such/method"}',
    b'{"jsonrpc": "2.0", "id": 904, "method": "tools/call", "params": "not an object"}',
    b'{"jsonrpc": "2.0", "id": 905, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}',
    b'{"jsonrpc": "2.0", "id": 906, "method": "tools/call", "params": {"name": "band", "arguments": [1, 2]}}',
    b'{"jsonrpc": "2.0", "id": 907, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    b'[{"task_id": "\\ud800", "reward": 1}]}}}',  # a lone surrogate escape: the SDK drops the line
    b'{"jsonrpc": "2.0", "id": 908, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    b'[{"task_id": "a", "reward": 1}], "pass_threshold": 1e999}}}',
    b'{"jsonrpc": "2.0", "id": 909, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    b'[{"task_id": "a", "reward": 1}], "pass_threshold": NaN}}}',
    b'{"jsonrpc": "2.0", "id": 910, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    b'[{"task_id": "a", "reward": Infinity}]}}}',
    b'{"jsonrpc": "2.0", "id": 911, "method": "tools/call", "params": {"name": "holdout_size", "arguments": '
    b'{"task_std": Infinity}}}',
    b'{"jsonrpc": "2.0", "id": "string-id", "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": 912, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    b'[{"task_id": "caf\xe9", "reward": 1}]}}}',  # not UTF-8 on the wire
    b"\xff\xfe\x00garbage\x80",
    b"x" * (5 << 20),  # a 5 MB line of junk
    b'{"jsonrpc": "2.0", "id": 913, "method": "tools/call", "params": {"name": "band", "arguments": {"rows": '
    + json.dumps(MIXED).encode() + b"}}}" + b" " * 100,
    b"",  # a blank line
    b"   \t",
]
# Answers a server must give when it answers at all (the line reached a handler): id -> words in the reply
MUST_SAY = {903: "Method not found", 905: "no_such_tool", 909: "pass_threshold", 910: "reward", 911: "task_std"}


def test_malformed_lines_are_ignored_or_answered_and_the_next_request_is_answered(wire, tally):
    answered = {}
    for n, line in enumerate(MALFORMED):
        wire.write(line + b"\n")
        ping = wire.request("tools/list")
        replies = wire.read({ping})  # the lines before the ping's reply stay in wire.lines
        assert replies[ping]["result"]["tools"], n
        for raw in wire.lines:
            msg = json_rpc(raw)
            if msg.get("id") not in (None, ping) and "id" in msg:
                answered[msg["id"]] = msg
        wire.lines.clear()
    for i, words in MUST_SAY.items():
        if i in answered:
            assert words.lower() in json.dumps(answered[i]).lower(), (i, answered[i])
    # These reach the tools, so they must be answered (a tool error names the problem). A tool runs in a worker
    # thread, so its reply may follow a later ping's: wait for the ones still due.
    due = {i for i in (905, 909, 910, 911, 913) if i not in answered}
    answered.update(wire.read(due) if due else {})
    for i in (905, 909, 910, 911, 913):
        assert i in answered, f"request {i} got no reply"
    assert answered[913]["result"]["structuredContent"]["verdict"] == "mixed"
    tally.count("malformed JSON-RPC lines survived", len(MALFORMED))
    tally.figure("malformed lines", f"{len(MALFORMED)} sent; {len(answered)} answered, the rest ignored; the next "
                 f"request answered every time")


@pytest.fixture(scope="module")
def slow_rows(tmp_path_factory) -> Path:
    """A file that takes the server about a second to read: a call in flight to interrupt."""
    path = tmp_path_factory.mktemp("slow") / "million.jsonl"
    line = '{"task_id": "t%d", "reward": %d.0, "truncated": false, "model": "Qwen/Qwen3-8B"}\n'
    with open(path, "w") as f:
        f.writelines(line % (i // 8, i % 3 == 0) for i in range(1_000_000))
    return path


def start_slow_call(w: Wire, slow_rows: Path) -> int:
    i = w.request("tools/call", tool("route", {"rows_path": str(slow_rows), "model": MODEL}))
    time.sleep(0.4)  # the read is under way
    assert w.proc.poll() is None
    return i


def check_clean_exit(w: Wire, codes: tuple[int, ...], what: str, tally) -> None:
    code, seconds = w.wait_exit()
    w.rest_of_stdout()
    assert code in codes, f"exit code {code} after {what}; stderr: {w.stderr_text()[-2000:]}"
    stdout = b"".join(w.lines).decode()
    assert "Traceback" not in stdout
    tally.figure(f"exit after {what}", f"code {code} in {seconds:.2f} s")


def test_a_client_that_disconnects_mid_call_leaves_a_clean_exit(wire, slow_rows, tally):
    start_slow_call(wire, slow_rows)
    wire.proc.stdin.close()
    check_clean_exit(wire, (0,), "stdin closed mid-call", tally)
    assert "Traceback" not in wire.stderr_text(), wire.stderr_text()[-3000:]


@pytest.mark.parametrize("sig, codes", [(signal.SIGTERM, (0, -15, 143)), (signal.SIGINT, (0, -2, 130))],
                         ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_a_signal_ends_the_server_promptly_and_cleanly(wire, slow_rows, sig, codes, busy, tally):
    if busy:
        start_slow_call(wire, slow_rows)
    else:
        check_reply(wire.call("tools/call", CALLS[0][0]), CALLS[0][1])
    wire.proc.send_signal(sig)
    check_clean_exit(wire, codes, f"{signal.Signals(sig).name} while {'busy' if busy else 'idle'}", tally)


def test_the_cap_flags_reach_the_running_server(tmp_path):
    w = Wire("--max-rows", "5", "--max-bytes", "100000", "--call-seconds", "30",
             "--root", str(Path(MIXED_PATH).parent), cwd=tmp_path)  # the examples may be read: the caps decide
    try:
        w.initialize()
        reply = w.call("tools/call", tool("band", {"rows": MIXED}))["result"]
        assert reply["isError"] and "cap of 5" in reply["content"][0]["text"]
        reply = w.call("tools/call", tool("band", {"rows_path": MIXED_PATH}))["result"]
        assert reply["isError"] and "more than 5 rows" in reply["content"][0]["text"]
        w.proc.stdin.close()
        assert w.wait_exit()[0] == 0
    finally:
        w.close()
