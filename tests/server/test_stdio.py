"""The installed `pick-a-method` over stdio, as a client spawns it: the wire carries JSON-RPC and nothing else."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters

from rowkit import EXAMPLES, MODEL


def command() -> list[str]:
    exe = shutil.which("pick-a-method")
    return [exe] if exe else [sys.executable, "-m", "pick_a_method.server.cli"]


class Wire:
    """A raw newline-delimited JSON-RPC conversation with the server process."""

    def __init__(self, env=None):
        self.proc = subprocess.Popen(command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, cwd=EXAMPLES.parent)
        self.lines: list[str] = []
        self.next_id = 0

    def send(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return None if notify else self.read(self.next_id)

    def read(self, wanted_id):
        while True:  # read the reply before closing stdin: EOF cancels work in flight
            line = self.proc.stdout.readline()
            assert line, f"server closed stdout; stderr: {self.proc.stderr.read()[-2000:]}"
            self.lines.append(line)
            msg = json.loads(line)  # any non-JSON line on stdout fails here
            if msg.get("id") == wanted_id:
                return msg

    def close(self):
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(timeout=30)
        self.proc.stderr.close()
        self.proc.stdout.close()
        return [*self.lines, *rest.splitlines()], code

    def initialize(self):
        reply = self.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "raw-wire-test", "version": "0"}})
        self.send("notifications/initialized", notify=True)
        return reply


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_stdout_carries_only_json_rpc(unbuffered):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    wire = Wire(env)
    init = wire.initialize()
    assert init["result"]["serverInfo"]["name"] == "pick-a-method"
    tools = wire.send("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} >= {"route", "band", "truncated_passes", "teacher_clears", "prime_rl_config"}
    routed = wire.send("tools/call", {"name": "route", "arguments": {"rows_path": "examples/mixed.jsonl", "model": MODEL}})
    assert routed["result"]["structuredContent"]["route"] == "grpo"
    bad = wire.send("tools/call", {"name": "band", "arguments": {"rows": [{"task_id": "a", "reward": "x"}]}})
    assert bad["result"]["isError"] and "row 0" in bad["result"]["content"][0]["text"]
    for name in ("truncated_passes", "pass_at", "band"):
        wire.send("tools/call", {"name": name, "arguments": {"rows_path": "examples/cut_off.jsonl"}})
    wire.send("tools/call", {"name": "holdout_size", "arguments": {}})
    lines, code = wire.close()
    assert code == 0
    for line in filter(str.strip, lines):
        json.loads(line)


async def test_sdk_client_over_stdio():
    exe, *args = command()
    params = StdioServerParameters(command=exe, args=args, cwd=str(EXAMPLES.parent), env=dict(os.environ))
    async with Client(params) as c:
        result = await c.call_tool("route", {"rows_path": "examples/floor.jsonl", "model": MODEL})
    assert result.structured_content["route"] == "floor"


def test_cli_prints_a_verdict_and_json():
    out = subprocess.run([*command(), "route", str(EXAMPLES / "mixed.jsonl"), "--model", MODEL],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.startswith("grpo: ")
    data = json.loads(subprocess.run([*command(), "band", str(EXAMPLES / "floor.jsonl"), "--json"],
                                     capture_output=True, text=True, timeout=60, check=True).stdout)
    assert data["verdict"] == "floor"
    bad = subprocess.run([*command(), "band", "nope.jsonl"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no such file" in bad.stderr and bad.stdout == ""
    preview = subprocess.run([*command(), "preview-update", str(EXAMPLES / "traces.jsonl"), "--method", "SAO"],
                             capture_output=True, text=True, timeout=120)
    assert preview.returncode == 2 and "values" in preview.stderr  # SAO needs a critic's values
    preview = subprocess.run([*command(), "preview-update", str(EXAMPLES / "traces.jsonl"), "--knob", "trust=0.1"],
                             capture_output=True, text=True, timeout=120, check=True)
    assert preview.stdout.startswith("ok: FlashReinforce would admit 64 of 64")
    skill = subprocess.run([*command(), "--print-skill"], capture_output=True, text=True, timeout=60, check=True)
    assert skill.stdout.startswith("---\nname: pick-a-method")

