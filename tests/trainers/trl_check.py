"""Check a ``trl_config`` result with TRL itself: the YAML through the `trl` script's own parser (TrlParser,
unknown keys fail) into GRPOConfig / DPOConfig / SFTConfig / DistillationConfig and ModelConfig, and the whole
launch command through TRL's CLI up to the `accelerate launch` parse."""

from __future__ import annotations

import dataclasses
import importlib
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

# The test machine has no GPU: TRL's configs default to bf16, which TrainingArguments refuses on CPU unless told
# to run there. Only this flag is added to what the user's command passes.
CPU = ["--use_cpu", "true"]
ENV = {"$MACHINE_RANK": "0", "$MAIN_PROCESS_IP": "10.0.0.1"}


def argv_of(command: str) -> list[str]:
    for name, value in ENV.items():
        command = command.replace(f'"{name}"', value)
    argv = shlex.split(command)
    assert argv[0] == "trl", command
    return argv[1:]


def processes_of(argv: list[str]) -> int:
    return int(argv[argv.index("--num_processes") + 1]) if "--num_processes" in argv else 1


def parse_yaml(path: Path, command: str, monkeypatch: Any) -> dict[str, Any]:
    """Parse the file as `trl <command> --config path` does; return {field: value} over all its dataclasses."""
    from transformers import TrainingArguments

    argv = argv_of(command)
    sub = argv[0]
    # GRPOConfig checks its batch against the process count; give it the count the command launches.
    processes = processes_of(argv)
    monkeypatch.setattr(TrainingArguments, "world_size", property(lambda self: processes))
    parser = importlib.import_module(f"trl.scripts.{sub}").make_parser()
    parsed = parser.parse_args_and_config(["--config", str(path), *CPU], fail_with_unknown_args=True)
    values: dict[str, Any] = {}
    for obj in parsed:
        for f in dataclasses.fields(obj):
            values.setdefault(f.name, getattr(obj, f.name))
    values["__classes__"] = [type(o).__name__ for o in parsed]
    return values


def parse_as_cli(config: dict[str, Any], command: str, monkeypatch: Any) -> dict[str, Any]:
    """Parse the config's values given as `--key value` flags (argparse applies each field's type and choices)."""
    from transformers import TrainingArguments

    argv = argv_of(command)
    processes = processes_of(argv)
    monkeypatch.setattr(TrainingArguments, "world_size", property(lambda self: processes))
    flags: list[str] = []
    for key, value in config.items():
        if value is None or isinstance(value, dict):
            continue
        items = value if isinstance(value, list) else [value]
        flags += [f"--{key}", *[(str(v).lower() if isinstance(v, bool) else str(v)) for v in items]]
    parser = importlib.import_module(f"trl.scripts.{argv[0]}").make_parser()
    parsed = parser.parse_args_and_config(flags + CPU, fail_with_unknown_args=True)
    return {f.name: getattr(o, f.name) for o in reversed(parsed) for f in dataclasses.fields(o)}


def documented_values(config_class: type, field_name: str) -> set[str]:
    """The quoted words in a TRL field's help (its supported values), read from TRL's own metadata."""
    help_text = next(f for f in dataclasses.fields(config_class) if f.name == field_name).metadata["help"]
    return set(re.findall(r"[`']([a-z_]+)'", help_text))


def check(result: Any, path: Path, monkeypatch: Any) -> dict[str, Any]:
    """Every check on a written result; returns the parsed values."""
    assert yaml.safe_load(path.read_text()) == result.config == yaml.safe_load(result.text)
    values = parse_yaml(path, result.command, monkeypatch)
    for key, value in result.config.items():
        assert key in values, key
        got = values[key]
        assert (list(got) if isinstance(got, tuple) else got) == value, (key, got, value)
    # The YAML path sets argparse defaults, which argparse never type-checks; the same values on the command line
    # go through each field's type and choices, so a value of the wrong type fails here.
    as_cli = parse_as_cli(result.config, result.command, monkeypatch)
    for key, value in result.config.items():
        if value is not None and not isinstance(value, dict):
            assert as_cli[key] == values[key], (key, as_cli[key], values[key])
    launch = run_cli(result.command, monkeypatch)
    argv = argv_of(result.command)
    assert launch["script"] == f"{argv[0]}.py"
    accelerate = launch["accelerate"]  # what `accelerate launch` parsed
    assert (accelerate.num_processes or 1) == processes_of(argv)
    assert (accelerate.num_machines or 1) == (int(argv[argv.index("--num_machines") + 1]) if "--num_machines" in argv else 1)
    values["__accelerate__"] = accelerate
    return values


def run_cli(command: str, monkeypatch: Any) -> dict[str, Any]:
    """Run `trl ...` through TRL's CLI with the launch stopped at accelerate's parsed arguments."""
    from trl.cli import accelerate_launcher
    from trl.cli.main import main

    seen: dict[str, Any] = {}
    original = accelerate_launcher.launch_training_script

    def capture(script_name: str, launch_args: list[str], training_script_args: list[str], **_: Any) -> None:
        seen.update(script=script_name, launch_args=launch_args, script_args=training_script_args)
        original(script_name, launch_args, training_script_args, launch_command_fn=lambda a: seen.update(accelerate=a))

    monkeypatch.setattr(accelerate_launcher, "launch_training_script", capture)
    argv = argv_of(command) + CPU
    from transformers import TrainingArguments

    processes = processes_of(argv)
    monkeypatch.setattr(TrainingArguments, "world_size", property(lambda self: processes))
    assert main(argv) == 0
    return seen
