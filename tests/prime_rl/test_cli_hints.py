"""The writer's refusals at the shell, in CLI words: a half-given node split names the other
flag, sft/dpo name trl-config, and following the printed fix writes a config."""

from __future__ import annotations

import re
import shlex

import pytest

from pick_a_method.server.cli import main

BASE = ["prime-rl-config", "reverse-text", "grpo", "--model", "Qwen/Qwen3-8B"]


def _refusal(capsys, argv):
    assert main(argv) != 0
    return capsys.readouterr().err


@pytest.mark.parametrize(("flag", "other"), [("--inference-nodes", "--trainer-nodes"),
                                             ("--trainer-nodes", "--inference-nodes")])
def test_one_side_of_the_node_split_names_the_other_flag_and_the_fix_runs(capsys, tmp_path, flag, other):
    err = _refusal(capsys, [*BASE, flag, "1"])
    assert f"{other} <machines>" in err and "nodes[" not in err and "nodes=" not in err
    fix = re.search(r"Fix: (.*?), or leave", err)[1].replace("<machines>", "2")
    out = tmp_path / "rl.toml"
    assert main([*BASE, *shlex.split(fix), "--out", str(out), "--allow-write", str(tmp_path)]) == 0
    assert 'type = "multi_node"' in out.read_text()


@pytest.mark.parametrize("method", ["sft", "dpo"])
def test_sft_and_dpo_name_trl_config(capsys, method):
    err = _refusal(capsys, ["prime-rl-config", "reverse-text", method, "--model", "Qwen/Qwen3-8B"])
    assert f"pick-a-method trl-config {method}" in err
