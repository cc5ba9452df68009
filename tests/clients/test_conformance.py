"""`pick-a-method --transport http` against the official MCP conformance suite (server mode, streamable HTTP).

Most of the suite's server scenarios call fixture tools of the SDKs' "everything" servers (`test_simple_text`,
`test://static-text`, ...), so against an application server they fail by design, and two pass by accident
(`tools-call-simple-text`, `tools-call-error`: an unknown tool is a text error). The scenarios below are the
ones that concern a server without those fixtures; each must pass with every check a SUCCESS (INFO allowed:
the suite's note that an optional feature went unused), and the checks named here must be among them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client

from rowkit import MODEL

from .conftest import REPO, server_command

# (scenario, spec version) -> the checks that must come back SUCCESS. Listed by
# `conformance list --server` (0.2.0-alpha.12); the 2026-07-28 tools-list adds the name-format and order checks.
SCENARIOS: dict[tuple[str, str], set[str]] = {
    ("server-initialize", "2025-11-25"): {"server-initialize", "server-session-id-visible-ascii", "wire-schema-valid"},
    ("server-session-lifecycle", "2025-11-25"): {"server-session-initialized-accepted", "server-session-delete-accepted",
                                                 "server-session-terminated-returns-404"},
    ("ping", "2025-11-25"): {"ping", "wire-schema-valid"},
    ("tools-list", "2025-11-25"): {"tools-list", "wire-schema-valid"},
    ("tools-list", "2026-07-28"): {"tools-list", "tools-name-format", "tools-list-deterministic-order",
                                   "wire-schema-valid"},
    ("resources-list", "2025-11-25"): {"resources-list", "wire-schema-valid"},
    ("resources-list", "2026-07-28"): {"resources-list", "wire-schema-valid"},
    ("prompts-list", "2025-11-25"): {"prompts-list", "wire-schema-valid"},
    ("prompts-list", "2026-07-28"): {"prompts-list", "wire-schema-valid"},
    ("dns-rebinding-protection", "2025-11-25"): {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
    ("server-sse-multiple-streams", "2025-11-25"): {"server-accepts-multiple-post-streams",
                                                    "server-sse-streams-functional"},
}
# A scenario that needs a fixture tool we do not have: it must FAIL, or a pass above would prove nothing.
NEGATIVE_CONTROL = ("tools-call-image", "2025-11-25")
TOOLS = {"truncated_passes", "pass_at", "band", "teacher_clears", "holdout_size", "route", "prime_rl_config",
         "trl_config", "verl_config",
         "preview_update", "after", "track"}
LOOPBACK_ONLY = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1 and ::1 as /proc/net/tcp* spell them


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http_server(log: Path, port: int) -> subprocess.Popen:
    """Start the server on 127.0.0.1:port and return once it accepts connections (or fail with its log)."""
    proc = subprocess.Popen([*server_command(), "--transport", "http", "--port", str(port)], cwd=REPO,
                            stdin=subprocess.DEVNULL, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    stop(proc)
    raise RuntimeError(f"server did not accept connections on 127.0.0.1:{port} in 30 s: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """The URL of a running `pick-a-method --transport http`; the process is always stopped afterwards."""
    log = tmp_path_factory.mktemp("http-server") / "server.log"
    proc = None
    try:
        for attempt in range(3):  # a free port can be taken between the probe and the bind
            port = free_port()
            try:
                proc = start_http_server(log, port)
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        yield port, f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc is not None:
            stop(proc)


def conformance(peers, url: str, scenario: str, spec: str, out: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = {**peers.env, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    proc = subprocess.run(peers.conformance("server", "--url", url, "--scenario", scenario, "--spec-version", spec,
                                            "-o", str(out)),
                          env=env, cwd=out, capture_output=True, text=True, timeout=120)
    found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
    assert found, f"no checks.json for {scenario}; rc {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    return proc, json.loads(found[-1].read_text())


@pytest.mark.parametrize(("scenario", "spec"), list(SCENARIOS), ids=[f"{s}@{v}" for s, v in SCENARIOS])
def test_conformance_scenario_passes(peers, http_server, tmp_path, scenario, spec):
    _, url, _ = http_server
    proc, checks = conformance(peers, url, scenario, spec, tmp_path)
    bad = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert not bad and proc.returncode == 0, (f"rc {proc.returncode}; checks not passed: "
                                              f"{json.dumps(bad, indent=1)[:3000]}\n{proc.stdout[-2000:]}")
    passed = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    assert SCENARIOS[scenario, spec] <= passed, f"missing checks: {SCENARIOS[scenario, spec] - passed}"
    if scenario == "tools-list":
        listed = next(c for c in checks if c["id"] == "tools-list")["details"]["tools"]
        assert set(listed) == TOOLS


def test_a_scenario_that_needs_fixture_tools_fails(peers, http_server, tmp_path):
    """The negative control: the harness sees a failure when there is one."""
    _, url, _ = http_server
    proc, checks = conformance(peers, url, *NEGATIVE_CONTROL, tmp_path)
    assert proc.returncode != 0
    assert any(c["status"] == "FAILURE" for c in checks)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/tcp")
def test_http_listens_on_loopback_only(http_server):
    port, _, proc = http_server
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                listening.append(addr)
    assert listening, f"nothing listens on port {port}"
    assert set(listening) <= LOOPBACK_ONLY, f"port {port} listens beyond loopback: {listening}"


async def test_route_over_http_with_the_sdk_client(http_server, monkeypatch):
    """The same tools, called over streamable HTTP (the conformance scenarios only list them)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    _, url, _ = http_server
    async with Client(url) as c:
        result = await c.call_tool("route", {"rows_path": "examples/mixed.jsonl", "model": MODEL})
        bad = await c.call_tool("band", {"rows": [{"task_id": "a", "reward": "x"}]})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["route"] == "grpo"
    assert bad.is_error and "reward" in bad.content[0].text
