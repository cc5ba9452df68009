"""The command line in its own words: a mistyped flag gets a did-you-mean, a missing positional the order, the
core's MCP wording (`fields={...}`, `pass_threshold=`) becomes flags, and a verdict's next step is printed as the
command that does it."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any


class Parser(argparse.ArgumentParser):
    """argparse, with a did-you-mean for a mistyped flag (Python 3.11's argparse has none)."""

    def error(self, message: str) -> Any:
        if "arguments are required" in message:  # say the order: `prime-rl-config grpo` took grpo as the taskset
            wanted = [a.metavar or a.dest for a in self._actions if not a.option_strings and a.nargs != argparse.SUPPRESS
                      and not isinstance(a, argparse._SubParsersAction)]
            if len(wanted) > 1:
                message += f" (in this order: {self.prog} {' '.join(w.upper() for w in wanted)} ...)"
        m = re.match(r"unrecognized arguments: (.+)", message)
        if m:
            import difflib

            known = {o for a in self._all_actions() for o in a.option_strings if o.startswith("--")}
            hints = []
            for word in m[1].split():
                flag = word.split("=", 1)[0]
                close = difflib.get_close_matches(flag, sorted(known), n=1, cutoff=0.6) if flag.startswith("-") else []
                if close:
                    hints.append(f"{close[0]} for {flag}")
            if hints:
                message += f" (did you mean {', '.join(hints)}?)"
        super().error(message)

    def _all_actions(self) -> list[argparse.Action]:
        actions = list(self._actions)
        for a in self._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    actions += sub._actions
        return actions


def _field_flags(match: re.Match[str]) -> str:
    """fields={"reward": "correct", ...} -> --reward-field correct ..."""
    try:
        mapping = json.loads(match[1])
    except ValueError:
        return match[0]
    flags = [f"--cut-off {v!r}" if k == "cut_off" else f"--{k.replace('_id', '').replace('_', '-')}-field {v}"
             for k, v in mapping.items()]
    return " ".join(flags)


# A tool's arguments that are the command's positionals, in order (the others are --flags of the same name).
POSITIONALS = {"route": ("rows_path",), "band": ("rows_path",), "pass_at": ("rows_path",),
               "truncated_passes": ("rows_path",), "teacher_clears": ("teacher_rows_path", "student_rows_path"),
               "holdout_size": (), "preview_update": ("path",), "prime_rl_config": ("taskset", "method"),
               "trl_config": ("method",), "verl_config": ("method",)}
RENAMED = {"teacher_rows_path": "--teacher-rows", "reward_funcs": "--reward-func", "lora": "--no-lora"}


def command_line(tool: str, arguments: dict[str, Any]) -> str | None:
    """A next step as the command that does it here, or None where an argument has no flag (then the call is shown)."""
    import shlex

    if tool not in POSITIONALS:
        return None
    name = tool.replace("_", "-")
    from .cli import _parser  # the parser knows each command's flags

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    flags = {o for a in sub._actions for o in a.option_strings}
    words = ["pick-a-method", name]
    for key in POSITIONALS[tool]:
        value = arguments.get(key, f"<{key}>")
        words += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    for key, value in arguments.items():
        if key in POSITIONALS[tool] or value is None:
            continue
        if key == "fields":
            for k, v in value.items():
                words += ["--cut-off" if k == "cut_off" else f"--{k.replace('_id', '').replace('_', '-')}-field", v]
            continue
        flag = RENAMED.get(key, f"--{key.replace('_', '-')}")
        if key in ("knobs", "overrides", "slurm", "wandb"):
            flag = {"knobs": "--knob", "overrides": "--override"}.get(key, flag)
            if not isinstance(value, dict) or flag not in flags:
                return None
            for k, v in value.items():
                words += [flag, f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
        elif flag not in flags:
            return None
        elif isinstance(value, bool):
            if value != (key == "lora"):  # --no-lora is the flag for lora=False; other booleans are store_true
                words.append(flag)
        elif isinstance(value, list):
            for v in value:
                words += [flag, str(v)]
        elif isinstance(value, (int, float, str)):
            words += [flag, str(value)]
        else:
            return None
    return shlex.join(words)


def cli_words(message: str) -> str:
    """The core's messages name the MCP arguments; a person at the shell reads the flags instead."""
    message = re.sub(r"fields=(\{[^{}]*\})", _field_flags, message)
    message = re.sub(r"\bpass_threshold=([\d.]+)", r"--pass-threshold \1", message)
    message = message.replace("call prime_rl_config again with out=<path>", "run it again with --out FILE")
    message = message.replace("pass overwrite=True", "pass --overwrite")
    message = message.replace("outside the folders this server may write to", "outside the folders --allow-write names")
    message = message.replace("or add its folder to the allowed roots in the server's settings",
                              "or pass --allow-write with its folder")
    message = re.sub(r"knobs=\{'([\w.]+)': ([^{}]+?)\}", lambda m: f"--knob {m[1]}={m[2].strip(chr(39))}", message)
    message = re.sub(r"overrides=\{'([\w.]+)': ([^{}]+?)\}",
                     lambda m: f"--override {m[1]}={m[2].strip(chr(39))}", message)
    return message
