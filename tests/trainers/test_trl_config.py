"""trl_config: every YAML it writes is parsed by TRL 1.16's own `trl` parser (unknown keys fail) and launched through
TRL's CLI up to accelerate's argument parse; the method knobs land where the project's rules say."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trl_check  # noqa: E402

from pick_a_method.methods import make_method  # noqa: E402
from pick_a_method.trainers.trl import TRL_VERSION, trl_config  # noqa: E402

MODEL = "Qwen/Qwen3-8B"
TEACHER = "Qwen/Qwen3-32B"

VARIANTS = {
    "grpo": dict(method="grpo"),
    "grpo-std": dict(method="grpo", knobs={"normalize_std": True}),
    "grpo-g4-8gpu": dict(method="grpo", knobs={"group_size": 4}, gpus=8, batch=128),
    "grpo-2nodes": dict(method="GRPO", gpus=8, nodes=2, batch=256, lora=False),
    "grpo-no-vllm": dict(method="grpo", vllm=False, dataset="trl-lib/DeepMath-103K", reward_funcs=["accuracy_reward"]),
    "grpo-object": dict(method=make_method("grpo", group_size=16), batch=64),
    "async-icepop": dict(method="async grpo", knobs={"correction": "icepop"}),
    "async-icepop-band": dict(method="async", knobs={"correction": "icepop", "ratio": (0.8, 2.0), "method": "grpo"}),
    "async-tis": dict(method="async grpo", knobs={"correction": "tis"}, gpus=4),
    "async-tis-cap": dict(method="async grpo", knobs={"correction": "tis", "cap": 5.0, "off_policy_steps": 2}),
    "groupwise-advantage": dict(method="groupwise_grading"),
    "groupwise-reward": dict(method="GroupwiseGrading", knobs={"mode": "reward", "group_size": 4}, batch=32),
    "opd": dict(method="opd", knobs={"teacher": TEACHER}, tokenizers_match=True),
    "opd-forward": dict(method="opd", knobs={"teacher": f"{TEACHER}@http://gpu7:8001/v1", "divergence": "forward_kl"}),
    "opd-jsd-full": dict(method="opd", knobs={"teacher": TEACHER, "divergence": "jsd", "max_tokens": 2048}, lora=False),
    "sft": dict(method="sft", dataset="./passing_rows"),
    "sft-knobs": dict(method="sft", knobs={"learning_rate": 1e-5, "max_length": 4096}, gpus=2),
    "dpo": dict(method="dpo"),
    "dpo-beta": dict(method="DPO", knobs={"beta": 0.05}, lora=False, gpus=8, batch=64),
    "overrides": dict(method="grpo", overrides=[{"key": "logging_steps", "value": 5},
                                                {"key": "vllm_gpu_memory_utilization", "value": 0.5}]),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_trl_parses_every_variant(name, tmp_path, monkeypatch):
    kwargs = dict(VARIANTS[name])
    method = kwargs.pop("method")
    out = tmp_path / f"{name}.yaml"
    result = trl_config(method, model=MODEL, out=out, **kwargs)
    assert result.verdict == "written" and Path(result.path) == out.resolve()
    values = trl_check.check(result, out, monkeypatch)
    config = result.config
    sub = result.command.split()[1]
    expected_class = {"grpo": "GRPOConfig", "dpo": "DPOConfig", "sft": "SFTConfig", "distillation": "DistillationConfig"}
    assert expected_class[sub] in values["__classes__"]
    # rollouts (or examples) per optimizer step == batch, split across the launched processes
    processes = trl_check.processes_of(trl_check.argv_of(result.command))
    batch = kwargs.get("batch", 64)
    assert config["per_device_train_batch_size"] * processes * config["gradient_accumulation_steps"] == batch
    for knob, key in result.honored.items():
        for k in key.split(" (")[0].split(", "):
            assert k in config, (knob, k)
    assert set(result.honored).isdisjoint(result.ignored)


def test_grpo_maps_the_project_normalization(tmp_path, monkeypatch):
    from trl import GRPOConfig

    result = trl_config("grpo", model=MODEL, out=tmp_path / "g.yaml")
    values = trl_check.check(result, tmp_path / "g.yaml", monkeypatch)
    assert values["loss_type"] == "dapo" and values["scale_rewards"] == "none" and values["beta"] == 0.0
    assert values["num_generations"] == 8 and values["generation_batch_size"] == 64  # one generation per step
    assert values["steps_per_generation"] == values["gradient_accumulation_steps"]
    assert values["vllm_importance_sampling_correction"] is False  # TRL's default correction is not the project's
    assert {"dapo", "grpo"} <= trl_check.documented_values(GRPOConfig, "loss_type")
    assert "none" in trl_check.documented_values(GRPOConfig, "scale_rewards")
    std = trl_config("grpo", model=MODEL, knobs={"normalize_std": True})
    assert std.config["scale_rewards"] == "group" and std.honored["normalize_std"] == "scale_rewards"
    assert "group" in trl_check.documented_values(GRPOConfig, "scale_rewards")


@pytest.mark.parametrize("correction, mode, low, high", [("icepop", "token_mask", 0.5, 5.0), ("tis", "token_truncate", None, 2.0)])
def test_async_corrections_are_trl_is_modes(correction, mode, low, high, tmp_path, monkeypatch):
    from trl import GRPOConfig

    result = trl_config("async grpo", model=MODEL, knobs={"correction": correction}, out=tmp_path / "a.yaml")
    values = trl_check.check(result, tmp_path / "a.yaml", monkeypatch)
    assert values["use_vllm"] is True and values["vllm_importance_sampling_correction"] is True
    assert values["vllm_importance_sampling_mode"] == mode
    assert values["vllm_importance_sampling_clip_min"] == low and values["vllm_importance_sampling_clip_max"] == high
    assert mode in trl_check.documented_values(GRPOConfig, "vllm_importance_sampling_mode")
    assert result.honored["correction"] == "vllm_importance_sampling_mode"
    assert "off_policy_steps" in result.ignored and "ipo_threshold" in result.ignored
    assert result.method == "async grpo" and "method.group_size" in result.honored


def test_opd_is_trl_distillation(tmp_path, monkeypatch):
    result = trl_config("opd", model=MODEL, knobs={"teacher": f"{TEACHER}@http://gpu7:8001/v1"},
                        tokenizers_match=True, out=tmp_path / "d.yaml")
    values = trl_check.check(result, tmp_path / "d.yaml", monkeypatch)
    assert values["teacher_model_name_or_path"] == TEACHER and values["beta"] == 1.0  # reverse KL
    assert {"base_url", "top_k", "samples"} <= set(result.ignored)
    assert result.command.startswith("trl distillation --config ")
    assert [trl_config("opd", model=MODEL, knobs={"teacher": TEACHER, "divergence": d}).config["beta"]
            for d in ("forward_kl", "jsd")] == [0.0, 0.5]
    with pytest.raises(ValueError, match="share a tokenizer"):
        trl_config("opd", model=MODEL, knobs={"teacher": "meta-llama/Llama-3.1-70B"}, tokenizers_match=False)


def test_needs_and_placeholders():
    bare = trl_config("grpo", model=MODEL)
    assert bare.verdict == "ready" and bare.path is None
    assert [n.split(":")[0] for n in bare.needs] == ["dataset", "reward_funcs", "packages", "dataset columns"]
    # The arguments to fill in, as trl_config takes them, are <their name> in the text and
    # the next step's needs (dataset, written as TRL's dataset_name, said once); the install and the column check
    # are not fill-ins, so with everything given the next step says install and check, not "Fill in".
    assert bare.next_step.needs == ["dataset", "reward_funcs"] and "dataset_name" in bare.needs[0]
    assert (bare.config["dataset_name"], bare.config["reward_funcs"]) == ("<dataset>", ["<reward_funcs>"])
    assert bare.next_step.why.startswith("Call trl_config again with dataset=... and reward_funcs=...")
    full = trl_config("grpo", model=MODEL, dataset="trl-lib/DeepMath-103K", reward_funcs="my_rewards.exact_match")
    assert [n.split(":")[0] for n in full.needs] == ["packages", "dataset columns"]
    assert full.next_step.needs == [] and "fill" not in full.next_step.why.lower()
    assert "install the packages" in full.next_step.why and "check that the dataset has the columns" in full.next_step.why
    for method in ("sft", "dpo"):  # their column need is a check too
        given = trl_config(method, model=MODEL, dataset="my/data")
        assert given.next_step.needs == [] and any(n.startswith("dataset columns:") for n in given.needs)
        assert trl_config(method, model=MODEL).next_step.needs == ["dataset"]
    assert full.config["reward_funcs"] == ["my_rewards.exact_match"]
    two = trl_config("grpo", model=MODEL, gpus=8, nodes=2, batch=128)
    assert any(n.startswith("MACHINE_RANK") for n in two.needs)
    assert "--num_processes 16 --num_machines 2" in two.command
    assert "reward_funcs" in trl_config("sft", model=MODEL, reward_funcs=["x.y"]).warnings[0]


@pytest.mark.parametrize("method, knobs, match", [
    ("flash_reinforce", {}, "cannot run FlashReinforce"),
    ("sao", {}, "SAO"),
    ("bpco", {}, "BPCO"),
    ("rae", {}, "EMA baseline"),
    ("max_rl", {}, r"\(R - mean\)/mean per group"),
    ("opsd", {}, "SDFTTrainer"),
    ("reinforce_ada", {}, "adaptive sampling"),
    ("async grpo", {}, "no ipo correction"),
    ("async", {"method": "rae"}, "EMA baseline"),
    ("async", {"method": {"name": "opd", "teacher": TEACHER}, "correction": "tis"}, "no async opd"),
    ("grpo", {"group_size": 1}, "one rollout per prompt"),
    ("sft", {"beta": 0.1}, "unknown"),
])
def test_refusals_say_why_and_what_instead(method, knobs, match):
    with pytest.raises(ValueError, match=match) as info:
        trl_config(method, model=MODEL, knobs=knobs)
    assert "Fix" in str(info.value) or "unknown" in str(info.value)


def test_bad_arguments_name_the_fix(tmp_path):
    with pytest.raises(ValueError, match="model is required"):
        trl_config("grpo")
    with pytest.raises(ValueError, match="multiple of the group size"):
        trl_config("grpo", model=MODEL, batch=60)
    with pytest.raises(ValueError, match="divisible by the 3 training processes"):
        trl_config("grpo", model=MODEL, gpus=3, batch=64)
    with pytest.raises(ValueError, match="needs vllm=True"):
        trl_config("async grpo", model=MODEL, knobs={"correction": "tis"}, vllm=False)
    with pytest.raises(ValueError, match=r"\.yaml"):
        trl_config("grpo", model=MODEL, out=tmp_path / "x.toml")
    with pytest.raises(ValueError, match="overrides"):
        trl_config("grpo", model=MODEL, overrides=[{"k": 1}])


def test_out_never_clobbers_and_stays_inside_the_roots(tmp_path):
    target = tmp_path / "grpo.yaml"
    target.write_text("mine\n")
    with pytest.raises(ValueError, match="already exists"):
        trl_config("grpo", model=MODEL, out=target)
    assert target.read_text() == "mine\n"
    written = trl_config("grpo", model=MODEL, out=target, overwrite=True)
    assert target.read_text() == written.text and str(target.resolve()) in written.command
    with pytest.raises(ValueError, match="outside the folders"):
        trl_config("grpo", model=MODEL, out=tmp_path / "g2.yaml", allowed_roots=[tmp_path / "elsewhere"])
    assert not (tmp_path / "g2.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grpo.yaml"]  # no temporary file left behind


def test_override_of_a_method_key_is_flagged():
    result = trl_config("grpo", model=MODEL, overrides={"loss_type": "grpo"})
    assert result.config["loss_type"] == "grpo" and result.honored["loss_type"].endswith("(override, as given)")
    assert any("no longer trains grpo" in w for w in result.warnings)
    assert "use_peft" not in trl_config("grpo", model=MODEL, overrides={"use_peft": None, "lora_r": None,
                                                                         "lora_alpha": None}).config


def test_targets_the_installed_trl():
    import trl

    assert trl.__version__ == TRL_VERSION, "the writer targets TRL 1.16.0; re-check the mapping before moving on"


@pytest.mark.parametrize("key, value", [("not_a_trl_key", 1), ("num_generations", "eight"), ("learning_rate", [1, 2])])
def test_the_trl_check_itself_rejects_a_bad_config(key, value, tmp_path, monkeypatch):
    """The parse is TRL's: an unknown key or a value of the wrong type fails (so the checks above can fail)."""
    result = trl_config("grpo", model=MODEL, out=tmp_path / "bad.yaml", overrides={key: value})
    with pytest.raises((ValueError, TypeError, SystemExit)):
        trl_check.check(result, tmp_path / "bad.yaml", monkeypatch)


@pytest.mark.parametrize("example", ["mixed", "off_policy"])
def test_route_to_trl_config_filled_in_as_told_leaves_nothing_to_fill(example, tmp_path, monkeypatch):
    # route names trl_config's own arguments; given, the writer has nothing left to fill in.
    from pick_a_method.routing import read_rows, route

    step = route(read_rows(f"examples/{example}.jsonl"), model=MODEL, trainer="trl").next_step
    given = {"dataset": "my-org/refunds", "reward_funcs": ["my_rewards.refund_ok"]}
    monkeypatch.chdir(tmp_path)  # the step's out, a file name, lands here
    result = trl_config(**{**step.arguments, **{need: given[need] for need in step.needs}})
    assert result.next_step.needs == [] and "<" not in result.config["dataset_name"]
    assert not any(str(v).startswith("<") for v in result.config.get("reward_funcs", []))
