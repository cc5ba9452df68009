"""trl_config at every process count: each config is launched through TRL's own CLI (its parse at world size 1
before `accelerate launch`) and parsed as rank 0 of the launched world (1, 2, 8 and 16 processes, the world size
read by transformers itself), or refused with the nearest batch that launches; `needs` names what the command
imports and reads."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trl_check  # noqa: E402

from pick_a_method.trainers.trl import TRL_VERSION, trl_config  # noqa: E402

MODEL = "Qwen/Qwen3-8B"
METHODS = {
    "grpo": dict(method="grpo"),
    "grpo-g16": dict(method="grpo", knobs={"group_size": 16}),
    "async-icepop": dict(method="async grpo", knobs={"correction": "icepop"}),
    "async-tis": dict(method="async grpo", knobs={"correction": "tis"}),
    "groupwise": dict(method="groupwise_grading"),
    "opd": dict(method="opd", knobs={"teacher": "Qwen/Qwen3-32B"}, tokenizers_match=True),
    "sft": dict(method="sft"),
    "dpo": dict(method="dpo"),
}
LAYOUTS = {"1": (1, 1), "2": (2, 1), "8": (8, 1), "16": (8, 2)}  # processes: (gpus per node, nodes)


def _written_or_fixed(kwargs: dict, batch: int, out: Path) -> tuple[object, int]:
    """The writer's result at ``batch``, or (when refused) at the first batch its fix names. Only groupwise grading
    may be refused, and only where a process would get part of a group."""
    try:
        return trl_config(model=MODEL, batch=batch, out=out, **kwargs), batch
    except ValueError as exc:
        processes = kwargs["gpus"] * kwargs["nodes"]
        group = (kwargs.get("knobs") or {}).get("group_size", 8)
        assert kwargs["method"] == "groupwise_grading" and batch % (group * processes), f"refused: {exc}"
        fix = re.search(r"Fix: batch=(\d+)", str(exc))
        assert fix, f"refused without the nearest batch that works: {exc}"
        assert not out.exists()  # a refusal writes nothing
        fixed = int(fix.group(1))
        return trl_config(model=MODEL, batch=fixed, out=out, **kwargs), fixed


@pytest.mark.parametrize("batch", [32, 64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(METHODS))
def test_every_config_launches_at_its_world_size(name, layout, batch, tmp_path, monkeypatch):
    gpus, nodes = LAYOUTS[layout]
    kwargs = dict(METHODS[name], gpus=gpus, nodes=nodes)
    out = tmp_path / "c.yaml"
    result, batch = _written_or_fixed(kwargs, batch, out)
    values = trl_check.check(result, out, monkeypatch)
    processes = gpus * nodes
    assert values["__world_size__"] == processes
    assert values["per_device_train_batch_size"] * processes * values["gradient_accumulation_steps"] == batch
    if "num_generations" in values and result.command.startswith("trl grpo"):
        assert values["generation_batch_size"] == batch  # one generation per optimizer step, whole groups
        if name == "groupwise":  # each process's slice of a generation holds whole groups (its reward sees groups)
            assert (batch // processes) % values["num_generations"] == 0


@pytest.mark.parametrize("kwargs, batch, processes", [
    (dict(method="grpo", gpus=8), 32, 8),                                  # layouts once written wrong, written now
    (dict(method="grpo", gpus=8, nodes=2), 64, 16),
    (dict(method="grpo", knobs={"group_size": 16}, gpus=8), 64, 8),
    (dict(method="async grpo", knobs={"correction": "icepop"}, gpus=8), 32, 8),
])
def test_the_once_wrong_layouts_launch(kwargs, batch, processes, tmp_path, monkeypatch):
    result = trl_config(model=MODEL, batch=batch, out=tmp_path / "c.yaml", **kwargs)
    values = trl_check.check(result, tmp_path / "c.yaml", monkeypatch)
    assert values["__world_size__"] == processes and values["steps_per_generation"] * processes * \
        values["per_device_train_batch_size"] == batch


def test_the_check_catches_a_generation_batch_left_to_trl(tmp_path, monkeypatch):
    """Without generation_batch_size TRL's launcher derives 4 x 1 x 1 completions at world size 1: not a group."""
    result = trl_config("grpo", model=MODEL, gpus=8, batch=32, out=tmp_path / "c.yaml",
                        overrides={"generation_batch_size": None})
    with pytest.raises(ValueError, match=r"generation_batch_size \(4\) must be divisible by num_generations \(8\)"):
        trl_check.check(result, tmp_path / "c.yaml", monkeypatch)


def test_groupwise_refuses_a_group_split_across_processes():
    with pytest.raises(ValueError, match=r"8 / 2 processes = 4 completions.*Fix: batch=16, or 1 process"):
        trl_config("groupwise_grading", model=MODEL, gpus=2, batch=8)
    assert trl_config("groupwise_grading", model=MODEL, gpus=2, batch=16).config["generation_batch_size"] == 16
    assert trl_config("grpo", model=MODEL, gpus=2, batch=8).config["per_device_train_batch_size"] == 4  # grpo gathers


def test_needs_name_the_packages_and_columns_the_command_uses():
    extras = set(metadata("trl").get_all("Provides-Extra"))

    def packages(result):
        need = next(n for n in result.needs if n.startswith("packages:"))
        spec = re.search(r"trl(?:\[([a-z,-]+)\])?==([0-9.]+)", need)
        assert spec.group(2) == TRL_VERSION
        named = set(filter(None, (spec.group(1) or "").split(",")))
        assert named <= extras, named - extras  # TRL's own extras
        return named

    lora = trl_config("grpo", model=MODEL, dataset="trl-lib/DeepMath-103K", reward_funcs=["accuracy_reward"])
    assert packages(lora) == {"peft", "vllm", "math-verify"}
    columns = next(n for n in lora.needs if n.startswith("dataset columns:"))
    assert "prompt (" in columns and "solution (read by accuracy_reward: " in columns
    # What the column must hold, or accuracy_reward gives no signal (math_verify parses it).
    holds = columns.split("solution (read by accuracy_reward: ", 1)[1]
    assert "math_verify" in holds and "zero signal" in holds and "\\boxed{" in holds
    plain = trl_config("grpo", model=MODEL, lora=False, vllm=False, dataset="d", reward_funcs="my.reward")
    assert packages(plain) == set() and "solution" not in str(plain.needs)
    assert packages(trl_config("sft", model=MODEL)) == {"peft"}
    assert packages(trl_config("grpo", model=MODEL, overrides={"use_peft": False})) == {"vllm"}  # the final config
    assert "prompt (" in str(trl_config("opd", model=MODEL, knobs={"teacher": "Qwen/Qwen3-32B"}).needs)


@pytest.mark.parametrize("overrides", [{"per_device_train_batch_size": 4, "gradient_accumulation_steps": 4},
                                       {"steps_per_generation": 2}, {"generation_batch_size": 128}])
def test_overrides_of_the_batch_layout_still_launch(overrides, tmp_path, monkeypatch):
    """The generation batch is written from the final config (an override of the per-device batch or the accumulation
    moves it) and left to TRL where an override sets it or steps_per_generation (TRL refuses both at once)."""
    out = tmp_path / "c.yaml"
    result = trl_config("grpo", model=MODEL, gpus=2, out=out, overrides=overrides)
    values = trl_check.check(result, out, monkeypatch)
    assert values["__world_size__"] == 2 and values["generation_batch_size"] % values["num_generations"] == 0
    if "per_device_train_batch_size" in overrides:
        assert values["generation_batch_size"] == 4 * 2 * 4


def test_an_override_that_splits_a_group_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ValueError, match=r"3 per device x 2 process\(es\) x 1 accumulation = 6 completions, not whole "
                                         r"groups of 8.*Fix:"):
        trl_config("grpo", model=MODEL, gpus=2, out=tmp_path / "c.yaml",
                   overrides={"per_device_train_batch_size": 3, "gradient_accumulation_steps": 1})
    assert not (tmp_path / "c.yaml").exists()


@pytest.mark.parametrize("overrides", [{"per_device_train_batch_size": 4}, {"generation_batch_size": 24},
                                       {"per_device_train_batch_size": 4, "steps_per_generation": 1}])
def test_groupwise_overrides_that_split_a_group_across_processes_are_refused_and_the_fix_launches(
        overrides, tmp_path, monkeypatch):
    # The whole-groups-per-process rule was once checked before the overrides only, and this config
    # was written (generation_batch_size 8 on 2 processes: 4 rewards a process, the run stopped at step 1).
    kwargs = dict(method="groupwise_grading", model=MODEL, gpus=2, batch=16)
    with pytest.raises(ValueError, match="not whole groups of 8") as err:
        trl_config(**kwargs, overrides=overrides)
    fix = ast.literal_eval(re.search(r"Fix: overrides=(\{[^}]*\})", str(err.value))[1])
    out = tmp_path / "g.yaml"
    result = trl_config(**kwargs, overrides=fix, out=out)
    values = trl_check.check(result, out, monkeypatch)  # TRL's CLI, then GRPOConfig as rank 0 of the 2 processes
    share = values["generation_batch_size"] // values["__world_size__"]  # each process's slice, whole groups
    assert values["__world_size__"] == 2 and share % values["num_generations"] == 0
    assert share == values["per_device_train_batch_size"] * values["steps_per_generation"]
