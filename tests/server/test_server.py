"""The MCP glue, in-process: listing, schemas, every tool's result against its output schema, tool errors."""

import json
import subprocess
import sys

import jsonschema
import pytest
from mcp import Client

from rowkit import EXAMPLES, MODEL, rows_from_passes
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

TOOLS = {"truncated_passes", "band", "teacher_clears", "route", "prime_rl_config", "pass_at", "holdout_size",
         "preview_update", "trl_config", "verl_config", "after", "track"}
MIXED = rows_from_passes([0, 1, 2, 3, 4] * 8)


def client(**options):
    return Client(create_server(ServerOptions(**options)))  # opened inside each test (pytest-asyncio#1191)


async def call_ok(c, name, args):
    result = await c.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    tool = next(t for t in (await c.list_tools()).tools if t.name == name)
    jsonschema.validate(result.structured_content, tool.output_schema)
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def call_error(c, name, args):
    result = await c.call_tool(name, args)
    assert result.is_error, result.structured_content
    return result.content[0].text


async def test_every_tool_is_listed_with_schemas_and_annotations():
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, t in tools.items():
        assert t.output_schema and t.output_schema["type"] == "object", name
        assert t.description and t.title, name
        assert t.annotations.open_world_hint is False, name
        # route writes the held-out manifest where asked (freeze), the config writers their configs
        assert t.annotations.read_only_hint is (name not in ("prime_rl_config", "trl_config", "verl_config",
                                                             "route")), name
        # each argument's description (or its being said by name, type and default): test_agent_fit.py


async def test_route_from_an_example_file_validates():
    async with client() as c:
        out = await call_ok(c, "route", {"rows_path": str(EXAMPLES / "mixed.jsonl"), "model": MODEL,
                                         "taskset": "refunds-v1"})
    assert out["route"] == "grpo"
    # group size and batch from the rollout advice: 32 groups with signal a step at k = 8
    advice = out["rollouts"]
    assert advice["group_size"] == 8 and advice["batch"] == advice["prompts_per_step"] * 8
    assert out["next_step"] == {"tool": "prime_rl_config", "arguments": {"taskset": "refunds-v1", "method": "grpo",
                                                                         "model": MODEL, "knobs": ["group_size=8"],
                                                                         "batch": advice["batch"],
                                                                         "out": "grpo-prime-rl.toml"}, "needs": [],
                                "command": None, "why": out["next_step"]["why"]}


@pytest.mark.parametrize("name, args", [
    ("truncated_passes", {"rows_path": str(EXAMPLES / "cut_off.jsonl")}),
    ("band", {"rows": MIXED}),
    ("pass_at", {"rows": MIXED, "per_task_limit": 3}),
    ("teacher_clears", {"teacher_rows_path": str(EXAMPLES / "teacher_strong.jsonl"),
                        "student_rows_path": str(EXAMPLES / "student.jsonl")}),
    ("holdout_size", {"effect": 0.05, "k": 8}),
    ("holdout_size", {"before_rows": MIXED}),
    ("route", {"rows_path": str(EXAMPLES / "one_per_prompt.jsonl"), "model": MODEL}),
    ("route", {"rows_path": str(EXAMPLES / "student.jsonl"), "teacher_rows_path": str(EXAMPLES / "teacher_strong.jsonl"),
               "model": MODEL}),
])
async def test_each_tool_answers_within_its_schema(name, args):
    async with client() as c:
        out = await call_ok(c, name, args)
    assert out["verdict"] and out["summary"] and "next_step" in out and isinstance(out["warnings"], list)


@pytest.mark.parametrize("name, args, words", [
    ("band", {"rows": MIXED + [{"task_id": "x", "reward": "nope"}]}, ["row 160", "reward"]),
    ("band", {"rows": [{"reward": 1}]}, ["row 0", "task_id"]),
    ("route", {"rows_path": "no/such/file.jsonl"}, ["no such file"]),
    ("route", {}, ["no rows", "rows_path"]),
    ("route", {"rows": MIXED, "rows_path": "x.jsonl"}, ["not both"]),
    ("band", {"rows": "not a list"}, ["rows"]),
    ("pass_at", {"rows": MIXED, "k": 0}, ["k"]),
    ("teacher_clears", {"student_rows": MIXED}, ["teacher_rows"]),
    ("holdout_size", {"effect": 2}, ["effect"]),
    ("holdout_size", {"after_rows": MIXED}, ["before"]),
])
async def test_bad_input_is_a_tool_error_that_says_what_to_fix(name, args, words):
    async with client() as c:
        text = await call_error(c, name, args)
        assert all(w in text for w in words), text
        await call_ok(c, "band", {"rows": MIXED})  # and the server still answers


async def test_row_cap_is_a_tool_error_naming_the_cap():
    async with client(max_rows=10) as c:
        text = await call_error(c, "band", {"rows": MIXED})
        assert "cap of 10" in text and "--max-rows" in text
        text = await call_error(c, "band", {"rows_path": str(EXAMPLES / "mixed.jsonl")})
        assert "more than 10 rows" in text


async def test_a_slow_call_ends_in_an_error_not_a_hang(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps(r) + "\n" for r in rows_from_passes([1, 2, 3] * 30_000)))
    async with client(call_seconds=0.01) as c:
        text = await call_error(c, "route", {"rows_path": str(big), "model": MODEL})
        assert "budget" in text and "--call-seconds" in text


async def test_progress_arrives_for_a_large_file(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps(r) + "\n" for r in rows_from_passes([1, 2, 3] * 30_000)))
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with client() as c:
        result = await c.call_tool("band", {"rows_path": str(big)}, progress_callback=on_progress)
    assert not result.is_error
    assert len(seen) >= 2 and seen[-1][1] == big.stat().st_size
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))


async def test_the_skill_is_a_resource_and_a_prompt():
    async with client() as c:
        resources = (await c.list_resources()).resources
        assert [r.uri for r in resources] == ["skill://pick-a-method/SKILL.md"]
        assert resources[0].mime_type == "text/markdown" and resources[0].name == "pick-a-method"
        text = (await c.read_resource("skill://pick-a-method/SKILL.md")).contents[0].text
        assert text.startswith("---\nname: pick-a-method\n")
        prompt = await c.get_prompt("pick-a-method", {"rows_path": "rows.jsonl"})
        assert "rows.jsonl" in prompt.messages[0].content.text


def test_importing_the_server_does_not_import_torch():
    code = ("import sys; from pick_a_method.server import app; from pick_a_method import routing, methods; "
            "import pick_a_method.trainers.prime_rl; app.create_server(); "
            "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


async def test_route_next_step_goes_straight_into_prime_rl_config(tmp_path):
    async with client() as c:
        for example, extra in (("mixed.jsonl", {}), ("floor.jsonl", {}), ("async_sampler.jsonl", {}),
                               ("student.jsonl", {"teacher_rows_path": str(EXAMPLES / "teacher_strong.jsonl"),
                                                  "teacher_base_url": "http://localhost:8001/v1"})):
            routed = await call_ok(c, "route", {"rows_path": str(EXAMPLES / example), "model": MODEL,
                                                "taskset": "refunds-v1", **extra})
            step = routed["next_step"]
            assert step["tool"] == "prime_rl_config" and step["needs"] == [], example
            config = await call_ok(c, "prime_rl_config", {**step["arguments"], "out": str(tmp_path / example)[:-6] + ".toml"})
            assert config["text"] and config["command"].startswith("uv run rl @"), example
            assert step["arguments"]["method"] in config["method"]


async def test_prime_rl_config_refuses_with_the_fix(tmp_path):
    async with client(write_roots=(tmp_path,)) as c:
        text = await call_error(c, "prime_rl_config", {"taskset": "refunds-v1", "method": "FlashReinforce",
                                                       "model": MODEL})
        assert "FlashReinforce" in text and "rae" in text and "update" in text
        out = tmp_path / "rl.toml"
        await call_ok(c, "prime_rl_config", {"taskset": "refunds-v1", "method": "grpo", "model": MODEL,
                                             "out": str(out)})
        first = out.read_text()
        text = await call_error(c, "prime_rl_config", {"taskset": "refunds-v1", "method": "rae", "model": MODEL,
                                                       "out": str(out)})
        assert "overwrite" in text and out.read_text() == first
        text = await call_error(c, "prime_rl_config", {"taskset": "refunds-v1", "method": "grpo", "model": MODEL,
                                                       "out": str(tmp_path.parent / "elsewhere.toml")})
        assert str(tmp_path) in text


async def test_preview_update_on_inline_trajectories():
    batch = [{"reward": 1.0, "logprobs": [-0.5, -1.2, -0.3]}, {"reward": 0.0, "logprobs": [-0.7, -0.4]},
             {"reward": 1.0, "logprobs": [-0.2, -0.9]}]
    async with client() as c:
        out = await call_ok(c, "preview_update", {"method": "FlashReinforce", "trajectories": batch})
        assert out["verdict"] and out["summary"]
        logged = await call_ok(c, "preview_update", {"method": "FlashReinforce",
                                                     "path": str(EXAMPLES / "traces.jsonl")})
        assert logged["n_trajectories"] == 64 and 0 < logged["n_admitted"] < 64  # the drifted ones are rejected
        text = await call_error(c, "preview_update", {"method": "FlashReinforce",
                                                      "trajectories": [{"reward": 1.0, "logprobs": [0.5]}]})
        assert "logprob" in text
        text = await call_error(c, "preview_update", {"method": "NoSuchMethod", "trajectories": batch})
        assert "NoSuchMethod" in text or "known" in text
