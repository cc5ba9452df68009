"""track as an MCP tool (its run read inside the allowed roots, the picture when asked) and as a command (the text
and the sketch, --plot)."""

import json

import anyio
from mcp import Client
from runs import FIXTURES

from pick_a_method.server.app import create_server
from pick_a_method.server.cli import main
from pick_a_method.server.options import ServerOptions


def call(args, roots):
    async def go():
        async with Client(create_server(ServerOptions(roots=roots, write_roots=roots))) as c:
            return await c.call_tool("track", args)
    return anyio.run(go)


def test_the_tool_answers_with_the_verdict_and_the_picture_when_asked():
    run = str(FIXTURES / "verl" / "rollouts")
    result = call({"run": run, "picture": True}, (FIXTURES,))
    assert not result.is_error
    assert result.structured_content["verdict"] == "band_emptied"
    assert any(c.type == "image" for c in result.content)
    assert json.loads(result.content[0].text)["run"]["trainer"] == "verl"


def test_the_tool_refuses_a_run_outside_the_allowed_folders(tmp_path):
    result = call({"run": str(FIXTURES / "verl" / "rollouts")}, (tmp_path,))
    assert result.is_error


def test_the_command_prints_the_windows_and_the_sketch_and_draws(tmp_path, capsys):
    out = tmp_path / "track.png"
    assert main(["track", str(FIXTURES / "verl" / "rollouts"), "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("band_emptied:") and "alarm band_emptied at step 21" in text
    assert "band per window" in text and "! band_emptied" in text and out.read_bytes()[:4] == b"\x89PNG"
