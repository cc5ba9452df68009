"""verl_config: every override set is composed onto verl 0.9.1's packaged ppo_trainer config in Hydra's struct mode
(an unknown key fails), its YAML form composes to the same config, verl's own validate_config passes, and its
config dataclasses build on CPU."""

from __future__ import annotations

import re
import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest
from omegaconf import OmegaConf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import verl_check  # noqa: E402

from pick_a_method.trainers.verl import VERL_VERSION, verl_config  # noqa: E402

MODEL = "Qwen/Qwen3-8B"
TEACHER = "Qwen/Qwen3-32B"
_missing = verl_check.verl_missing()  # tests marked needs_verl skip (or fail under CI) without it: conftest.py

needs_verl = pytest.mark.needs_verl

VARIANTS = {
    "grpo": dict(method="grpo"),
    "grpo-std-full": dict(method="grpo", knobs={"normalize_std": True}, lora=False),
    "grpo-g16-2nodes": dict(method="GRPO", knobs={"group_size": 16}, gpus=8, nodes=2, batch=256),
    "grpo-1gpu-data": dict(method="grpo", gpus=1, train_files="~/data/train.parquet", val_files=["a.parquet", "b.parquet"],
                           reward_function="rewards/score.py:compute_score"),
    "async-tis": dict(method="async grpo", knobs={"correction": "tis"}),
    "async-tis-cap": dict(method="async grpo", knobs={"correction": "tis", "cap": 3.0, "off_policy_steps": 2}),
    "async-icepop": dict(method="async grpo", knobs={"correction": "icepop"}),
    "async-icepop-band": dict(method="async", knobs={"method": {"name": "grpo", "group_size": 4}, "correction": "icepop",
                                                     "ratio": (0.8, 1.25)}, batch=32),
    "opd": dict(method="opd", knobs={"teacher": TEACHER}, tokenizers_match=True),
    "opd-forward-topk": dict(method="opd", knobs={"teacher": f"{TEACHER}@http://gpu7:8001/v1", "divergence": "forward_kl",
                                                  "top_k": 16}, teacher_gpus=4),
    "overrides": dict(method="grpo", overrides=[{"key": "trainer.save_freq", "value": 20},
                                                {"key": "actor_rollout_ref.rollout.gpu_memory_utilization", "value": 0.6}]),
}


@needs_verl
@pytest.mark.parametrize("name", list(VARIANTS))
def test_verl_composes_and_validates_every_variant(name, tmp_path):
    kwargs = dict(VARIANTS[name])
    method = kwargs.pop("method")
    out = tmp_path / f"{name.replace('-', '_')}.yaml"
    result = verl_config(method, model=MODEL, out=out, **kwargs)
    cfg = verl_check.check(result, out)
    assert cfg.actor_rollout_ref.model.path == MODEL
    assert cfg.data.train_batch_size * cfg.actor_rollout_ref.rollout.n == kwargs.get("batch", 64)
    assert cfg.trainer.nnodes == kwargs.get("nodes", 1) and cfg.trainer.n_gpus_per_node == kwargs.get("gpus", 8)
    for knob, keys in result.honored.items():
        for key in keys.split(" (")[0].split(", "):
            assert OmegaConf.select(cfg, key) is not None, (knob, key)
    assert set(result.honored).isdisjoint(result.ignored)


@needs_verl
def test_grpo_is_token_mean_grpo(tmp_path):
    result = verl_config("grpo", model=MODEL, out=tmp_path / "g.yaml")
    cfg = verl_check.check(result, tmp_path / "g.yaml")
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.algorithm.norm_adv_by_std_in_grpo is False
    assert cfg.actor_rollout_ref.actor.loss_agg_mode == "token-mean"
    assert cfg.actor_rollout_ref.actor.use_kl_loss is False and cfg.algorithm.use_kl_in_reward is False
    assert cfg.actor_rollout_ref.actor.ppo_mini_batch_size == cfg.data.train_batch_size  # one update per batch
    assert cfg.actor_rollout_ref.rollout.n == 8


@needs_verl
@pytest.mark.parametrize("correction, threshold", [("tis", 2.0), ("icepop", "0.5_5")])
def test_async_is_verl_rollout_correction(correction, threshold, tmp_path):
    from verl.trainer.ppo.rollout_corr_helper import _parse_rollout_is_threshold

    result = verl_config("async grpo", model=MODEL, knobs={"correction": correction}, out=tmp_path / "a.yaml")
    cfg = verl_check.check(result, tmp_path / "a.yaml")
    rc = cfg.algorithm.rollout_correction
    assert rc.rollout_is == "token" and rc.rollout_is_threshold == threshold
    upper, lower = _parse_rollout_is_threshold(rc.rollout_is_threshold)
    assert (lower, upper) == ((None, 2.0) if correction == "tis" else (0.5, 5.0))
    # off_policy_steps 8 keeps lags 0..8; verl's threshold counts the spanned versions (9): test_verl_layouts
    assert cfg.trainer.v1.trainer_mode == "colocate_async" and cfg.trainer.v1.sampler.max_off_policy_threshold == 9
    assert result.honored["off_policy_steps"] == "trainer.v1.sampler.max_off_policy_threshold"


@needs_verl
def test_opd_is_verl_distillation(tmp_path):
    from verl.utils.config import omega_conf_to_dataclass

    result = verl_config("opd", model=MODEL, knobs={"teacher": TEACHER}, tokenizers_match=True, out=tmp_path / "o.yaml")
    cfg = verl_check.check(result, tmp_path / "o.yaml")
    distill = omega_conf_to_dataclass(cfg.distillation)
    assert distill.enabled and distill.distillation_loss.loss_mode == "k1"
    assert distill.distillation_loss.use_policy_gradient and not distill.distillation_loss.use_task_rewards
    assert cfg.distillation.teacher_models.teacher_model.model_path == TEACHER
    assert "top_k" in result.ignored and cfg.actor_rollout_ref.rollout.n == 4


@needs_verl
@pytest.mark.parametrize("key, value", [("algorithm.not_a_key", 1), ("distillation.distillation_loss.loss_mode", "nope"),
                                        ("algorithm.adv_estimator", "nope"),
                                        ("actor_rollout_ref.actor.loss_agg_mode", "nope")])
def test_the_verl_check_itself_rejects_a_bad_config(key, value, tmp_path):
    """Unknown keys fail Hydra's struct mode; bad values fail verl's own checks (so the checks above can fail)."""
    knobs = {"teacher": TEACHER} if key.startswith("distillation") else None
    result = verl_config("opd" if knobs else "grpo", model=MODEL, knobs=knobs, tokenizers_match=True,
                         out=tmp_path / "bad.yaml", overrides={key: value})
    with pytest.raises(Exception):  # noqa: B017 - Hydra, OmegaConf and verl raise their own types
        verl_check.check(result, tmp_path / "bad.yaml")


@pytest.mark.parametrize("method, knobs, match", [
    ("flash_reinforce", {}, "cannot run FlashReinforce: it needs a batch-mean baseline"),
    ("sao", {}, "SAO"), ("bpco", {}, "golden_critic"), ("rae", {}, "EMA"), ("max_rl", {}, "max_rl"),
    ("opsd", {}, "needs self-distillation"), ("groupwise_grading", {}, "trl_config"), ("reinforce_ada", {}, "fixed rollout.n"),
    ("async grpo", {}, "no ipo correction"), ("opd", {"teacher": TEACHER, "divergence": "jsd"}, "no JSD"),
    ("grpo", {"group_size": 1}, "one rollout per prompt"),
])
def test_refusals_say_why_and_what_instead(method, knobs, match):
    with pytest.raises(ValueError, match=match) as info:
        verl_config(method, model=MODEL, knobs=knobs, tokenizers_match=True)
    assert "Fix" in str(info.value)


def test_sft_and_dpo_point_to_trl():
    for name in ("sft", "dpo"):
        with pytest.raises(ValueError, match=f"trl_config\\(method='{name}', model=<model>\\)"):
            verl_config(name, model=MODEL)


def test_needs_batch_and_out(tmp_path):
    bare = verl_config("grpo", model=MODEL)
    assert bare.verdict == "ready" and bare.command.startswith("python -m verl.trainer.main_ppo ")
    assert [n.split(":")[0] for n in bare.needs] == ["train_files", "val_files", "reward_function (optional)", "packages"]
    assert bare.next_step.needs == ["train_files", "val_files"]  # the arguments still placeholders, as verl_config takes them
    assert (bare.config["data"]["train_files"], bare.config["data"]["val_files"]) == ("<train_files>", "<val_files>")
    extras = set(metadata("verl").get_all("Provides-Extra")) if not _missing else {"vllm"}
    assert re.search(r"verl\[([a-z-]+)\]==" + re.escape(VERL_VERSION), bare.needs[-1]).group(1) in extras
    assert "actor_rollout_ref.rollout.n=8" in bare.overrides and "algorithm.adv_estimator=grpo" in bare.overrides
    assert any(n.startswith("a Ray cluster of 2 nodes") for n in verl_config("grpo", model=MODEL, nodes=2).needs)
    with pytest.raises(ValueError, match="multiple of the group size"):
        verl_config("grpo", model=MODEL, batch=60)
    with pytest.raises(ValueError, match="divisible by the 16 GPUs"):
        verl_config("grpo", model=MODEL, gpus=16, batch=8 * 3)
    with pytest.raises(ValueError, match="path/to/file.py:function_name"):
        verl_config("grpo", model=MODEL, reward_function="compute_score")
    target = tmp_path / "v.yaml"
    verl_config("grpo", model=MODEL, out=target)
    with pytest.raises(ValueError, match="already exists"):
        verl_config("grpo", model=MODEL, out=target)
    with pytest.raises(ValueError, match="outside the folders"):
        verl_config("grpo", model=MODEL, out=tmp_path / "w.yaml", allowed_roots=[tmp_path / "nope"])
    written = verl_config("grpo", model=MODEL, out=target, overwrite=True)
    assert written.command.endswith(f"--config-path {tmp_path.resolve()} --config-name v")


@needs_verl
def test_targets_the_installed_verl():
    from importlib.metadata import version

    assert version("verl") == VERL_VERSION, "the writer targets verl 0.9.1; re-check the mapping before moving on"



def _placeholders(value):
    if isinstance(value, dict):
        return [p for v in value.values() for p in _placeholders(v)]
    if isinstance(value, list):
        return [p for v in value for p in _placeholders(v)]
    return [value] if isinstance(value, str) and value.startswith("<") and value.endswith(">") else []


@pytest.mark.parametrize("example", ["mixed", "student"])
def test_route_to_verl_config_filled_in_as_told_leaves_nothing_to_fill(example, tmp_path, monkeypatch):
    # route --trainer verl once listed train_files and reward_function, not val_files; filled in as
    # told, verl's dataloader met <val.parquet>. route's needs, each given a value, now leave no placeholder, and the
    # writer's own next step has nothing left to fill in (it says install, not "Fill in").
    from pick_a_method.routing import read_rows, route

    extra = {"teacher_rows": read_rows("examples/teacher_strong.jsonl")} if example == "student" else {}
    step = route(read_rows(f"examples/{example}.jsonl"), model=MODEL, trainer="verl", **extra).next_step
    assert step.tool == "verl_config" and {"train_files", "val_files"} <= set(step.needs)
    given = {"train_files": str(tmp_path / "train.parquet"), "val_files": str(tmp_path / "val.parquet"),
             "reward_function": "reward.py:compute_score", "model": MODEL}
    args = {**step.arguments, **{need: given[need] for need in step.needs if need in given}}  # the data arguments
    monkeypatch.chdir(tmp_path)  # the step's out, a file name, lands here
    result = verl_config(**args)
    assert _placeholders(result.config) == [] and result.next_step.needs == []
    assert result.next_step.why.startswith("Install the packages") and "again" not in result.next_step.why
    assert result.config["data"]["val_files"] == given["val_files"]
    if not _missing:
        verl_check.compose_overrides(result.overrides)  # verl's own config takes it
