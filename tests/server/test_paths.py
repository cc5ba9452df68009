"""Every path argument reads ~ and ~user the same way (common/paths.py), over the CLI and over MCP.

A home that cannot be found (`~nosuchuser/rows.jsonl`: once a RuntimeError traceback from the CLI and a bare
"Error executing tool band" over MCP, found by tests/robustness/test_fuzz_tools.py) is a clear error that
names the argument; `out` under a missing ~user no longer suggests `mkdir -p '~nosuchuser'`.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from rowkit import EXAMPLES, MODEL, rows_from_passes
from pick_a_method.routing import InputError
from pick_a_method.common.paths import expand_user_path
from pick_a_method.server import cli
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

MIXED = rows_from_passes([0, 1, 2, 3, 4] * 8)
NOBODY = "nosuchuser"
PRIME = {"taskset": "refunds-v1", "method": "grpo", "model": MODEL}


@pytest.fixture(autouse=True)
def nobody_is_absent():
    with pytest.raises(KeyError):  # the tests below rely on this account not existing here
        pwd.getpwnam(NOBODY)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """HOME is a fresh folder holding rows.jsonl (band: mixed) and traces.jsonl (64 logged trajectories)."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MIXED))
    (folder / "traces.jsonl").write_bytes((EXAMPLES / "traces.jsonl").read_bytes())
    monkeypatch.setenv("HOME", str(folder))
    return folder


# ---------------------------------------------------------------------------------------------------------
# The function
# ---------------------------------------------------------------------------------------------------------


def test_tilde_and_tilde_user_expand(home):
    me = pwd.getpwuid(os.getuid())
    assert expand_user_path("~/rows.jsonl", "rows_path") == home / "rows.jsonl"
    assert expand_user_path("~", "rows_path") == home
    assert expand_user_path(f"~{me.pw_name}/rows.jsonl", "rows_path") == Path(me.pw_dir) / "rows.jsonl"
    assert expand_user_path(Path("~/x.toml"), "out") == home / "x.toml"
    assert expand_user_path(b"~/rows.jsonl", "rows_path") == home / "rows.jsonl"
    for plain in ("rows.jsonl", "./~nosuchuser/rows.jsonl", "/abs/~x", "a/~/b"):
        assert expand_user_path(plain, "rows_path") == Path(plain)


def test_an_unknown_user_is_an_input_error_naming_the_argument():
    with pytest.raises(InputError) as e:
        expand_user_path(f"~{NOBODY}/rows.jsonl", "teacher_rows_path")
    assert e.value.field == "teacher_rows_path"
    assert str(e.value).startswith(f"teacher_rows_path '~{NOBODY}/rows.jsonl': there is no user '{NOBODY}'")
    assert f"./~{NOBODY}/rows.jsonl" in str(e.value)  # how to name a file whose name starts with ~


def test_an_unknown_or_empty_home_is_an_input_error(monkeypatch):
    monkeypatch.setenv("HOME", "")  # os.path.expanduser would read "~/rows.jsonl" as "/rows.jsonl"
    with pytest.raises(InputError, match=r"^rows_path '~/rows.jsonl': HOME is set but empty"):
        expand_user_path("~/rows.jsonl", "rows_path")
    monkeypatch.delenv("HOME")
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))  # no passwd entry
    with pytest.raises(InputError, match=r"^out '~/rl.toml': the home folder is unknown"):
        expand_user_path("~/rl.toml", "out")


def test_a_path_that_is_not_text_is_an_input_error():
    for value in (42, None, 1.5, ["rows.jsonl"], {"path": "rows.jsonl"}):
        with pytest.raises(InputError, match=r"^path must be a file path"):
            expand_user_path(value, "path")


# ---------------------------------------------------------------------------------------------------------
# Over MCP: each tool argument that takes a path
# ---------------------------------------------------------------------------------------------------------

# (tool, the other arguments, the path argument, the file under HOME it reads or writes)
MCP_CASES = [
    ("band", {}, "rows_path", "rows.jsonl"),
    ("truncated_passes", {}, "rows_path", "rows.jsonl"),
    ("pass_at", {}, "rows_path", "rows.jsonl"),
    ("route", {"model": MODEL}, "rows_path", "rows.jsonl"),
    ("route", {"rows": MIXED, "model": MODEL}, "teacher_rows_path", "rows.jsonl"),
    ("teacher_clears", {"student_rows": MIXED}, "teacher_rows_path", "rows.jsonl"),
    ("teacher_clears", {"teacher_rows": MIXED}, "student_rows_path", "rows.jsonl"),
    ("holdout_size", {}, "before_rows_path", "rows.jsonl"),
    ("holdout_size", {"before_rows": MIXED}, "after_rows_path", "rows.jsonl"),
    ("preview_update", {"method": "FlashReinforce"}, "path", "traces.jsonl"),
    ("prime_rl_config", PRIME, "out", "rl.toml"),
    ("trl_config", {"method": "grpo", "model": MODEL}, "out", "trl.yaml"),
    ("verl_config", {"method": "grpo", "model": MODEL}, "out", "verl.yaml"),
]
IDS = [f"{tool}-{arg}" for tool, _, arg, _ in MCP_CASES]


async def _call(options: ServerOptions, tool: str, args: dict):
    async with Client(create_server(options)) as c:
        r = await c.call_tool(tool, args)
    return r.is_error, r.content[0].text if r.content else ""


@pytest.mark.parametrize(("tool", "base", "argument", "name"), MCP_CASES, ids=IDS)
async def test_mcp_reads_tilde_paths(home, tool, base, argument, name):
    options = ServerOptions(write_roots=(home.resolve(),))
    is_error, text = await _call(options, tool, {**base, argument: f"~/{name}"})
    assert not is_error, text
    if argument == "out":
        assert (home / name).read_text().startswith(json.loads(text)["text"][:40])


@pytest.mark.parametrize(("tool", "base", "argument", "name"), MCP_CASES, ids=IDS)
async def test_mcp_names_the_argument_when_a_home_is_unknown(home, tool, base, argument, name):
    value = f"~{NOBODY}/{name}"
    is_error, text = await _call(ServerOptions(write_roots=(home.resolve(),)), tool, {**base, argument: value})
    assert is_error
    assert f"{argument} {value!r}: there is no user {NOBODY!r}" in text, text
    assert "mkdir" not in text and "RuntimeError" not in text


# ---------------------------------------------------------------------------------------------------------
# Over the CLI: each subcommand argument that takes a path, and the server's --allow-write
# ---------------------------------------------------------------------------------------------------------

# argv with {p} where the path goes, and the name the error gives the argument
CLI_CASES = [
    (["band", "{p}"], "rows", "rows.jsonl"),
    (["truncated-passes", "{p}"], "rows", "rows.jsonl"),
    (["pass-at", "{p}"], "rows", "rows.jsonl"),
    (["route", "{p}", "--model", MODEL], "rows", "rows.jsonl"),
    (["route", "{good}", "--model", MODEL, "--teacher-rows", "{p}"], "--teacher-rows", "rows.jsonl"),
    (["teacher-clears", "{p}", "{good}"], "teacher_rows", "rows.jsonl"),
    (["teacher-clears", "{good}", "{p}"], "student_rows", "rows.jsonl"),
    (["holdout-size", "--before", "{p}"], "--before", "rows.jsonl"),
    (["holdout-size", "--before", "{good}", "--after", "{p}"], "--after", "rows.jsonl"),
    (["preview-update", "{p}"], "path", "traces.jsonl"),
    (["prime-rl-config", "refunds-v1", "grpo", "--model", MODEL, "--out", "{p}"], "out", "rl.toml"),
]
CLI_IDS = [f"{argv[0]}-{arg}" for argv, arg, _ in CLI_CASES]


def _argv(template: list[str], path: str, home: Path) -> list[str]:
    return [a.format(p=path, good=home / "rows.jsonl") for a in template]


@pytest.mark.parametrize(("template", "argument", "name"), CLI_CASES, ids=CLI_IDS)
def test_cli_reads_tilde_paths(home, capsys, template, argument, name):
    assert cli.main(_argv(template, f"~/{name}", home)) == 0, capsys.readouterr().err
    if argument == "out":
        assert (home / name).is_file()


@pytest.mark.parametrize(("template", "argument", "name"), CLI_CASES, ids=CLI_IDS)
def test_cli_names_the_argument_when_a_home_is_unknown(home, capsys, template, argument, name):
    value = f"~{NOBODY}/{name}"
    assert cli.main(_argv(template, value, home)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pick-a-method: {argument} {value!r}: there is no user {NOBODY!r}"), err
    assert "mkdir" not in err and "Traceback" not in err


def test_allow_write_expands_tilde_and_names_itself_when_a_home_is_unknown(home, capsys):
    options = cli._options(cli._parser().parse_args(["--allow-write", "~", "--allow-write", "~/sub"]))
    assert options.write_roots == (home.resolve(), (home / "sub").resolve())
    with pytest.raises(SystemExit) as e:  # the server does not start
        cli.main(["--allow-write", f"~{NOBODY}"])
    assert e.value.code == 2
    assert f"--allow-write '~{NOBODY}': there is no user {NOBODY!r}" in capsys.readouterr().err


def test_the_console_script_prints_one_line_not_a_traceback(home):
    exe = Path(sys.executable).with_name("pick-a-method")
    out = subprocess.run([str(exe), "band", f"~{NOBODY}/rows.jsonl"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HOME": str(home)})
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("pick-a-method: rows '~nosuchuser/rows.jsonl'"), out.stderr
    assert out.stdout == ""
