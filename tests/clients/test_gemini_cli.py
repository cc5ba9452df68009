"""Gemini CLI (its pinned release, .ci/node.sh) drives the installed server against a stand-in Gemini API on
127.0.0.1: what it sends its model, and one tool call there and back.

What was seen on the wire (Gemini CLI 0.61.0): each tool goes to the model as `mcp_pick-a-method_<tool>` with the
input schema as `parametersJsonSchema`, after the CLI's own rewrite of a two-member type array ["string", "null"]
into {"type": "string", "nullable": true}; a longer type array (["integer", "object", "null"]) would pass unchanged
to a model API that reads one `type` a node, so the listing has none. The output schema is not sent. The folder
must be trusted for the server to connect: GEMINI_CLI_TRUST_WORKSPACE=true (the README's first spelling,
GEMINI_TRUST_WORKSPACE, does nothing).

No request leaves the machine: the model API is the stand-in, usage statistics, telemetry and update checks are off,
and any other HTTPS goes to a closed local port (HTTPS_PROXY).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from rowkit import MODEL
from pick_a_method.server.arguments import served

from .conftest import REPO, server_command
from .gemini_standin import StandIn

PREFIX = "mcp_pick-a-method_"
CALL = {"name": f"{PREFIX}route", "args": {"rows_path": "examples/mixed.jsonl", "model": MODEL,
                                           "fields": ["reward=reward"]}}
SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}


def gemini_turn(peers, gemini, tmp_path, trust: dict[str, str]) -> tuple[subprocess.CompletedProcess, list[dict]]:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = {**SETTINGS, "mcpServers": {"pick-a-method": {"command": server_command()[0], "args": []}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    with StandIn(CALL) as api:
        env = {**peers.env, "HOME": str(home), "GOOGLE_GEMINI_BASE_URL": api.url, "GEMINI_API_KEY": "stand-in",
               "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
               "NO_PROXY": "127.0.0.1,localhost", **trust}
        proc = subprocess.run([str(peers.node), str(gemini[0]), "-p", "Route examples/mixed.jsonl", "--yolo",
                               "--output-format", "json"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=180)
    return proc, api.requests


def declarations(requests: list[dict]) -> dict[str, dict]:
    return {d["name"]: d for r in requests for t in r.get("tools", []) for d in t.get("functionDeclarations", [])
            if d["name"].startswith(PREFIX)}


def types(schema: Any) -> list[Any]:
    """Every `type` in a schema, and a marker for each anyOf / oneOf."""
    if isinstance(schema, list):
        return [t for s in schema for t in types(s)]
    if not isinstance(schema, dict):
        return []
    found = [schema["type"]] if "type" in schema else []
    found += ["anyOf"] * ("anyOf" in schema) + ["oneOf"] * ("oneOf" in schema)
    return found + [t for k, v in schema.items() if k not in ("enum", "default") for t in types(v)]


def test_gemini_cli_sends_every_tool_in_one_type_a_node_and_round_trips_a_call(peers, gemini, tmp_path):
    proc, requests = gemini_turn(peers, gemini, tmp_path, {"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert proc.returncode == 0, f"gemini {gemini[1]}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    sent = declarations(requests)
    assert set(sent) == {PREFIX + m.tool for m in served()}, sorted(sent)
    for name, declaration in sent.items():
        assert "responseJsonSchema" not in declaration, name  # the output schema stays with the client
        nodes = types(declaration["parametersJsonSchema"])
        assert nodes and all(isinstance(t, str) for t in nodes), (name, nodes)  # one type a node, no unions
    answered = [p["functionResponse"] for r in requests for c in r.get("contents", []) for p in c.get("parts", [])
                if "functionResponse" in p]
    assert answered, "the stand-in's call was never answered"
    reply = json.dumps(answered[-1])
    assert '\\"route\\":\\"grpo\\"' in reply and "next_step" in reply, reply[:2000]  # the verdict came back
    stats = json.loads(proc.stdout)["stats"]["tools"]
    assert stats["totalCalls"] == 1 and stats["totalSuccess"] == 1, stats


def test_without_the_trust_variable_gemini_cli_connects_no_server(peers, gemini, tmp_path):
    """The README once said GEMINI_TRUST_WORKSPACE=true; Gemini CLI reads GEMINI_CLI_TRUST_WORKSPACE."""
    proc, requests = gemini_turn(peers, gemini, tmp_path, {"GEMINI_TRUST_WORKSPACE": "true"})
    assert not declarations(requests), "an untrusted folder's server was connected"
    readme = (REPO / "README.md").read_text()
    assert "GEMINI_CLI_TRUST_WORKSPACE=true" in readme and "GEMINI_TRUST_WORKSPACE" not in readme
