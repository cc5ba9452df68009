"""The README's prime-rl examples run as written, and what they write is a config prime-rl loads."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from primerl_schema_table import check as table_check

from pick_a_method.trainers.prime_rl import PrimeRLConfig, validate_prime_rl
from pick_a_method.server import cli

REPO = Path(__file__).resolve().parents[2]  # this file's own: tests/trainers has a conftest too

SECTION = REPO.joinpath("README.md").read_text().split("## prime-rl configs", 1)[1].split("\n## ", 1)[0]
COMMANDS = [line[2:] for line in re.findall(r"^\$ pick-a-method prime-rl-config .*$", SECTION, re.M)]
(PYTHON,) = re.findall(r"```python\n(.*?)```", SECTION, re.S)


def test_the_section_has_examples():
    assert len(COMMANDS) >= 2 and "prime_rl_config(" in PYTHON


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.split()[2] + " " + c.split()[3])
def test_cli_examples(command, capsys):
    argv = shlex.split(command)[1:] + ["--json"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    res = PrimeRLConfig.model_validate(json.loads(capsys.readouterr().out))
    assert validate_prime_rl(res.config) == [] and table_check(res.config) == []
    for flag, key in (("--eval-split", "eval_split"), ("--wandb", "wandb.project"), ("--run-name", "run_name"),
                      ("--checkpoint", "checkpoint.interval"), ("--nodes", "nodes"), ("--warmup-steps", "warmup_steps"),
                      ("--slurm", "slurm.partition"), ("--scheduler", "scheduler")):
        assert (key in res.honored) == (flag in argv), (flag, res.honored)


def test_python_example():
    namespace: dict = {}
    exec(compile(PYTHON, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    results = {k: v for k, v in namespace.items() if isinstance(v, PrimeRLConfig)}
    assert set(results) == {"run", "resumed", "local", "tweaked"}
    for name, res in results.items():
        assert validate_prime_rl(res.config) == [] and table_check(res.config) == [], name
    run, local, tweaked = results["run"], results["local"], results["tweaked"]
    assert run.config["orchestrator"]["eval"]["source"][0]["env"]["taskset"]["dataset_split"] == "test"
    assert run.config["run"] == {"name": "rt-1"} and run.config["output_dir"] == "/scratch/runs"
    assert results["resumed"].config["resume"] == {}
    assert local.config["orchestrator"]["renderer"] == {"name": "qwen3"}
    assert any("qwen3" in w and "renderer='default'" in w for w in local.warnings)
    assert tweaked.config["orchestrator"]["train"]["source"][0]["env"]["taskset"]["dataset_split"] == "train"
