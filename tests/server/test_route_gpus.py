"""route's GPU split arguments over MCP and the CLI: gpus and throughput in, prime-rl's inference /
trainer split out, carried into prime_rl_config's next step as its own `gpus` argument."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
from mcp import Client

from rowkit import MODEL, rows_from_passes
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

THROUGHPUT = {"inference_tokens_per_s_per_gpu": 2000.0, "trainer_tokens_per_s_per_gpu": 8000.0}


def rows_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [dict(r, completion_tokens=300) for r in rows_from_passes([0, 1, 2, 3, 4] * 20)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def split_by_hand(cost, gpus=8):
    infer_s = cost["tokens_per_step"] / THROUGHPUT["inference_tokens_per_s_per_gpu"]
    train_s = cost["trained_tokens_per_step"] / THROUGHPUT["trainer_tokens_per_s_per_gpu"]
    steps = {i: max(infer_s / i, train_s / (gpus - i)) for i in range(1, gpus)}
    best = min(steps, key=steps.get)
    return {"inference": best, "trainer": gpus - best}


async def test_route_splits_the_gpus_and_prime_rl_config_takes_the_split(tmp_path):
    path = rows_file(tmp_path)
    async with Client(create_server(ServerOptions(write_roots=(str(tmp_path),)))) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        result = await c.call_tool("route", {"rows_path": str(path), "model": MODEL, "taskset": "reverse-text",
                                             "gpus": 8, "throughput": THROUGHPUT})
        assert not result.is_error, result.content[0].text
        out = result.structured_content
        jsonschema.validate(out, tools["route"].output_schema)
        split = split_by_hand(out["cost"])
        assert {"inference": out["cost"]["inference_gpus"], "trainer": out["cost"]["trainer_gpus"]} == split
        args = out["next_step"]["arguments"]  # a split is two arguments (one type each: portable)
        assert "gpus" not in args and {"inference": args["inference_gpus"], "trainer": args["trainer_gpus"]} == split
        written = await c.call_tool("prime_rl_config", {**out["next_step"]["arguments"], "out": str(tmp_path / "rl.toml")})
        assert not written.is_error, written.content[0].text
        text = (tmp_path / "rl.toml").read_text()
        assert f"num_infer_gpus = {split['inference']}" in text and f"num_train_gpus = {split['trainer']}" in text
        bare = (await c.call_tool("route", {"rows_path": str(path), "model": MODEL})).structured_content
        assert "gpus" not in bare["next_step"]["arguments"]
        assert any("throughput=" in m for m in bare["cost"]["missing"])
        bad = await c.call_tool("route", {"rows_path": str(path), "model": MODEL, "gpus": 8,
                                          "throughput": {"inference_tokens_per_s_per_gpu": 2000.0}})
        assert bad.is_error and "trainer_tokens_per_s_per_gpu" in bad.content[0].text  # both numbers are required


def test_cli_route_takes_gpus_and_throughput(tmp_path):
    path = rows_file(tmp_path)
    run = lambda *extra: subprocess.run([sys.executable, "-m", "pick_a_method.server.cli", "route", str(path),  # noqa: E731
                                         "--model", MODEL, "--json", *extra], capture_output=True, text=True, timeout=120)
    done = run("--gpus", "8", "--throughput", "2000,8000")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["next_step"]["arguments"]["gpus"] == split_by_hand(out["cost"])
    refused = run("--gpus", "8", "--throughput", "fast")
    assert refused.returncode != 0 and "throughput" in refused.stderr


async def test_the_mcp_route_on_mixed_carries_batch_k_and_gpus_into_a_config_that_has_them(tmp_path):
    # route once advised a batch its prime_rl_config call did not write, and dropped gpus=8 without throughput
    rows = str(Path(__file__).resolve().parents[2] / "examples" / "mixed.jsonl")
    async with Client(create_server(ServerOptions(write_roots=(str(tmp_path),)))) as c:
        out = (await c.call_tool("route", {"rows_path": rows, "model": MODEL, "gpus": 8,
                                           "taskset": "someone/their-taskset@0.1.2"})).structured_content
        step = out["next_step"]
        assert step["tool"] == "prime_rl_config" and out["cost"]["inference_gpus"] is None
        assert step["arguments"]["batch"] == out["cost"]["rollouts_per_step"]
        assert step["arguments"]["knobs"] == [f"group_size={out['cost']['group_size']}"]  # the wire's key=value form
        assert step["arguments"]["gpus"] == 8 and "splits them evenly" in step["why"]
        written = await c.call_tool("prime_rl_config", {**step["arguments"], "out": str(tmp_path / "rl.toml")})
        assert not written.is_error, written.content[0].text
    config = tomllib.loads((tmp_path / "rl.toml").read_text())
    assert config["orchestrator"]["batch_size"] == out["cost"]["rollouts_per_step"]
    assert config["orchestrator"]["group_size"] == out["cost"]["group_size"]
    assert config["deployment"] == {"num_infer_gpus": 4, "num_train_gpus": 4}
    assert config["orchestrator"]["train"]["source"][0]["name"] == "their-taskset"
