"""The command line's flags, made from the tools' argument models (server/declare.py): one subcommand a tool, each
argument a positional or a --kebab-case flag as its `Cli` says, "(default: X)" from the model. `arguments()` turns
what argparse parsed back into the tool's arguments, which the model then checks as it checks an MCP call.
server/cli.py runs what is parsed; server/cli_words.py reads the same declarations to print hints as commands."""

from __future__ import annotations

import argparse
import types
import typing
from pathlib import Path
from typing import Any

from .cli_picture import plot_flags
from .cli_words import Parser
from .options import DEFAULT_CALL_SECONDS, DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS

USAGE = """`pick-a-method`: with no subcommand, serve MCP over stdio; with one, print a verdict for a person.

    pick-a-method                                  # MCP over stdio (what Claude Code and the Inspector spawn)
    pick-a-method --transport http --port 8765     # MCP over streamable HTTP on 127.0.0.1
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B [--teacher-rows t.jsonl] [--json]
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B --reward-field correct --model-field sampling.model
    pick-a-method --print-skill > .claude/skills/pick-a-method/SKILL.md
"""


class _Help(argparse.RawDescriptionHelpFormatter):
    pass


def parser() -> argparse.ArgumentParser:
    from .arguments import served

    p = Parser(prog="pick-a-method", description=USAGE, formatter_class=_Help)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="how to serve MCP: stdio (what clients spawn) or streamable http (default: stdio)")
    p.add_argument("--port", type=int, default=8765, help="port for --transport http, on 127.0.0.1 (default: 8765)")
    p.add_argument("--print-skill", action="store_true", help="print the skill (SKILL.md) and exit")
    p.add_argument("--max-rows", type=int, metavar="N",
                   help=f"cap on rows read per call (default: {DEFAULT_MAX_ROWS:,}; env PICK_A_METHOD_MAX_ROWS)")
    p.add_argument("--max-bytes", type=int, metavar="N",
                   help=f"cap on bytes read per file (default: {DEFAULT_MAX_BYTES:,}; env PICK_A_METHOD_MAX_BYTES)")
    p.add_argument("--call-seconds", type=float, metavar="S",
                   help=f"time budget per tool call (default: {DEFAULT_CALL_SECONDS:g}; env "
                        f"PICK_A_METHOD_CALL_SECONDS)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="a folder the server may read and write (repeatable; where the client declares no roots). "
                        "Default: the folder it starts in, unless that is /, your home folder or a system folder")
    p.add_argument("--allow-write", action="append", default=[], metavar="DIR",
                   help="a folder the config writers and --plot may write into; repeatable (default: the current folder "
                        "for the server; anywhere for a command)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           description="with a command, print a verdict for a person (no MCP); without one, serve MCP")
    for model in served():
        command(sub, model)
    from .summary_cli import add_commands

    add_commands(sub)  # summary-sql and summarize: past one machine, not tools
    return p


def command(sub: Any, model: Any) -> argparse.ArgumentParser:
    """The subcommand of one tool: its arguments' flags, --json, and --plot or --allow-write where it has them."""
    from .declare import cli_of

    c = sub.add_parser(model.command(), help=model.title, description=f"{model.title}. {model.description()}",
                       formatter_class=_Help)
    positionals_first = sorted(model.model_fields.items(), key=lambda kv: not cli_of(model, kv[0]).positional)
    for name, field in positionals_first:
        cli = cli_of(model, name)
        if cli.skip:
            continue
        if _nested(field.annotation) is not None:
            _group(c, name, field, cli)
        else:
            _flag(c, name, field, cli)
    c.add_argument("--json", action="store_true", help="print the whole verdict as JSON instead of text")
    if model.pictured:
        plot_flags(c)
    model.cli_flags(c)
    if model.writes:
        c.add_argument("--allow-write", action="append", default=argparse.SUPPRESS, metavar="DIR",
                       help="refuse a file written (--out, --freeze) outside these folders (repeatable; default: "
                            "write anywhere)")
    return c


def _types(annotation: Any) -> list[Any]:
    """The types a field's annotation allows (Annotated and unions unwrapped; None left out)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) for t in _types(a) if t is not type(None)]
    return [annotation]


def _nested(annotation: Any) -> Any:
    """The declared object a field holds whose fields are each a flag (`fields`), or None."""
    from .schemas import Fields

    return Fields if Fields in _types(annotation) else None


def _scalar(annotation: Any) -> Any:
    """What argparse converts a word to: the first of int, float, str the annotation allows (str otherwise)."""
    allowed = _types(annotation)
    return next((t for t in (bool, int, float, str) if t in allowed), str)


def _literal(annotation: Any) -> tuple[str, ...] | None:
    return next((typing.get_args(t) for t in _types(annotation) if typing.get_origin(t) is typing.Literal), None)


def _shown(default: Any) -> str:
    return f"{default:g}" if isinstance(default, float) else str(default)


def flag_name(name: str, cli: Any) -> str:
    return cli.flag or f"--{name.replace('_', '-')}"


def _flag(c: argparse.ArgumentParser, name: str, field: Any, cli: Any) -> None:
    help = cli.help or (field.description or name.replace("_", " "))[0].lower() + (field.description or " ")[1:]
    default = None if field.is_required() else field.default
    if cli.positional:
        c.add_argument(name, nargs="+" if cli.many else None, metavar=cli.metavar, help=help)
        return
    flag, kind = flag_name(name, cli), _scalar(field.annotation)
    if cli.pairs:
        c.add_argument(flag, dest=name, action="append", default=[], metavar="KEY=VALUE", type=_pair_word(flag),
                       help=help)
    elif kind is bool and not cli.yes_no:  # default True: --no-NAME; else --NAME
        negated = default is True
        c.add_argument(f"--no-{name.replace('_', '-')}" if negated else flag, dest=f"no_{name}" if negated else name,
                       action="store_true", default=False if negated else None, help=help)
    elif cli.yes_no:
        c.add_argument(flag, dest=name, choices=("true", "false"), help=help)
    else:
        allowed = [typing.get_origin(t) or t for t in _types(field.annotation)]
        many = list in allowed and not {str, int, float} & set(allowed)  # repeatable where one word is not enough
        choices = cli.choices or _literal(field.annotation)
        if default is not None and "default:" not in help:
            help += f" (default: {_shown(default)})"
        c.add_argument(flag, dest=name, action="append" if many else "store", metavar=cli.metavar,
                       type=None if cli.parse or choices else kind, choices=choices, default=default,
                       required=field.is_required(), help=help)
    if cli.off:
        c.add_argument(cli.off[0], dest=f"off_{name}", action="store_true", help=cli.off[1])


def _group(c: argparse.ArgumentParser, name: str, field: Any, cli: Any) -> None:
    from .declare import cli_of

    nested = _nested(field.annotation)
    g = c.add_argument_group(cli.help)
    for sub in nested.model_fields:
        sub_cli = cli_of(nested, sub)
        g.add_argument(flag_name(sub, sub_cli), dest=f"{name}.{sub}", metavar=sub_cli.metavar, help=sub_cli.help)


# What a KEY=VALUE flag's value looks like, where it is not a knob (a guard names its suite, then two rows files)
PAIR_EXAMPLES = {"--guard": "--guard safety=base_safety.jsonl,trained_safety.jsonl (NAME=BEFORE,AFTER: the suite's "
                            "name first)"}


def _pair_word(flag: str) -> Any:
    def check(text: str) -> str:
        key, sep, _ = text.partition("=")
        if not sep or not key.strip():
            example = PAIR_EXAMPLES.get(flag, f"{flag} group_size=16")
            raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE; write e.g. {example}")
        return text
    return check


def arguments(model: Any, ns: argparse.Namespace) -> dict[str, Any]:
    """What the flags said, as the tool's arguments (what was not given is left out: the model's default stands)."""
    from .declare import cli_of

    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        cli = cli_of(model, name)
        if cli.skip:
            continue
        nested = _nested(field.annotation)
        if nested is not None:
            given = {k: v for k in nested.model_fields if (v := getattr(ns, f"{name}.{k}", None)) is not None}
            if given:
                out[name] = given
            continue
        value = getattr(ns, name, None)
        if f"no_{name}" in vars(ns):  # --no-NAME
            value = False if getattr(ns, f"no_{name}") else None
        elif cli.yes_no and value is not None:
            value = value == "true"
        elif cli.parse and value is not None:
            value = cli.parse(value)
        if value == []:  # a repeatable flag not given
            value = None
        if cli.off and getattr(ns, f"off_{name}", False):
            value = False
        if value is not None:
            out[name] = value
    return out


def write_roots(args: argparse.Namespace) -> list[Path] | None:
    """The folders --allow-write names (~ expanded, links resolved), for the config writers and --plot; None: the
    command line writes where its user can (its --out or --plot names the file)."""
    from pick_a_method.common.paths import expand_user_path

    return [expand_user_path(d, "--allow-write").resolve() for d in args.allow_write] or None

