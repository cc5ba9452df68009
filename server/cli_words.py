"""The command line in its own words: a mistyped flag or command gets a did-you-mean, a missing positional the
order (and which one is missing when a method was given alone), the core's MCP wording (`fields={...}`,
`pass model='X'`, `prime_rl_config(method='opsd')`) becomes flags and commands, and a verdict's next step is
printed as the command that does it."""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import os
import json
import re
import shlex
import sys
from typing import Any

from .arguments import DECLARED


class Parser(argparse.ArgumentParser):
    """argparse, with a did-you-mean for a mistyped flag or command (Python 3.11's argparse has none), and the
    missing positional named right when the one given is a method (`prime-rl-config grpo` lacks the taskset)."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._words = list(sys.argv[1:] if args is None else args)  # a subcommand's parser gets its own words
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:
        if "arguments are required" in message:
            message = self._missing(message)
        m = re.match(r"unrecognized arguments: (.+)", message)
        if m:
            message += _did_you_mean(m[1].split(), self._all_actions())
            if any(os.path.exists(w) for w in m[1].split()):  # the shell expanded a glob into many paths
                message += (" (several paths where one was expected: did the shell expand a glob? Quote it, e.g. "
                            "'runs/*.jsonl', so pick-a-method expands it, or give the folder)")
        m = re.match(r"argument COMMAND: invalid choice: '([^']*)'", message)
        if m:
            commands = next(a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction))
            close = difflib.get_close_matches(m[1], sorted(commands), n=1, cutoff=0.6)
            if close:
                message += f" (did you mean {close[0]}?)"
            unknown = [w for w in getattr(self, "_words", []) if w.startswith("--") and w != "--"]
            message += _did_you_mean(unknown, self._all_actions(), known_too=False)
        super().error(message)

    def _positional_actions(self) -> list[argparse.Action]:
        return [a for a in self._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]

    def _missing(self, message: str) -> str:
        """Say the order; and where the one positional given is a method, that the one before it is missing."""
        wanted = self._positional_actions()
        if len(wanted) < 2:
            return message
        names = [(a.metavar or a.dest) for a in wanted]
        given = _positional_words(getattr(self, "_words", []), self._actions)
        if names[-1] == "method" and len(given) == len(names) - 1 and given and _is_method(given[-1]):
            missing = [names[len(given) - 1] if n == "method" else n for n in message.split(": ", 1)[1].split(", ")]
            return (f"the following arguments are required: {', '.join(missing)} ({given[-1]!r} is the method, "
                    f"which comes last: {self.prog} {' '.join(n.upper() for n in names[:-1])} {given[-1]} ...)")
        return message + f" (in this order: {self.prog} {' '.join(n.upper() for n in names)} ...)"

    def _all_actions(self) -> list[argparse.Action]:
        actions = list(self._actions)
        for a in self._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    actions += sub._actions
        return actions


def _did_you_mean(words: list[str], actions: list[argparse.Action], *, known_too: bool = True) -> str:
    """' (did you mean --model for --modle?)' for the words that are near a flag; '' when none is."""
    known = sorted({o for a in actions for o in a.option_strings if o.startswith("--")})
    hints = []
    for word in words:
        flag = word.split("=", 1)[0]
        if not flag.startswith("-") or (not known_too and flag in known):
            continue
        close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
        if close and close[0] != flag:
            hints.append(f"{close[0]} for {flag}")
    return f" (did you mean {', '.join(hints)}?)" if hints else ""


def _positional_words(words: list[str], actions: list[argparse.Action]) -> list[str]:
    """The words argparse took as positionals: not flags, nor the values of flags that take one."""
    takes_value = {o for a in actions for o in a.option_strings if a.nargs != 0}
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            skip = word in takes_value  # --flag VALUE (--flag=VALUE is one word)
        else:
            out.append(word)
    return out


def _is_method(word: str) -> bool:
    """Whether `word` names a method (grpo, OPD, async-grpo, ...): the registry builds it or asks for its knobs."""
    from pick_a_method.methods.objects.registry import make_method

    try:
        make_method(word)
    except ValueError as e:
        return not str(e).startswith("unknown method")
    return True


def _flags_of(model: Any, key: str) -> tuple[Any, str] | None:
    """(the argument's Cli, its flag) from the tool's declaration, or None where the command line has no flag for it."""
    from .cli_flags import flag_name
    from .declare import cli_of

    if key not in model.model_fields or cli_of(model, key).skip:
        return None
    cli = cli_of(model, key)
    return cli, flag_name(key, cli)


def _field_flag(key: str) -> str:
    from .cli_flags import flag_name
    from .declare import cli_of
    from .schemas import Fields

    return flag_name(key, cli_of(Fields, key)) if key in Fields.model_fields else f"--{key}-field"


def _pair_word(key: str, value: Any) -> str:
    return f"{key}={value if isinstance(value, str) else json.dumps(value)}"


def command_line(tool: str, arguments: dict[str, Any]) -> str | None:
    """A next step as the command that does it here, or None where an argument has no flag (then the call is shown).
    The tool's declaration says each argument's positional place or flag."""
    from .arguments import by_tool, served

    from .schemas import ready_arguments

    model = by_tool(tool)
    if model is None or model not in served():
        return None
    fields, arguments = model.model_fields, ready_arguments(arguments)  # as the tool lists them (a GPU split: two)
    positionals = [k for k in fields if (f := _flags_of(model, k)) is not None and f[0].positional]
    words = ["pick-a-method", model.command()]
    for key in positionals:
        value = arguments.get(key, f"<{key}>")
        words += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    for key, value in arguments.items():
        if key in positionals or value is None:
            continue
        if key == "fields" and isinstance(value, list):  # "name=yours": one flag a name (--reward-field correct)
            for k, v in (pair.partition("=")[::2] for pair in value):
                words += [_field_flag(k), v]
            continue
        found = _flags_of(model, key)
        if found is None:
            return None
        cli, flag = found
        if cli.pairs:
            pairs = value.items() if isinstance(value, dict) else [(p, None) for p in value] if isinstance(
                value, list) and all(isinstance(p, str) for p in value) else None
            if pairs is None:
                return None
            words += [w for k, v in pairs for w in (flag, k if v is None else _pair_word(k, v))]
        elif isinstance(value, bool):
            if value is not (fields[key].default is True):  # --no-NAME for False where True is the default
                words.append(f"--no-{key.replace('_', '-')}" if fields[key].default is True else flag)
        elif isinstance(value, list):
            for v in value:
                words += [flag, str(v)]
        elif isinstance(value, (int, float, str)):
            words += [flag, str(value)]
        else:
            return None
    return shlex.join(words)


# The core says what to pass as the MCP tools take it: name=<Python literal>. Not after . - + / ' " ( [ (a Hydra
# key, a --knob's JSON, a constructor's argument: Async(method=...)), and a literal is a quoted string, a
# <placeholder>, a number, True/False/None, ... or a {...} up to three levels deep.
_LITERAL = r"""'[^']*'|"[^"]*"|<[^<>]*>|\.\.\.|-?\d[\w.]*|True|False|None|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"""
_ASSIGN = re.compile(rf"""(?<![\w.+\-/'"\[])(?<!\w\()([a-z][a-z_]*)=({_LITERAL})""")
_TOOLS = tuple(m.tool for m in DECLARED)
_CALL = re.compile(rf"\b({'|'.join(_TOOLS)})\(([^()]*)\)")
# A tool's name alone is its command; the trace names its questions by these two (Q1 truncated_passes: ok), left as is.
_QUESTIONS = ("truncated_passes", "teacher_clears")
# Not inside a path (/data/pass_at/rows.jsonl) or a file name (pass_at.jsonl); a sentence's full stop is fine.
_BARE_TOOL = re.compile(rf"""(?<!["\w/.-])({'|'.join(t for t in _TOOLS if "_" in t and t not in _QUESTIONS)})"""
                        r"""(?![\w"/-]|\.\w)""")
# A verb before name=value makes it a hint: a method knob is then written as --knob (a statement is left alone).
_HINT = re.compile(r"(?:pass|use|with|set|Fix:|or|and|e\.g\.|try|add|for)\s*\(?$")


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside quotes and brackets."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    return [p.strip() for p in [*parts, text[start:]] if p.strip()]


def _plain(literal: str) -> str:
    """A Python literal as the text a flag takes: a string unquoted, True/False/None as JSON, a dict as JSON."""
    if literal[:1] in "'\"" and literal[-1:] == literal[:1]:
        return literal[1:-1]
    if literal[:1] == "{":
        try:
            return json.dumps(ast.literal_eval(literal))
        except (ValueError, SyntaxError, TypeError):  # placeholders such as <n> or {...} inside: show it as JSON would
            return re.sub(r"\bNone\b", "null", literal.replace("'", '"'))
    return {"True": "true", "False": "false", "None": "null"}.get(literal, literal)


def _word(text: str) -> str:
    """A shell word; a <placeholder> is left bare, for the person to replace."""
    return text if re.fullmatch(r"<[^<>]*>|\.\.\.", text) else shlex.quote(text)


def _pairs(literal: str) -> list[tuple[str, str]]:
    """{'a': 1, 'b': 'x'} -> [('a', '1'), ('b', 'x')]."""
    out = []
    for item in _split_top(literal[1:-1], ","):
        key, _, value = item.partition(":")
        out.append((_plain(key.strip()), _plain(value.strip())))
    return out


@functools.cache
def _flags() -> frozenset[str]:
    from .cli_flags import parser as _parser

    return frozenset(o for a in _parser()._all_actions() for o in a.option_strings)


@functools.cache
def _knob_names() -> frozenset[str]:
    from pick_a_method.methods.objects.registry import METHODS

    return frozenset(f for cls in METHODS.values() for f in cls.model_fields)


@functools.cache
def _declared() -> dict[str, tuple[Any, str]]:
    """Each argument's Cli and flag as the tools declare it (overrides, --override or --set, is told by command)."""
    from .arguments import served

    out: dict[str, tuple[Any, str]] = {}
    for model in served():
        for name in model.model_fields:
            found = _flags_of(model, name)  # not a positional, nor a short flag (k=8 is also the trace's word)
            if found is not None and not found[0].positional and found[1].startswith("--"):
                out.setdefault(name, found)
    return out


def _assignment(name: str, literal: str, before: str, overrides: str) -> str | None:
    """name=literal as the flags that say it, or None to leave it as written."""
    if before.rstrip().endswith(("--knob", "--override", "--set")):  # already a flag's KEY=VALUE (a knob's group_size
        return None                                                 # is not track's --group-size)
    cli, flag = _declared().get(name, (None, f"--{name.replace('_', '-')}"))
    value = _plain(literal)
    if name == "fields" and literal.startswith("{"):
        return " ".join(f"{_field_flag(k)} {_word(v)}" for k, v in _pairs(literal))
    if name == "out":
        return "--out FILE"
    if name == "method":  # the positional; a {...} is Async's inner method, a knob
        return f"--knob {_word(f'method={value}')}" if literal.startswith("{") else f"method {value}"
    if name == "overrides" and literal.startswith("{"):
        return " ".join(f"{overrides} {_word(f'{k}={v}')}" for k, v in _pairs(literal))
    sides = _pairs(literal) if literal.startswith("{") else []
    if sides and all(f"{k}_{name}" in _declared() for k, _ in sides):  # {'inference': n, 'trainer': m}: a split
        return " ".join(f"{_declared()[f'{k}_{name}'][1]} {_word(v)}" for k, v in sides)
    if cli is not None and cli.parse and literal.startswith("{"):  # --throughput INFER,TRAIN
        return f"{flag} {','.join(v for _, v in _pairs(literal))}"
    if cli is not None and literal.startswith("{"):  # a table: KEY=VALUE words (--knob, --wandb, --eval-split)
        return " ".join(f"{flag} {_word(f'{k}={v}')}" for k, v in _pairs(literal))
    if value == "false" and f"--no-{name.replace('_', '-')}" in _flags():
        return f"--no-{name.replace('_', '-')}"
    if flag in _flags():
        return flag if value == "true" and name == "overwrite" else f"{flag} {_word(value)}"
    if name in _knob_names():  # a method knob: as the flag in a hint, as the setting it reads as in a statement
        return f"--knob {_word(f'{name}={value}')}" if _HINT.search(before) else f"{name}={value}"
    return None


def cli_words(message: str, command: str | None = None) -> str:
    """The core's messages name the MCP arguments and tools; a person at the shell reads the flags and commands."""
    overrides = "--set" if command in ("trl-config", "verl-config") else "--override"
    message = message.replace("call prime_rl_config again with out=<path>", "run it again with --out FILE")
    message = message.replace("outside the folders this server may write to", "outside the folders --allow-write names")
    message = message.replace("or add its folder to the allowed roots in the server's settings",
                              "or pass --allow-write with its folder")
    message = message.replace("Save `text`", "Save the config printed below")
    message = message.replace(
        "; rename the column", "; pass --task-field with the column that holds it, or rename the column")

    def call(m: re.Match[str]) -> str:
        arguments = {}
        for item in _split_top(m[2], ","):
            key, _, literal = item.partition("=")
            arguments[key.strip()] = _plain(literal.strip())
        line = command_line(m[1], arguments)
        return f"`{line}`" if line else m[0]

    message = _CALL.sub(call, message)

    def assign(m: re.Match[str]) -> str:
        return _assignment(m[1], m[2], message[max(0, m.start() - 12):m.start()], overrides) or m[0]

    message = _ASSIGN.sub(assign, message)
    message = re.sub(r"(?<![\w\"'./-])pass_threshold(?![\w\"':=/-]|\.\w)", "--pass-threshold", message)
    message = re.sub(r"(?<![\w/.-])knobs\.(\w+)", r"--knob \1=...", message)
    return _BARE_TOOL.sub(lambda m: m[1].replace("_", "-"), message)
