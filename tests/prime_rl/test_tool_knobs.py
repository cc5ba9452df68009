"""The prime_rl_config MCP tool passes the run knobs through: each lands where the library puts it."""

from __future__ import annotations

import json

from mcp import Client

from pick_a_method.trainers.prime_rl import prime_rl_config
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

ARGS = {"taskset": "reverse-text", "method": "grpo", "model": "meta-llama/Llama-3.1-8B-Instruct",
        "wandb": {"project": "p", "entity": "team"}, "checkpoint": {"interval": 10, "keep_last": 2, "resume": True},
        "run_name": "r1", "output_dir": "/scratch/o", "nodes": {"inference": 1, "trainer": 2}, "gpus": 8,
        "slurm": {"partition": "gpu"}, "max_model_len": 8192, "gpu_memory_utilization": 0.8, "eval_split": "test",
        "scheduler": "cosine", "warmup_steps": 5, "renderer": "default"}


async def test_the_tool_takes_every_run_knob():
    async with Client(create_server(ServerOptions())) as c:
        result = await c.call_tool("prime_rl_config", ARGS)
        assert not result.is_error, result.content[0].text
        schema = next(t for t in (await c.list_tools()).tools if t.name == "prime_rl_config").input_schema
    out = result.structured_content
    assert set(ARGS) <= set(schema["properties"])
    library = prime_rl_config(**json.loads(json.dumps(ARGS)))
    assert out["config"] == library.config and out["honored"] == library.honored and out["needs"] == library.needs
    for knob in ("wandb.entity", "checkpoint.resume", "run_name", "output_dir", "nodes", "slurm.partition",
                 "max_model_len", "gpu_memory_utilization", "eval_split", "scheduler", "warmup_steps", "renderer"):
        assert knob in out["honored"], knob
