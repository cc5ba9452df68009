"""The command line for a person: help that shows defaults and choices, the flags' own words in errors, cut values
marked, no empty `next:` line, no TOML echo after --out, a word on stderr when serving in a terminal, and never
the MCP SDK (nor torch) loaded for a subcommand."""

import argparse
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from rowkit import EXAMPLES, MODEL
from pick_a_method.server import cli

STUDENT = str(EXAMPLES / "student.jsonl")
COMMANDS = {
    "route": ["route", str(EXAMPLES / "mixed.jsonl"), "--model", MODEL],
    "truncated-passes": ["truncated-passes", str(EXAMPLES / "cut_off.jsonl")],
    "band": ["band", str(EXAMPLES / "mixed.jsonl")],
    "pass-at": ["pass-at", str(EXAMPLES / "mixed.jsonl"), "-k", "2"],
    "teacher-clears": ["teacher-clears", str(EXAMPLES / "teacher_strong.jsonl"), STUDENT],
    "holdout-size": ["holdout-size", "--effect", "0.05", "-k", "8"],
    "prime-rl-config": ["prime-rl-config", "refunds-v1", "grpo", "--model", MODEL],
    "preview-update": ["preview-update", str(EXAMPLES / "traces.jsonl")],
    "trl-config": ["trl-config", "grpo", "--model", MODEL],
    "verl-config": ["verl-config", "grpo", "--model", MODEL],
    "track": ["track", str(EXAMPLES.parent / "tests" / "fixtures" / "trainer_runs" / "verl" / "rollouts")],
    "--print-skill": ["--print-skill"],
    "summary-sql": ["summary-sql", "--engine", "duckdb"],  # past one machine (server/summary_cli.py)
    "summarize": ["summarize", "--help"],  # runs DuckDB on Parquet rows: tests/routing/test_summary.py
}
COMMANDS["after"] = ["after", STUDENT, str(EXAMPLES / "teacher_strong.jsonl")]


def run(args, **kw):
    return subprocess.run([sys.executable, "-m", "pick_a_method.server.cli", *args], capture_output=True, text=True,
                          timeout=120, **kw)


def subparsers():
    parser = cli._parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, action.choices


def test_every_argument_has_help_and_every_default_is_shown():
    parser, subs = subparsers()
    assert set(subs) == {c for c in COMMANDS if not c.startswith("-")}
    for name, p in [("pick-a-method", parser), *subs.items()]:
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, (name, action.dest)
            default = action.default
            if default not in (None, False, [], argparse.SUPPRESS):
                shown = f"{default:g}" if isinstance(default, float) else str(default)
                assert f"default: {shown}" in action.help, (name, action.dest, action.help)
            if action.choices:
                assert all(str(c) in action.help for c in action.choices), (name, action.dest)
    methods = subs["prime-rl-config"].format_help()
    assert all(m in methods for m in ("grpo", "max_rl", "rae", "opd", "opsd", "async"))
    holdout = " ".join(subs["holdout-size"].format_help().split())
    assert "default: 4" in holdout and "default: 0.6" in holdout and "default: 0.8" in holdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_subcommand_loads_the_mcp_sdk(name, tmp_path):
    code = ("import sys, runpy\n"
            "sys.modules['mcp'] = None  # an import of mcp now fails\n"
            f"sys.argv = ['pick-a-method', *{COMMANDS[name]!r}]\n"
            "try:\n    runpy.run_module('pick_a_method.server.cli', run_name='__main__')\n"
            "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            "loaded = [m for m, v in sys.modules.items() if v is not None and (m == 'mcp' or m.startswith('mcp.'))]\n"
            "assert not loaded, loaded\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]


def test_help_loads_neither_mcp_nor_routing_nor_torch():
    # the routing package itself is lazy (its names load their modules on first use): only its defaults and route's
    # options load. The flags are made from the tools' pydantic argument models, so pydantic loads (their schemas are
    # not built); a writer's arguments from its options model (trainers/<trainer>/options.py), never the writer.
    code = ("import sys\nfrom pick_a_method.server import cli\n"
            "try:\n    cli.main(['holdout-size', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('mcp', 'numpy', 'pyarrow', 'torch', 'transformers') if m in sys.modules]\n"
            "heavy += [m for m in sys.modules if m.startswith(('pick_a_method.routing.', 'pick_a_method.methods'))\n"
            "          and m not in ('pick_a_method.routing.defaults', 'pick_a_method.routing.before_training',\n"
            "                        'pick_a_method.routing.before_training.options')]\n"
            "heavy += [m for m in sys.modules if m.startswith('pick_a_method.trainers.')\n"
            "          and m.rsplit('.', 1)[1] not in ('options', 'constants', 'prime_rl', 'trl', 'verl')]\n"
            "assert not heavy, heavy\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]


def test_errors_speak_in_flags(tmp_path):
    out = tmp_path / "rl.toml"
    args = ["prime-rl-config", "refunds-v1", "grpo", "--model", MODEL, "--out", str(out)]
    first = run(args)
    assert first.returncode == 0, first.stderr
    assert "\n[orchestrator" not in first.stdout and str(out) in first.stdout  # written: named, not echoed
    again = run(args)
    assert again.returncode == 2 and "--overwrite" in again.stderr and "overwrite=True" not in again.stderr
    outside = run(["prime-rl-config", "refunds-v1", "grpo", "--model", MODEL, "--out", str(tmp_path / "x.toml"),
                   "--allow-write", str(tmp_path / "sub")])
    assert outside.returncode == 2 and "--allow-write" in outside.stderr and "server's settings" not in outside.stderr
    refused = run(["prime-rl-config", "refunds-v1", "FlashReinforce", "--model", MODEL])
    assert refused.returncode == 2 and "--knob group_size=1" in refused.stderr and "knobs={" not in refused.stderr
    knob = run(["prime-rl-config", "refunds-v1", "opd", "--model", MODEL])
    assert knob.returncode == 2 and "teacher" in knob.stderr and "validation error" not in knob.stderr


def test_printed_verdicts_cut_nothing_and_skip_an_empty_next():
    from pick_a_method.trainers.prime_rl import prime_rl_config

    printed = run(COMMANDS["prime-rl-config"]).stdout
    assert "…" not in printed  # nothing is cut; each note is printed whole on its own line
    for note in prime_rl_config("refunds-v1", "grpo", model=MODEL).notes:
        assert f"    - {cli.cli_words(note, 'prime-rl-config')}" in printed.splitlines(), note
    routed = run(COMMANDS["route"]).stdout
    assert '"per_k"' not in routed and "(per_k: see --json)" in routed  # a program's table: named, left to --json
    assert "next: -" not in printed and "next: run `uv run rl @" in printed
    routed = run(COMMANDS["route"]).stdout
    assert "next: pick-a-method prime-rl-config " in routed and "next: -" not in routed  # the command, in flags
    for line in run(COMMANDS["preview-update"]).stdout.splitlines():
        assert line != "next: -" and not line.startswith("next: -  "), line


def test_serving_in_a_terminal_says_so_on_stderr():
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pick_a_method.server.cli"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(follower)
    try:
        seen, deadline = "", time.monotonic() + 60
        while "Ctrl-C" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                seen += os.read(proc.stderr.fileno(), 4096).decode()
        assert "serving MCP over stdio" in seen and "Ctrl-C" in seen and "--help" in seen, seen
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(leader)
        proc.stdout.close()
        proc.stderr.close()


def test_a_pipe_gets_no_banner():
    proc = subprocess.run([sys.executable, "-m", "pick_a_method.server.cli"], input="", capture_output=True,
                          text=True, timeout=60)
    assert "serving MCP" not in proc.stderr and proc.stdout == ""


def test_a_mistyped_flag_gets_a_did_you_mean(capsys):
    from pick_a_method.server import cli

    with pytest.raises(SystemExit) as e:
        cli.main(["route", "examples/mixed.jsonl", "--modle", "Qwen/Qwen3-8B"])
    assert e.value.code == 2
    assert "did you mean --model for --modle?" in capsys.readouterr().err


EXAMPLE_ROUTES = ["mixed.jsonl", "cut_off.jsonl", "one_per_prompt.jsonl", "floor.jsonl", "saturated.jsonl",
                  "off_policy.jsonl", "async_sampler.jsonl", "correct_two_arms.jsonl", "two_checkpoints.jsonl"]


@pytest.mark.parametrize("example", EXAMPLE_ROUTES)
@pytest.mark.parametrize("trainer", ["prime-rl", "trl", "verl"])
def test_every_next_step_the_cli_prints_as_a_command_parses_as_one(example, trainer, tmp_path, monkeypatch):
    """The CLI shows a next step as the command that does it (flags, not MCP syntax); each one it prints must parse,
    and the config writers' (with the placeholders filled) must run, writing the file the step names."""
    import shlex

    from pick_a_method import routing
    from pick_a_method.server import cli

    r = routing.route(routing.read_rows(f"examples/{example}"), "Qwen/Qwen3-8B", trainer=trainer)
    monkeypatch.chdir(tmp_path)  # the steps name the files they write, relative to the working folder
    for step in [r.next_step, *r.alternatives]:
        if not step.tool:
            continue
        line = cli.command_line(step.tool, step.arguments)
        if line is None:  # an argument with no flag: the call is shown instead (the GPU split's dict, say)
            continue
        words = shlex.split(line)[1:]
        words = ["reverse-text" if w == "<taskset>" else w for w in words]
        args = cli._parser().parse_args(words)
        assert args.command == step.tool.replace("_", "-")
        if args.command in ("prime-rl-config", "trl-config", "verl-config"):
            written = cli._run_command(args)
            assert written.text and written.path == str(tmp_path / step.arguments["out"])
