"""Nothing dropped in silence: a knob an override removes or changes leaves `honored`
with a warning, so `honored` is true to the file written; and a refusal says which tool fails (prime-rl's loader,
or vLLM / W&B at launch)."""

from __future__ import annotations

import tomllib

import pytest

from primerl_schema_table import check as table_check
from pick_a_method.trainers.prime_rl import prime_rl_config

MODEL = "Qwen/Qwen3-8B"


def _has(config, dotted):
    node = config
    for part in dotted.split("."):
        if isinstance(node, list):
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        if node is None:
            return False
    return True


@pytest.mark.parametrize(("kwargs", "dropped"), [
    ({"max_model_len": 8192, "gpu_memory_utilization": 0.8, "overrides": {"inference": None}},
     {"max_model_len", "gpu_memory_utilization"}),
    ({"eval_split": "test", "overrides": {"orchestrator.eval": None}}, {"eval_split"}),
    ({"eval_taskset": "gsm8k", "overrides": {"orchestrator.eval.source.0.env.taskset.id": "alphabet-sort"}},
     {"eval_taskset"}),
    ({"max_model_len": 8192, "overrides": {"inference.vllm.max_model_len": 4096}}, {"max_model_len"}),
    ({"wandb": {"project": "p"}, "overrides": {"monitors": None}}, {"wandb.project"}),
])
def test_a_knob_an_override_removes_or_changes_is_not_honored_and_warns(kwargs, dropped, tmp_path):
    res = prime_rl_config("reverse-text", "grpo", model=MODEL, out=tmp_path / "rl.toml", **kwargs)
    written = tomllib.loads((tmp_path / "rl.toml").read_text())
    assert dropped.isdisjoint(res.honored) and dropped <= set(res.ignored)
    for knob in dropped:
        assert any(w.startswith(f"{knob} is not in the file") for w in res.warnings), knob
    for knob, where in res.honored.items():  # every honored key that names a place is in the file
        path = where.split(" (", 1)[0].split(",")[0]
        if "(override" not in where and where.split(" (", 1)[0] and path.replace(".", "").replace("_", "").isalnum():
            assert _has(written, path) or path in ("orchestrator.renderer.name", "resume"), (knob, where)
    assert table_check(written) == []


def test_an_override_that_keeps_the_knobs_value_keeps_it_honored():
    res = prime_rl_config("reverse-text", "grpo", model=MODEL, max_model_len=8192,
                          overrides={"inference.vllm.max_model_len": 8192, "inference.vllm.enforce_eager": True})
    assert res.honored["max_model_len"] == "inference.vllm.max_model_len"
    assert not any("is not in the file" in w for w in res.warnings)


@pytest.mark.parametrize(("overrides", "tool"), [
    ({"inference.vllm.gpu_memory_utilization": 1.5}, "vLLM"),
    ({"inference.vllm.max_model_len": 0}, "vLLM"),
    ({"monitors.wandb.project": ""}, "W&B"),
    ({"trainer.optim.lr": 0.0}, "the trainer"),
    ({"slurm": {"job_name": ""}}, "SLURM"),
])
def test_a_value_prime_rl_loads_but_vllm_or_wandb_refuses_says_so(overrides, tool):
    # prime-rl 559b44772's VllmConfig and WandbMonitorConfig take any value of the type (checked with its own classes)
    with pytest.raises(ValueError, match=f"prime-rl v0.8.1.dev67 would load the config, but {tool} would fail on it"):
        prime_rl_config("reverse-text", "grpo", model=MODEL, overrides=overrides)


def test_a_value_prime_rl_refuses_still_says_prime_rl():
    with pytest.raises(ValueError, match="would not load in prime-rl") as err:
        prime_rl_config("reverse-text", "grpo", model=MODEL, overrides={"inference.vllm.dtype": "int4"})
    assert "vLLM would" not in str(err.value)


def test_an_override_of_a_knobs_own_key_stays_honored_as_the_override():
    """slurm={'partition': 'a'} with overrides={'slurm.partition': 'b'}: the file holds 'b', and honored says so
    (it used to move the override's own entry to ignored, warning that the key was not in the file)."""
    r = prime_rl_config("reverse-text", "grpo", model=MODEL, nodes=2, slurm={"partition": "a"},
                        overrides={"slurm.partition": "b"})
    assert tomllib.loads(r.text)["slurm"]["partition"] == "b"
    assert r.honored["slurm.partition"] == "slurm.partition (override, as given)" and "slurm.partition" not in r.ignored
    assert not [w for w in r.warnings if w.startswith("slurm.partition")]


@pytest.mark.parametrize("gpus, missing", [({"inference": 2}, "trainer"), ({}, "inference and trainer"),
                                           ({"inference": None, "trainer": 3}, "inference")])
def test_a_gpu_split_missing_a_side_names_it_and_the_fix(gpus, missing):
    with pytest.raises(ValueError, match=rf"the {missing} GPUs are missing; a split names both\. Fix: gpus="):
        prime_rl_config("reverse-text", "grpo", model=MODEL, gpus=gpus)
