"""`pick-a-method`: with no subcommand, serve MCP over stdio; with one, print a verdict for a person. The flags and the
usage `--help` prints are in cli_flags.py."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import Any

from . import extras
from .cli_flags import arguments, flag_name, parser as _parser, write_roots
from .cli_picture import picture_lines, remember
from .cli_words import cli_words, command_line
from .declare import cli_of
from .schemas import field_map
from .summary_cli import COMMANDS as SUMMARY_COMMANDS, run as run_summary
from .options import ServerOptions

SERVING = ("pick-a-method: serving MCP over stdio; a client (Claude Code, Codex, Cursor, ...) spawns this itself. "
           "Ctrl-C stops it. `pick-a-method --help` lists the commands for a person, such as `pick-a-method route "
           "rows.jsonl`.")


def _options(args: argparse.Namespace) -> ServerOptions:
    kw: dict[str, Any] = {}
    if args.max_rows is not None:
        kw["max_rows"] = args.max_rows
    if args.max_bytes is not None:
        kw["max_bytes"] = args.max_bytes
    if args.call_seconds is not None:
        kw["call_seconds"] = args.call_seconds
    from pick_a_method.common.paths import expand_user_path

    if args.root:
        kw["roots"] = kw["write_roots"] = tuple(expand_user_path(d, "--root").resolve() for d in args.root)
    if args.allow_write:
        kw["write_roots"] = tuple(expand_user_path(d, "--allow-write").resolve() for d in args.allow_write)
    return ServerOptions(**kw)


def _message(e: BaseException, command: str | None) -> str:
    from pydantic import ValidationError  # loaded by then: the commands build pydantic verdicts

    if isinstance(e, ValidationError):
        from .arguments import by_tool
        from .explain import explain

        model = by_tool(command or "")
        checked = model is not None and e.title == model.__name__  # the command's own arguments: say their flags
        return explain(e, {n: flag_name(n, cli_of(model, n)) for n in model.model_fields} if checked else None)
    return str(e)


def _run_command(args: argparse.Namespace) -> Any:
    """The command's tool, its arguments checked by the tool's model (as an MCP call's are), its rows read, and the
    same call into the core the server makes."""
    from pick_a_method import routing

    from .arguments import by_tool

    model = by_tool(args.command)
    a = model.model_validate(arguments(model, args))
    fields = field_map(getattr(a, "fields", None))
    rows = {}
    for name, required in model.row_sets.items():
        path = getattr(a, f"{name}_path")
        if path is None:
            continue
        cli = cli_of(model, f"{name}_path")
        argument = name if cli.positional else flag_name(f"{name}_path", cli)  # the word the user typed
        one = path[0] if isinstance(path, list) and len(path) == 1 else path
        rows[name] = remember(args, name, routing.read_rows(one, fields=fields, argument=argument))
    vars(args)["arguments"] = a  # the picture's own arguments (cli_picture.picture_lines)
    if model.reads_itself:  # its core reads its input (track's run folder) from the arguments
        return a.call()
    if model.row_sets:  # a rows tool that writes (route's freeze) writes where --allow-write says
        return a.call(**rows, **({"allowed_roots": write_roots(args)} if model.writes else {}))
    if model.writes:
        return a.call(allowed_roots=write_roots(args))
    extras.require("torch", args.command)
    return a.call()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.print_skill:
        from .skill import skill_text

        sys.stdout.write(skill_text())
        return 0
    if args.command in SUMMARY_COMMANDS:
        return run_summary(args)
    if getattr(args, "follow", False):  # reads until Ctrl-C (track: server/track_tool.py)
        from .arguments import by_tool

        model = by_tool(args.command)
        try:
            a = model.model_validate(arguments(model, args))
        except ValueError as e:
            print(f"pick-a-method: {_message(e, args.command)}", file=sys.stderr)
            return 2
        return a.follow(every=args.every)
    if args.command:
        try:
            verdict = _run_command(args)
            below, wrote = picture_lines(args, verdict)  # --plot written before anything is printed
        except (ValueError, TypeError, OSError) as e:
            print(f"pick-a-method: {cli_words(_message(e, args.command), args.command)}", file=sys.stderr)
            return 2
        from .render import render

        try:  # a subcommand's answer, for a person: this path never serves MCP, so stdout is free
            words = None if args.json else args.arguments.words(verdict)
            print(verdict.model_dump_json(indent=2) if args.json else words if words is not None
                  else cli_words(render(verdict, command_line), args.command))
            for line, stream in ((below, sys.stdout), (wrote, sys.stderr if args.json else sys.stdout)):
                if line:
                    print(line, file=stream)
        except BrokenPipeError:  # `| head` closed the pipe: not an error
            sys.stderr.close()
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from .versions import problem

    if (wrong := problem()) is not None:  # before the SDK is imported: its own error would not say which version
        print(wrong, file=sys.stderr)
        return 3
    from .app import create_server

    try:
        options = _options(args)
    except ValueError as e:  # a PICK_A_METHOD_* variable that is not a number
        _parser().error(str(e))
    server = create_server(options)
    try:
        if args.transport == "http":
            server.run("streamable-http", host="127.0.0.1", port=args.port)
        else:
            # stdin is read on a worker thread that a KeyboardInterrupt cannot stop: with Python's own handler,
            # Ctrl-C left a server that no longer answered yet did not exit until stdin closed. End at once
            # instead, as SIGTERM does (no traceback, nothing on stdout).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if sys.stdin.isatty():  # a person ran it by hand: say what it is doing (stderr; stdout is the wire)
                print(SERVING, file=sys.stderr, flush=True)
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
