"""route's freeze over MCP and on the command line: written inside the server's write roots (refused outside them,
naming the folders), where the command's user says (--freeze, confined by --allow-write), and the `after` command the
advice prints parses and, its rows filled in, runs on the manifest it wrote."""

import json
import shlex
from pathlib import Path

from mcp import Client
from rowkit import MODEL, rows_from_passes

from pick_a_method.server import cli
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

CYCLE = [0, 1, 2, 3, 4, 2, 1, 3, 2, 2]


def rows_file(path: Path, shift=0, model=MODEL) -> Path:
    rows = rows_from_passes([min(CYCLE[i % len(CYCLE)] + shift, 4) for i in range(600)], model=model)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


async def test_over_mcp_the_manifest_is_written_inside_the_write_roots_only(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    rows = rows_file(root / "rows.jsonl")
    options = ServerOptions(roots=(root,), write_roots=(root,))
    async with Client(create_server(options)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["route"].annotations.read_only_hint is False  # it may write a file
        ok = await c.call_tool("route", {"rows_path": str(rows), "model": MODEL, "effect": 0.1,
                                         "freeze": str(root / "holdout.json")})
        refused = await c.call_tool("route", {"rows_path": str(rows), "model": MODEL, "effect": 0.1,
                                              "freeze": str(outside / "holdout.json")})
        again = await c.call_tool("route", {"rows_path": str(rows), "model": MODEL, "effect": 0.1,
                                            "freeze": str(root / "holdout.json")})
    assert not ok.is_error, ok.content[0].text
    assert ok.structured_content["before_gpu"][0].startswith("Froze ")
    assert f"frozen_path='{root / 'holdout.json'}'" in ok.structured_content["before_gpu"][-1]
    assert json.loads((root / "holdout.json").read_text())["effect"] == 0.1
    assert refused.is_error and "outside the folders this server may write to" in refused.content[0].text
    assert not (outside / "holdout.json").exists()
    assert again.is_error and "already exists: a frozen manifest is the registered held-out set" in \
        again.content[0].text


def test_on_the_command_line_the_printed_after_command_runs_on_the_manifest(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base, trained = rows_file(tmp_path / "base.jsonl"), rows_file(tmp_path / "r1.jsonl", 1, "acme/r1")
    assert cli.main(["--allow-write", str(tmp_path / "elsewhere"), "route", str(base), "--model", MODEL,
                     "--effect", "0.1", "--freeze", "holdout.json"]) == 2
    assert "outside the folders --allow-write names" in capsys.readouterr().err
    assert cli.main(["route", str(base), "--model", MODEL, "--effect", "0.1", "--freeze", "holdout.json"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("before the GPU: After training"))
    command = shlex.split(line.split("`")[1])
    assert command[:2] == ["pick-a-method", "after"] and command[-2:] == ["--frozen", "holdout.json"]
    filled = {"<base_rows>": str(base), "<trained_rows>": str(trained), "<random_selection_rows>": str(base),
              "<random_reward_rows>": str(base)}
    assert cli.main([filled.get(w, w) for w in command[1:]] + ["--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["frozen"]["path"] == "holdout.json" and verdict["verdict"] == "proven"
    assert verdict["n_tasks"] == json.loads((tmp_path / "holdout.json").read_text())["n_tasks"]
