"""Check a ``trl_config`` result with TRL itself, at the world size the command launches, the way it happens:

1. the whole command through TRL's own CLI (``trl.cli.main``), which parses the config once in the launcher
   process (world size 1) before ``accelerate launch``; the launch is stopped at accelerate's parsed arguments;
2. the arguments the launcher hands each process, parsed by the `trl` script's own parser (TrlParser, unknown
   keys fail) into GRPOConfig / DPOConfig / SFTConfig / DistillationConfig and ModelConfig, as rank 0 of the
   launched processes: the environment accelerate gives a process (WORLD_SIZE, RANK, LOCAL_RANK,
   LOCAL_WORLD_SIZE, MASTER_ADDR) and torch.distributed initialised at that size. transformers reads the world
   size from accelerate's PartialState, which reads it from torch.distributed: nothing of TRL's is patched. The
   process group is torch's fake one (the other ranks never exist; nothing is sent).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import re
import shlex
from collections.abc import Iterator
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


def _flag(argv: list[str], name: str, default: int = 1) -> int:
    return int(argv[argv.index(name) + 1]) if name in argv else default


def processes_of(argv: list[str]) -> int:
    return _flag(argv, "--num_processes")


def machines_of(argv: list[str]) -> int:
    return _flag(argv, "--num_machines")


@contextlib.contextmanager
def launched_rank(processes: int, machines: int, monkeypatch: Any) -> Iterator[None]:
    """Rank 0 of ``processes`` as `accelerate launch` starts it (see the module's docstring)."""
    import torch
    import torch.distributed as dist
    from accelerate.state import AcceleratorState
    from torch.testing._internal.distributed.fake_pg import FakeStore  # registers the "fake" backend

    if processes == 1:  # a single process launches with no distributed environment at all
        yield
        return
    env = {"WORLD_SIZE": processes, "RANK": 0, "LOCAL_RANK": 0, "LOCAL_WORLD_SIZE": processes // machines,
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": 29500,
           "OMP_NUM_THREADS": torch.get_num_threads()}  # else accelerate resets this process's thread count
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=processes)
    try:
        yield
    finally:
        dist.destroy_process_group()
        AcceleratorState._reset_state(reset_partial_state=True)


def _values(parsed: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for obj in parsed:
        for f in dataclasses.fields(obj):
            values.setdefault(f.name, getattr(obj, f.name))
    values["__classes__"] = [type(o).__name__ for o in parsed]
    values["__world_size__"] = next(o.world_size for o in parsed if hasattr(o, "world_size"))
    return values


def parse_as_process(script: str, script_args: list[str]) -> dict[str, Any]:
    """Parse what the launcher passes a process, with the script's own parser; {field: value} over its dataclasses."""
    parser = importlib.import_module(f"trl.scripts.{script}").make_parser()
    return _values(parser.parse_args_and_config(script_args, fail_with_unknown_args=True))


def parse_as_cli(config: dict[str, Any], script: str) -> dict[str, Any]:
    """Parse the config's values given as `--key value` flags (argparse applies each field's type and choices)."""
    flags: list[str] = []
    for key, value in config.items():
        if value is None or isinstance(value, dict):
            continue
        items = value if isinstance(value, list) else [value]
        flags += [f"--{key}", *[(str(v).lower() if isinstance(v, bool) else str(v)) for v in items]]
    parser = importlib.import_module(f"trl.scripts.{script}").make_parser()
    parsed = parser.parse_args_and_config(flags + CPU, fail_with_unknown_args=True)
    return {f.name: getattr(o, f.name) for o in reversed(parsed) for f in dataclasses.fields(o)}


def documented_values(config_class: type, field_name: str) -> set[str]:
    """The quoted words in a TRL field's help (its supported values), read from TRL's own metadata."""
    help_text = next(f for f in dataclasses.fields(config_class) if f.name == field_name).metadata["help"]
    return set(re.findall(r"[`']([a-z_]+)'", help_text))


def check(result: Any, path: Path, monkeypatch: Any) -> dict[str, Any]:
    """Every check on a written result; returns the values rank 0 of the launched processes parses."""
    assert yaml.safe_load(path.read_text()) == result.config == yaml.safe_load(result.text)
    argv = argv_of(result.command)
    processes, machines = processes_of(argv), machines_of(argv)
    launch = run_cli(result.command, monkeypatch)  # the launcher's own parse, at world size 1
    assert launch["script"] == f"{argv[0]}.py"
    accelerate = launch["accelerate"]  # what `accelerate launch` parsed
    assert (accelerate.num_processes or 1) == processes
    assert (accelerate.num_machines or 1) == machines
    with launched_rank(processes, machines, monkeypatch):
        values = parse_as_process(argv[0], launch["script_args"])
        # The YAML path sets argparse defaults, which argparse never type-checks; the same values on the command
        # line go through each field's type and choices, so a value of the wrong type fails here.
        as_cli = parse_as_cli(result.config, argv[0])
    assert values["__world_size__"] == processes  # transformers' own reading of the launched world
    for key, value in result.config.items():
        assert key in values, key
        got = values[key]
        assert (list(got) if isinstance(got, tuple) else got) == value, (key, got, value)
        if value is not None and not isinstance(value, dict):
            assert as_cli[key] == values[key], (key, as_cli[key], values[key])
    values["__accelerate__"] = accelerate
    return values


def run_cli(command: str, monkeypatch: Any) -> dict[str, Any]:
    """Run `trl ...` (plus the CPU flag) through TRL's CLI with the launch stopped at accelerate's parsed arguments."""
    from trl.cli import accelerate_launcher
    from trl.cli.main import main

    seen: dict[str, Any] = {}
    original = accelerate_launcher.launch_training_script

    def capture(script_name: str, launch_args: list[str], training_script_args: list[str], **_: Any) -> None:
        seen.update(script=script_name, launch_args=launch_args, script_args=training_script_args)
        original(script_name, launch_args, training_script_args, launch_command_fn=lambda a: seen.update(accelerate=a))

    monkeypatch.setattr(accelerate_launcher, "launch_training_script", capture)
    assert main(argv_of(command) + CPU) == 0
    return seen
