"""The trl_config / verl_config MCP tools and CLI subcommands: thin glue over the writers."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
from mcp import Client

from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

MODEL = "Qwen/Qwen3-8B"


async def _call(c, name, args):
    result = await c.call_tool(name, args)
    tool = next(t for t in (await c.list_tools()).tools if t.name == name)
    return result, tool


async def test_trl_and_verl_tools_write_inside_the_roots(tmp_path):
    async with Client(create_server(ServerOptions(write_roots=(tmp_path,)))) as c:
        result, tool = await _call(c, "trl_config", {
            "method": "async", "model": MODEL, "out": str(tmp_path / "t.yaml"),
            "knobs": [{"key": "method", "value": "grpo"}, {"key": "correction", "value": "icepop"},
                      {"key": "ratio", "value": [0.8, 2.0]}],
            "overrides": [{"key": "logging_steps", "value": 5}]})
        assert not result.is_error, result.content[0].text
        jsonschema.validate(result.structured_content, tool.output_schema)
        out = result.structured_content
        assert out["verdict"] == "written" and out["config"]["vllm_importance_sampling_clip_min"] == 0.8
        assert (tmp_path / "t.yaml").read_text() == out["text"]
        assert tool.input_schema.get("additionalProperties") is False or "knobs" in tool.input_schema["properties"]

        result, tool = await _call(c, "verl_config", {"method": "grpo", "model": MODEL, "gpus": 4,
                                                      "knobs": [{"key": "group_size", "value": 4}]})
        assert not result.is_error, result.content[0].text
        jsonschema.validate(result.structured_content, tool.output_schema)
        assert "actor_rollout_ref.rollout.n=4" in result.structured_content["overrides"]

        refused, _ = await _call(c, "verl_config", {"method": "FlashReinforce", "model": MODEL})
        assert refused.is_error and "Fix" in refused.content[0].text
        outside, _ = await _call(c, "trl_config", {"method": "grpo", "model": MODEL, "out": "/tmp/elsewhere-x.yaml"})
        assert outside.is_error and "outside the folders" in outside.content[0].text


def test_cli_subcommands_print_the_config(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "pick_a_method.server.cli", *a], capture_output=True,  # noqa: E731
                                    text=True, timeout=120, cwd=tmp_path)
    done = run("trl-config", "dpo", "--model", MODEL, "--knob", "beta=0.2", "--out", "dpo.yaml", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["config"]["beta"] == 0.2 and (tmp_path / "dpo.yaml").is_file()
    done = run("verl-config", "grpo", "--model", MODEL, "--set", "trainer.save_freq=10", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["command"].startswith("python -m verl.trainer.main_ppo ") and "trainer.save_freq=10" in data["overrides"]
    bad = run("trl-config", "sao", "--model", MODEL)
    assert bad.returncode == 2 and "SAO" in bad.stderr
