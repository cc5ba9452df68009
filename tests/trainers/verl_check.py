"""Check a ``verl_config`` result with verl itself: the overrides composed onto verl's packaged ppo_trainer config
with Hydra (struct mode: an unknown key fails), the YAML form composed from its own file and compared, then
verl's own ``validate_config`` (what main_ppo runs before Ray starts), its config dataclasses built, and the
method's names looked up in verl's registries.

verl is installed without its dependencies (``pip install --no-deps verl``: its requirements pin transformers
below the project's); importing it needs ray, tensordict, codetiming and pillow, which the test extra carries.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
from pathlib import Path
from typing import Any

VERL_REQUIRED = os.environ.get("PICK_A_METHOD_REQUIRE_VERL") == "1" or os.environ.get("CI") == "true"


def verl_missing() -> str | None:
    for module in ("verl", "hydra", "omegaconf", "ray", "tensordict"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


def config_dir() -> str:
    return os.path.join(list(importlib.util.find_spec("verl").submodule_search_locations)[0], "trainer", "config")


def compose_overrides(overrides: list[str]) -> Any:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=config_dir(), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def compose_file(path: Path) -> Any:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(path.parent.resolve()), version_base=None):
        return compose(config_name=path.stem)


def overrides_of(command: str) -> list[str]:
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "verl.trainer.main_ppo"], command
    return argv[3:]


def validate(cfg: Any, *, lora: bool) -> None:
    """verl's own checks, then its config dataclasses and registries."""
    from omegaconf import OmegaConf, open_dict

    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.rollout_corr_helper import _parse_rollout_is_threshold
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    checked = cfg
    if lora:
        # validate_config asks vLLM for its largest LoRA rank, and vLLM is a GPU install; everything else is
        # checked with the rank as written, this one call with the rank set aside (checked on the GPU machine).
        checked = OmegaConf.create(OmegaConf.to_container(cfg))
        with open_dict(checked):
            checked.actor_rollout_ref.model.lora_rank = 0
    validate_config(checked, use_reference_policy=need_reference_policy(checked), use_critic=need_critic(checked))
    algo = omega_conf_to_dataclass(cfg.algorithm)
    assert core_algos.get_adv_estimator_fn(algo.adv_estimator) is not None
    assert core_algos.get_policy_loss_fn(cfg.actor_rollout_ref.actor.policy_loss.loss_mode) is not None
    correction = cfg.algorithm.rollout_correction
    if correction.rollout_is is not None:
        _parse_rollout_is_threshold(correction.rollout_is_threshold)
    if cfg.distillation.enabled:
        omega_conf_to_dataclass(cfg.distillation)  # DistillationConfig.__post_init__: loss mode, teacher pool


def check(result: Any, path: Path) -> Any:
    """Every check on a written result; returns the composed config."""
    from omegaconf import OmegaConf

    composed = compose_overrides(result.overrides)
    from_file = compose_file(path)
    plain = OmegaConf.to_container(composed, resolve=False)
    assert OmegaConf.to_container(from_file, resolve=False) == plain
    direct = compose_overrides(overrides_of(" ".join(["python -m verl.trainer.main_ppo",
                                                      *map(shlex.quote, result.overrides)])))
    assert OmegaConf.to_container(direct, resolve=False) == plain
    validate(composed, lora=result.config["actor_rollout_ref"]["model"].get("lora_rank", 0) > 0)
    return composed


def replay_buffer_module(monkeypatch: Any) -> Any:
    """verl's v1 replay buffer (trainer/ppo/v1/replay_buffer.py), where the staleness rule lives, loaded from its
    file: its package's __init__ imports the whole agent loop (vLLM-side packages). TransferQueue, the storage it
    polls, is a GPU-cluster install; when absent a bare module stands in for it (the rule never touches it)."""
    import importlib.util
    import sys
    import types

    if importlib.util.find_spec("transfer_queue") is None:
        stub = types.ModuleType("transfer_queue")
        stub.KVBatchMeta = object
        monkeypatch.setitem(sys.modules, "transfer_queue", stub)
    path = os.path.join(os.path.dirname(config_dir()), "ppo", "v1", "replay_buffer.py")
    spec = importlib.util.spec_from_file_location("verl_v1_replay_buffer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
