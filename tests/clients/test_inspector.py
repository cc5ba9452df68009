"""The installed `pick-a-method`, driven over stdio by the official MCP Inspector in CLI mode.

The Inspector 2.x is a second, independent client (the TypeScript SDK): it negotiates the protocol, and it
checks `structuredContent` against the tool's `outputSchema`, so a successful call here is a schema check too.
Exit codes (verified with 2.12.0): 0 ok, 1 usage or protocol error, 5 the tool answered `isError` (or is unknown).
"""

from __future__ import annotations

import json
import subprocess


from rowkit import MODEL
from pick_a_method.server.app import SKILL_URI, skill_text

from .conftest import REPO, server_command

TOOLS = {"truncated_passes", "pass_at", "band", "teacher_clears", "holdout_size", "route", "prime_rl_config",
         "trl_config", "verl_config",
         "preview_update", "after", "track"}
EXIT_OK, EXIT_TOOL_ERROR = 0, 5


def inspect(peers, *args: str, server: list[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """One Inspector CLI call against a freshly spawned server; cwd is the repo, as a user's project would be."""
    cmd = peers.inspector("--cli", *(server or server_command()), *args, "--format", "json")
    return subprocess.run(cmd, cwd=REPO, env=peers.env, capture_output=True, text=True, timeout=timeout)


def result_of(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == EXIT_OK, f"rc {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)["result"]


def test_initialize_names_the_server_and_its_guide(peers):
    result = result_of(inspect(peers, "--method", "initialize"))
    assert result["serverInfo"]["name"] == "pick-a-method"
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])
    assert "route" in result["instructions"] and SKILL_URI in result["instructions"]


def test_tools_list_shows_every_tool_with_its_output_schema(peers):
    tools = {t["name"]: t for t in result_of(inspect(peers, "--method", "tools/list"))["tools"]}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool["description"] and tool["inputSchema"]["type"] == "object", name
        assert tool["annotations"]["openWorldHint"] is False, name
        schema = tool.get("outputSchema")
        assert schema and schema["type"] == "object", f"{name} has no outputSchema"
        assert {"verdict", "summary", "next_step", "warnings"} <= set(schema["properties"]), name


def test_route_on_an_example_file_returns_a_structured_verdict(peers):
    args = {"rows_path": "examples/mixed.jsonl", "model": MODEL, "taskset": "refunds-v1"}
    result = result_of(inspect(peers, "--method", "tools/call", "--tool-name", "route",
                               "--tool-args-json", json.dumps(args)))
    assert result.get("isError") is False
    verdict = result["structuredContent"]
    assert verdict["route"] == "grpo" and verdict["verdict"] == "grpo"
    assert verdict["summary"] and [t["question"] for t in verdict["trace"]][-1] == 6
    assert verdict["next_step"]["tool"] == "prime_rl_config"
    # the rollout advice (group size and rollouts per step) rides along as "key=value" knobs and batch
    assert verdict["next_step"]["arguments"] == {"taskset": "refunds-v1", "method": "grpo", "model": MODEL,
                                                 "knobs": ["group_size=8"], "batch": 352, "out": "grpo-prime-rl.toml"}
    assert json.loads(result["content"][0]["text"]) == verdict  # the text block carries the same object


def test_picture_true_comes_back_as_an_image_beside_the_checked_verdict(peers):
    """The Inspector checks structuredContent against the outputSchema with the image block beside it."""
    import base64

    args = {"rows_path": "examples/mixed.jsonl", "picture": True}
    result = result_of(inspect(peers, "--method", "tools/call", "--tool-name", "band",
                               "--tool-args-json", json.dumps(args)))
    assert result.get("isError") is False and result["structuredContent"]["verdict"] == "mixed"
    assert [b["type"] for b in result["content"]] == ["text", "image"]
    image = result["content"][1]
    assert image["mimeType"] == "image/png" and base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_tool_argument_in_key_value_form(peers):
    """`--tool-arg k=v` JSON-parses v: the form people type by hand."""
    result = result_of(inspect(peers, "--method", "tools/call", "--tool-name", "band",
                               "--tool-arg", "rows_path=examples/floor.jsonl"))
    assert result["structuredContent"]["verdict"] == "floor"


def test_a_bad_row_exits_with_the_tool_error_code_and_names_the_row(peers):
    rows = [{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": "x"}]
    proc = inspect(peers, "--method", "tools/call", "--tool-name", "band", "--tool-args-json", json.dumps({"rows": rows}))
    assert proc.returncode == EXIT_TOOL_ERROR, f"rc {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(proc.stdout)["result"]
    assert result["isError"] is True and "structuredContent" not in result  # no half-verdict on an error
    text = result["content"][0]["text"]
    assert "row 1" in text and "reward" in text and "'x'" in text, text
    assert '"tool_is_error"' in proc.stderr


def test_a_missing_file_is_a_tool_error_not_a_crash(peers):
    proc = inspect(peers, "--method", "tools/call", "--tool-name", "route",
                   "--tool-args-json", json.dumps({"rows_path": "examples/no-such-file.jsonl"}))
    assert proc.returncode == EXIT_TOOL_ERROR, f"rc {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    text = json.loads(proc.stdout)["result"]["content"][0]["text"]
    assert "no-such-file.jsonl" in text, text


def test_the_skill_resource_and_prompt_carry_skill_md(peers):
    listed = result_of(inspect(peers, "--method", "resources/list"))["resources"]
    assert [(r["uri"], r["mimeType"]) for r in listed] == [(SKILL_URI, "text/markdown")]
    read = result_of(inspect(peers, "--method", "resources/read", "--uri", SKILL_URI))
    assert read["contents"][0]["text"] == skill_text()
    prompt = result_of(inspect(peers, "--method", "prompts/get", "--prompt-name", "pick-a-method",
                               "--prompt-args", "rows_path=examples/mixed.jsonl"))
    text = prompt["messages"][0]["content"]["text"]
    assert text.startswith(skill_text()) and "examples/mixed.jsonl" in text


def test_a_users_mcp_json_starts_the_server(peers, tmp_path):
    """The `.mcp.json` form the README gives Claude Code users (absolute command), read by the Inspector."""
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"pick-a-method": {
        "type": "stdio", "command": server_command()[0], "args": [], "env": {}}}}))
    cmd = peers.inspector("--cli", "--config", str(config), "--server", "pick-a-method", "--method", "tools/list",
                          "--format", "json")
    proc = subprocess.run(cmd, cwd=tmp_path, env=peers.env, capture_output=True, text=True, timeout=60)
    assert {t["name"] for t in result_of(proc)["tools"]} == TOOLS


def test_strict_reports_no_error_and_only_the_two_warnings_the_readme_explains(peers):
    """Inspector --strict: each warning is either an input argument's ["X", "null"] (OpenAI's strict mode needs the
    null to leave an argument out; Gemini CLI rewrites it to a nullable X itself, tests/clients/test_gemini_cli.py)
    or an output key left open because it may be null (no type arrays in outlines; models never see them). Anything
    else (a type array of two real types, an error) fails here."""
    import re

    proc = inspect(peers, "--method", "tools/list", "--strict")
    assert proc.returncode == EXIT_OK, f"rc {proc.returncode}\n{proc.stderr[-3000:]}"
    warnings = re.findall(r"Path: (\S+)\n\s+Issue: (.+)", proc.stderr)
    assert warnings and "0 errors" in proc.stderr, proc.stderr[-2000:]
    for path, issue in warnings:
        nullable = path.startswith("inputSchema.") and re.match(r'`type` is an array \(\["\w+","null"\]\)', issue)
        open_key = re.fullmatch(r"outputSchema\.properties\.\w+", path) and "no validation keyword" in issue
        assert nullable or open_key, (path, issue)
