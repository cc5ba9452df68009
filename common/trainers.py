"""The trainers a route can name, what their config writers take, and the training defaults they share.

The writers themselves (trainers/prime_rl, trainers/trl, trainers/verl) know each trainer's schema; what is here is
what the router and the server need without importing them: the tool that writes a trainer's config, the
arguments it reads the training data from, its off-policy corrections, and its default GPU count.
"""

from __future__ import annotations

from dataclasses import dataclass

from pick_a_method.common.errors import InputError
from pick_a_method.common.methods import PRIME_RL, TRL, VERL

# Shared by every writer and by the route's cost estimate. 100 steps: SDFT (arXiv:2601.19897) and Zhao et al.
# (arXiv:2601.18734) train that long; 64 rollouts a step: Li et al. (arXiv:2604.13016), Kaur et al.
# (arXiv:2607.05184). A LoRA adapter (arXiv:2106.09685) by default: it fits beside vLLM on the same GPUs.
STEPS = 100
BATCH = 64
LORA = True


@dataclass(frozen=True)
class Trainer:
    name: str
    label: str  # as its project writes its name
    tool: str  # the MCP tool that writes its config (the command line's subcommand is the same, with dashes)
    data: tuple[str, ...]  # the writer's arguments that name the training data, for an RL method
    supervised_data: tuple[str, ...]  # ... for SFT and DPO (only TRL trains them)
    corrections: tuple[str, ...]  # Async's off-policy corrections it has, its default first
    gpus: int  # the writer's default GPU count (per node), with the reason in the comment below
    suffix: str  # the config file's type, as the trainer reads it
    spellings: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return self.tool.replace("_", "-")

    def out_name(self, method: str) -> str:
        """The file a config for `method` is written to when the caller names none, the same in a route's next
        step, the writer's summary and its launch command: "grpo-prime-rl.toml", "async-grpo-trl.yaml"."""
        return f"{'-'.join(method.split())}-{self.name}{self.suffix}"


TRAINERS: dict[str, Trainer] = {t.name: t for t in (
    # prime-rl: inference and trainer on separate devices, so 2 at least (INTELLECT-2, arXiv:2505.07291); ipo is its
    # only off-policy loss ([trainer.loss] type default | ipo | custom, prime-rl 559b44772).
    Trainer(PRIME_RL, "prime-rl", "prime_rl_config", ("taskset",), (), ("ipo",), 2, ".toml", ("primerl", "prime")),
    # TRL: `trl <command>` runs one process unless accelerate is told more; its importance-sampling modes are
    # token_truncate (tis) and token_mask (icepop), GRPOConfig.vllm_importance_sampling_mode, TRL v1.16.0.
    Trainer(TRL, "TRL", "trl_config", ("dataset", "reward_funcs"), ("dataset",), ("tis", "icepop"), 1, ".yaml"),
    # verl: trainer.n_gpus_per_node defaults to 8 (verl/trainer/config/ppo_trainer.yaml, v0.9.1); its rollout
    # correction is token-level truncated or masked importance sampling (algorithm.rollout_correction).
    Trainer(VERL, "verl", "verl_config", ("train_files", "val_files", "reward_function"), (), ("tis", "icepop"), 8, ".yaml"),
)}


def trainer_info(text: str) -> Trainer:
    """The trainer for any spelling ("prime-rl", "prime_rl", "PrimeRL", "trl", "verl"); InputError otherwise."""
    key = text.strip().lower().replace("_", "-") if isinstance(text, str) else ""
    for t in TRAINERS.values():
        if key == t.name or key.replace("-", "") in t.spellings:
            return t
    raise InputError(f"trainer is {text!r}; give one of {', '.join(TRAINERS)}", field="trainer")


def by_tool(tool: str) -> Trainer | None:
    return next((t for t in TRAINERS.values() if t.tool == tool), None)
