"""Reads and writes only where the user said: a real client declaring roots, a server started from /
and from the home folder, --root, symlinks out of a root, `..` paths, and a private key: each refused with a clear
error naming the argument and how to allow a folder, nothing read back and nothing written."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from mcp import Client, MCPDeprecationWarning, types
from rowkit import MODEL, rows_from_passes

from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
SECRET = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
CONFIG = {"taskset": "reverse-text", "method": "grpo", "model": MODEL}


def rows_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_from_passes([1, 2, 3, 0, 4])))
    return path


@pytest.fixture
def tree(tmp_path):
    """root/ (allowed) and outside/ (not), with a symlink and a folder link leading out."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    rows_file(root / "rows.jsonl")
    rows_file(outside / "rows.jsonl")
    (outside / "id_rsa").write_text(KEY)
    (outside / "id_rsa.csv").write_text(KEY)
    (root / "link.jsonl").symlink_to(outside / "rows.jsonl")
    (root / "out_dir").symlink_to(outside, target_is_directory=True)
    return root, outside


def roots_callback(*folders: Path):
    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f.as_uri(), name=f.name) for f in folders])
    return list_roots


async def call(options, tool, args, *, roots=None):
    kw = {"list_roots_callback": roots_callback(*roots), "mode": "legacy"} if roots is not None else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # the client's own roots capability is deprecated
        async with Client(create_server(options), **kw) as c:
            out = await c.call_tool(tool, args)
    return out.is_error, out.content[0].text if out.content else ""


async def test_a_client_declaring_roots_confines_every_read_to_them(tree):
    root, outside = tree
    everything = ServerOptions(roots=(Path("/"),), write_roots=(Path("/"),))  # the client's roots win even so
    ok, text = await call(everything, "band", {"rows_path": str(root / "rows.jsonl")}, roots=[root])
    assert not ok, text
    for bad in [str(outside / "rows.jsonl"), str(root / ".." / "outside" / "rows.jsonl"), str(root / "link.jsonl"),
                str(root / "out_dir" / "rows.jsonl"), str(outside), str(outside / "*.jsonl"), [str(root / "rows.jsonl"),
                                                                                              str(outside / "rows.jsonl")]]:
        is_error, text = await call(everything, "band", {"rows_path": bad}, roots=[root])
        assert is_error and "outside the folders this server may read" in text and "--root" in text, (bad, text)
        assert "rows_path" in text


async def test_a_folder_holding_a_link_out_of_the_root_is_refused(tree):
    root, outside = tree
    folder = root / "run"
    rows_file(folder / "results.jsonl")
    (folder / "more.jsonl").symlink_to(outside / "rows.jsonl")
    is_error, text = await call(ServerOptions(roots=(root,)), "band", {"rows_path": str(folder)})
    assert is_error and "outside the folders" in text and "more.jsonl" in text


async def test_a_private_key_is_never_quoted_back(tree):
    root, outside = tree
    for name in ("id_rsa", "id_rsa.csv"):
        is_error, text = await call(ServerOptions(roots=(outside.parent,)), "band", {"rows_path": str(outside / name)})
        assert is_error and SECRET not in text and "PRIVATE KEY" not in text, text
        is_error, text = await call(ServerOptions(roots=(root,)), "band", {"rows_path": str(outside / name)})
        assert is_error and "outside the folders" in text and SECRET not in text


async def test_writes_stay_in_the_clients_roots_and_name_the_root_they_would_need(tree):
    root, outside = tree
    everything = ServerOptions(roots=(Path("/"),), write_roots=(Path("/"),))
    for out in [str(outside / "rl.toml"), str(root / "out_dir" / "rl.toml"), str(root / ".." / "outside" / "rl.toml")]:
        is_error, text = await call(everything, "prime_rl_config", {**CONFIG, "out": out}, roots=[root])
        assert is_error and "outside the folders this server may write to" in text, (out, text)
    assert not (outside / "rl.toml").exists()
    is_error, text = await call(everything, "prime_rl_config", {**CONFIG, "out": str(root / "rl.toml")}, roots=[root])
    assert not is_error, text
    assert (root / "rl.toml").is_file()


@pytest.mark.parametrize("start", ["/", "home"])
async def test_a_server_started_from_slash_or_home_refuses_every_path_and_says_how_to_allow(tree, start, monkeypatch):
    root, _ = tree
    if start == "home":
        monkeypatch.setenv("HOME", str(root))
    monkeypatch.chdir("/" if start == "/" else root)
    monkeypatch.delenv("PICK_A_METHOD_ROOTS")
    options = ServerOptions()
    assert options.roots == () and options.write_roots == ()
    is_error, text = await call(options, "band", {"rows_path": str(root / "rows.jsonl")})
    assert is_error and "may not read any folder" in text and "--root DIR" in text, text
    is_error, text = await call(options, "prime_rl_config", {**CONFIG, "out": str(root / "rl.toml")})
    assert is_error and "outside the folders this server may write to" in text
    assert not (root / "rl.toml").exists()
    # the same server with --root reads there, and the client's roots would do as well
    ok, text = await call(ServerOptions(roots=(root,)), "band", {"rows_path": str(root / "rows.jsonl")})
    assert not ok, text
    ok, text = await call(options, "band", {"rows_path": str(root / "rows.jsonl")}, roots=[root])
    assert not ok, text


def test_the_stdio_server_started_from_slash_takes_root_on_its_command_line(tree):
    root, outside = tree
    request = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "band", "arguments": {
            "rows_path": str(root / "rows.jsonl")}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "band", "arguments": {
            "rows_path": str(outside / "rows.jsonl")}}},
    ]
    env = {k: v for k, v in os.environ.items() if k != "PICK_A_METHOD_ROOTS"}
    proc = subprocess.Popen([sys.executable, "-m", "pick_a_method.server.cli", "--root", str(root)], cwd="/", env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in request))
        proc.stdin.flush()
        replies = {}
        while len(replies) < 3:  # stdin stays open until the calls are answered (closing it ends the session)
            line = proc.stdout.readline()
            assert line, "the server closed its output early"
            reply = json.loads(line)
            if "id" in reply:
                replies[reply["id"]] = reply
    finally:
        proc.kill()
        proc.wait(10)
    assert not replies[2]["result"]["isError"], replies[2]
    assert replies[3]["result"]["isError"] and "outside the folders" in replies[3]["result"]["content"][0]["text"]


def test_a_sidecar_linked_out_of_the_roots_is_not_read(tree):
    """vf-eval's metadata.json is read beside its rows, but through the same validator."""
    from pick_a_method.routing import read_rows

    root, outside = tree
    run = root / "vf_run"
    rows_file(run / "results.jsonl")
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    (run / "results.jsonl").write_text("".join(json.dumps({"example_id": r["task_id"], "prompt": [], "completion": [],
                                                            "reward": r["reward"], "is_truncated": False}) + "\n"
                                               for r in lines))
    (outside / "metadata.json").write_text(json.dumps({"model": "secret/model", "avg_reward": 0.5,
                                                       "rollouts_per_example": 4}))
    (run / "metadata.json").symlink_to(outside / "metadata.json")
    assert read_rows(run).model_names == ["secret/model"]  # the library, unconfined, follows it
    with pytest.raises(ValueError, match="outside the folders"):  # the folder holds a link out: refused whole
        read_rows(run, roots=[root])
    confined = read_rows(run / "results.jsonl", roots=[root])  # the rows file alone: its sidecar is not read
    assert confined.model_names == [] and any("no metadata.json" in n for n in confined.notes)


@pytest.mark.parametrize("started_in", ["root", "outside"])
async def test_the_config_file_a_next_step_names_lands_where_the_server_may_write(tree, monkeypatch, started_in):
    """route's next step names the config file by its bare name. Over MCP, where the server's
    working folder is outside the roots, the name becomes a path in the first write root, so making exactly the call
    next_step names writes the file; inside a root it stays bare (it lands in the working folder)."""
    from pick_a_method.server.rows_tools import RouteArguments

    root, outside = tree
    routed = RouteArguments.call

    def naming_out(self, *args, **kwargs):  # the core names the file itself once it carries `out`
        verdict = routed(self, *args, **kwargs)
        verdict.next_step.arguments.setdefault("out", "grpo-prime-rl.toml")
        return verdict

    monkeypatch.setattr(RouteArguments, "call", naming_out)
    monkeypatch.chdir(root if started_in == "root" else outside)
    async with Client(create_server(ServerOptions(roots=(root,), write_roots=(root,)))) as c:
        step = (await c.call_tool("route", {"rows_path": str(root / "rows.jsonl"), "model": MODEL,
                                            "taskset": "reverse-text"})).structured_content["next_step"]
        out = step["arguments"]["out"]
        assert out == ("grpo-prime-rl.toml" if started_in == "root" else str(root / "grpo-prime-rl.toml"))
        written = await c.call_tool(step["tool"], step["arguments"])
        assert not written.is_error, written.content[0].text
    assert (root / "grpo-prime-rl.toml").is_file() and not (outside / "grpo-prime-rl.toml").exists()
