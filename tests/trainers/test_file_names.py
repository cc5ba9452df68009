"""One file name throughout: each writer's launch command, summary, next step and file header
name the same file: `out` where given, else the trainer's default name for the method (Trainer.out_name). Saved
under that name, the text is what the printed command reads: TRL's own CLI and verl's Hydra load it."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trl_check  # noqa: E402
import verl_check  # noqa: E402

from pick_a_method.common.trainers import TRAINERS  # noqa: E402
from pick_a_method.trainers.prime_rl import prime_rl_config  # noqa: E402
from pick_a_method.trainers.trl import trl_config  # noqa: E402
from pick_a_method.trainers.verl import verl_config  # noqa: E402

MODEL = "Qwen/Qwen3-8B"
ICEPOP = {"method": "grpo", "correction": "icepop"}
WRITERS = {
    "prime-rl": lambda **kw: prime_rl_config("reverse-text", "async", model=MODEL, **kw),
    "trl": lambda **kw: trl_config("async", model=MODEL, knobs=ICEPOP, gpus=2, **kw),
    "verl": lambda **kw: verl_config("async", model=MODEL, knobs=ICEPOP, **kw),
}


def _named(result, name: str) -> None:
    """The command, the summary, the next step and the file's own header all name `name`, and no other file (verl's
    command names it as Hydra does, without .yaml)."""
    assert (Path(name).stem if name.endswith(".yaml") and "verl" in result.trainer else name) in result.command
    assert result.next_step.command == result.command and result.text.splitlines()[1].endswith(result.command)
    said = " ".join((result.command, result.summary, result.next_step.why, *result.text.splitlines()[:2]))
    assert set(re.findall(r"[\w.-]+\.(?:toml|yaml)\b", said)) <= {Path(name).name}, said


@pytest.mark.parametrize("trainer", list(WRITERS))
def test_without_out_everything_names_the_trainers_default_file(trainer):
    result = WRITERS[trainer]()
    name = TRAINERS[trainer].out_name("async grpo")
    assert name == f"async-grpo-{trainer}{TRAINERS[trainer].suffix}"
    _named(result, name)
    assert name in result.summary and name in result.next_step.why


@pytest.mark.parametrize("trainer", list(WRITERS))
def test_with_out_everything_names_out(trainer, tmp_path):
    out = tmp_path / f"mine{TRAINERS[trainer].suffix}"
    result = WRITERS[trainer](out=str(out), allowed_roots=[tmp_path])
    assert result.path == str(out.resolve()) and out.read_text() == result.text
    _named(result, result.path)
    shown = f"--config-path {shlex.quote(str(tmp_path.resolve()))} --config-name mine" if trainer == "verl" else str(out)
    assert shown in result.command and result.text.splitlines()[1].endswith(result.command)
    assert "async-grpo" not in result.command


def test_trl_command_as_printed_reads_the_text_saved_under_its_name(tmp_path, monkeypatch):
    result = WRITERS["trl"]()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "async-grpo-trl.yaml").write_text(result.text)  # what the next step says to do
    launch = trl_check.run_cli(result.command, monkeypatch)  # TRL's own CLI, up to accelerate's parsed arguments
    assert launch["script"] == "grpo.py" and launch["accelerate"].num_processes == 2


@pytest.mark.needs_verl
def test_verl_command_as_printed_reads_the_text_saved_under_its_name(tmp_path):
    result = WRITERS["verl"]()
    saved = tmp_path / "async-grpo-verl.yaml"
    saved.write_text(result.text)  # in the folder the command runs from: --config-path "$PWD"
    argv = shlex.split(result.command.replace('"$PWD"', shlex.quote(str(tmp_path))))
    assert argv[3:] == ["--config-path", str(tmp_path), "--config-name", "async-grpo-verl"]
    composed = verl_check.compose_file(saved)
    from omegaconf import OmegaConf

    assert OmegaConf.to_container(composed, resolve=False) == OmegaConf.to_container(
        verl_check.compose_overrides(result.overrides), resolve=False)
