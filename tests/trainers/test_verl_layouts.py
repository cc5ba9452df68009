"""verl_config at several GPU and node counts, each config composed and validated by verl itself (Hydra + the
validate_config that main_ppo runs, the distillation pool check); Async's staleness measured with verl's own replay
buffer rule; OPD's teacher pool checked against verl's replica rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import verl_check  # noqa: E402

from pick_a_method.trainers.verl import verl_config  # noqa: E402

MODEL, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"
pytestmark = pytest.mark.needs_verl  # skipped (or failed under CI) without verl: conftest.py


METHODS = {
    "grpo": dict(method="grpo"),
    "async-tis": dict(method="async grpo", knobs={"correction": "tis"}),
    "async-icepop-on-policy": dict(method="async grpo", knobs={"correction": "icepop", "off_policy_steps": 0}),
    "opd": dict(method="opd", knobs={"teacher": TEACHER}, tokenizers_match=True),
    "opd-forward": dict(method="opd", knobs={"teacher": TEACHER, "divergence": "forward_kl"}, tokenizers_match=True,
                        teacher_gpus=4),
}
LAYOUTS = {"1x1": (1, 1), "8x1": (8, 1), "8x2": (8, 2), "4x4": (4, 4)}  # gpus per node x nodes


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(METHODS))
def test_main_ppo_validates_every_method_at_every_layout(name, layout):
    gpus, nodes = LAYOUTS[layout]
    kwargs = dict(METHODS[name])
    result = verl_config(kwargs.pop("method"), model=MODEL, gpus=gpus, nodes=nodes, batch=128, **kwargs)
    cfg = verl_check.compose_overrides(result.overrides)
    verl_check.validate(cfg, lora=True)
    assert (cfg.trainer.n_gpus_per_node, cfg.trainer.nnodes) == (gpus, nodes)
    assert cfg.data.train_batch_size * cfg.actor_rollout_ref.rollout.n == 128


@pytest.mark.parametrize("steps", [0, 1, 8])
def test_off_policy_steps_means_the_same_lag_in_verl(steps, monkeypatch):
    """Async keeps rollouts up to off_policy_steps versions behind; verl's own rule, run on the written threshold."""
    result = verl_config("async grpo", model=MODEL, knobs={"correction": "tis", "off_policy_steps": steps})
    cfg = verl_check.compose_overrides(result.overrides)
    verl_check.validate(cfg, lora=True)
    buffers = verl_check.replay_buffer_module(monkeypatch)
    if steps == 0:  # on-policy: verl's sync trainer, whose buffer drops nothing for staleness
        assert cfg.trainer.v1.trainer_mode == "sync" and result.honored["off_policy_steps"] == "trainer.v1.trainer_mode"
        assert any("on-policy" in n for n in result.notes)
        threshold, strategy = 1, "drop"  # and the async trainer's equivalent, N + 1 = 1, keeps lag 0 alone too
    else:
        sampler = cfg.trainer.v1.sampler
        assert cfg.trainer.v1.trainer_mode == "colocate_async" and sampler.max_off_policy_strategy == "drop"
        threshold, strategy = sampler.max_off_policy_threshold, sampler.max_off_policy_strategy
    buffer = buffers.ReplayBufferAsync(trainer_mode="colocate_async", trainer_config={},
                                       max_off_policy_threshold=threshold, max_off_policy_strategy=strategy,
                                       sampler_kwargs={})
    kept = []
    for lag in range(steps + 3):  # a finished rollout submitted `lag` steps before the trainer's current one
        buffer.finished_keys["train"] = {"uid"}
        buffer.prompt_global_steps["train"] = {"uid": 100 - lag}
        if not buffer._stale_terminal_keys(100, "train"):
            kept.append(lag)
    assert kept == list(range(steps + 1))


@pytest.mark.parametrize("teacher_gpus", [1, 2, 3, 4, 6])
def test_teacher_gpus_follow_verl_replica_rule(teacher_gpus):
    from verl.utils.config import omega_conf_to_dataclass

    kwargs = dict(model=MODEL, knobs={"teacher": TEACHER}, tokenizers_match=True)
    if teacher_gpus % 2 == 0:  # verl's teacher replica: tensor parallel 2
        cfg = verl_check.compose_overrides(verl_config("opd", teacher_gpus=teacher_gpus, **kwargs).overrides)
        assert omega_conf_to_dataclass(cfg.distillation).teacher_models["default"].num_replicas == teacher_gpus // 2
        return
    with pytest.raises(ValueError, match=r"replica size, 2 GPU") as info:
        verl_config("opd", teacher_gpus=teacher_gpus, **kwargs)
    fixes = [int(n) for n in re.findall(r"teacher_gpus=(\d+)", str(info.value))]
    assert fixes and all(verl_config("opd", teacher_gpus=n, **kwargs) for n in fixes)
    # verl refuses the same pool: the good config with the pool set to the refused count
    good = verl_config("opd", teacher_gpus=2, **kwargs).overrides
    bad = [o if not o.startswith("distillation.n_gpus_per_node=") else f"distillation.n_gpus_per_node={teacher_gpus}"
           for o in good]
    with pytest.raises(Exception, match="must divide the distillation resource pool"):  # noqa: B017 - Hydra wraps it
        omega_conf_to_dataclass(verl_check.compose_overrides(bad).distillation)
    # a teacher of tensor parallel 1 fits any pool, and the writer reads the override
    one = verl_config("opd", teacher_gpus=teacher_gpus, overrides={
        "distillation.teacher_models.teacher_model.inference.tensor_model_parallel_size": 1}, **kwargs)
    omega_conf_to_dataclass(verl_check.compose_overrides(one.overrides).distillation)


def test_a_teacher_pool_set_by_an_override_is_refused_naming_the_override_and_its_fix():
    """teacher_gpus=2 with overrides={'distillation.n_gpus_per_node': 3}: the override set the pool, so the fix is an
    override (saying teacher_gpus=2, what the caller already passed, fixed nothing); the fix then validates."""
    from verl.utils.config import omega_conf_to_dataclass

    kwargs = dict(model=MODEL, knobs={"teacher": TEACHER}, tokenizers_match=True, teacher_gpus=2)
    with pytest.raises(ValueError, match=r"set by overrides of distillation\.n_gpus_per_node.*Fix: overrides=") as err:
        verl_config("opd", overrides={"distillation.n_gpus_per_node": 3}, **kwargs)
    fixed = int(re.search(r"Fix: overrides=\{'distillation\.n_gpus_per_node': (\d+)\}", str(err.value)).group(1))
    cfg = verl_check.compose_overrides(
        verl_config("opd", overrides={"distillation.n_gpus_per_node": fixed}, **kwargs).overrides)
    assert omega_conf_to_dataclass(cfg.distillation).teacher_models["default"].num_replicas == fixed // 2
