"""The TRL facts the config writer relies on, each with its source (TRL 1.16.0 on PyPI, read from the package:
``trl/trainer/*_config.py``, ``trl/scripts/*.py``, ``trl/cli/``). Method defaults live in ``methods/defaults.py``.
"""

from __future__ import annotations

# The release whose config classes and CLI the writer targets (and the tests parse with).
TRL_VERSION = "1.16.0"

# `trl <command> --config FILE`: the CLI subcommands that take a YAML config (trl/cli/commands/__init__.py).
GRPO_COMMAND, DISTILLATION_COMMAND = "grpo", "distillation"  # the RL ones; sft and dpo are named as the methods
TRL_COMMANDS = (GRPO_COMMAND, "dpo", "sft", DISTILLATION_COMMAND)

# GRPOConfig.loss_type "dapo" divides the summed token losses by the active tokens of the global accumulated
# batch: the project's GRPO normalization (one token mean over the whole batch). TRL's own GRPO loss is a per-sequence mean.
GRPO_LOSS_TYPE = "dapo"

# GRPOConfig.scale_rewards: "none" = reward minus group mean (Dr. GRPO, the project's default); "group" divides
# by the group's std (TRL adds 1e-4 to it; the project adds GRPO_STD_EPS).
SCALE_NONE, SCALE_GROUP = "none", "group"
TRL_STD_EPS = 1e-4

# DistillationConfig.beta selects the divergence: 0.0 forward KL, 0.5 JSD, 1.0 reverse KL.
DISTILLATION_BETA = {"forward_kl": 0.0, "jsd": 0.5, "reverse_kl": 1.0}

# GRPOConfig.vllm_importance_sampling_mode: "token_mask" zeroes a token whose ratio lies outside
# [clip_min, clip_max] (inclusive keep, like the project's icepop); "token_truncate" clamps it (tis).
IS_MODE = {"icepop": "token_mask", "tis": "token_truncate"}

# Per-device micro-batch the writer aims for (a memory knob, not a method knob): the largest divisor of the
# per-process batch at most this.
PER_DEVICE_BATCH_MAX = 8

# Accelerate configs shipped in trl/accelerate_configs (passed as `--accelerate_config NAME`).
MULTI_GPU_ACCELERATE = "multi_gpu"

# TRL's own extras (trl-1.16.0.dist-info/METADATA, Provides-Extra): what a written key imports. use_peft needs
# peft (trl.trainer.utils.get_peft_config stops without it), use_vllm needs vllm, accuracy_reward math_verify.
EXTRA_PEFT, EXTRA_VLLM, EXTRA_MATH_VERIFY = "peft", "vllm", "math-verify"

# The reward names `trl grpo` resolves itself (trl/scripts/grpo.py reward_funcs_registry): the TRL extra each
# imports and the dataset columns each reads besides the prompt (trl/rewards/accuracy_rewards.py: math_verify's
# parse/verify against the `solution` column).
TRL_REWARDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "accuracy_reward": ((EXTRA_MATH_VERIFY,), ("solution",)),
    "reasoning_accuracy_reward": ((EXTRA_MATH_VERIFY,), ("solution",)),
    "think_format_reward": ((), ()),
    "get_soft_overlong_punishment": ((), ()),
}

# What a reward's column must hold for the reward to carry a signal. accuracy_reward (and reasoning_accuracy_reward)
# parse the column with math_verify's parse() and return None for a row it cannot parse (trl/rewards/
# accuracy_rewards.py: "If gold is not parseable -> return None to skip the example"); the completion's answer is
# read as LaTeX with no unanchored extraction, \boxed first. Checked with math-verify 0.9.0: parse("72"), "0.5",
# "\frac{1}{3}" and a GSM8K worked answer ending "#### 72" (its last number) parse; "Paris" and "B" do not; in a
# completion "\boxed{72}" parses and "The answer is 72" does not.
COLUMN_HOLDS: dict[str, str] = {
    "solution": ("the answer as a number or LaTeX that math_verify parses (72, 0.5, \\frac{1}{3}; in a worked "
                 "solution it takes the last number); a row it cannot parse (words such as Paris, a choice letter such "
                 "as B) gets no reward, so a column of them trains with zero signal; and a completion scores only with "
                 "its answer in LaTeX, e.g. \\boxed{72}"),
}

# GRPOTrainer and DistillationTrainer read the prompts from this column (their train_dataset docs: "It must
# include a column `prompt`"); any other column reaches the reward functions as a keyword argument.
PROMPT_COLUMN = "prompt"

# accelerate's default rendezvous port.
MAIN_PROCESS_PORT = 29500

# DPO: beta 0.1 and the sigmoid loss are the DPO paper's (Rafailov et al. 2023, arXiv:2305.18290) and
# DPOConfig's defaults; SFT/DPO learning rates: 2e-5 full (TRL's SFT examples) / 5e-7 DPO (Zephyr,
# arXiv:2310.16944); with LoRA 1e-4 for SFT (tinker-cookbook) and 5e-6 for DPO (TRL's DPO LoRA examples).
DPO_BETA = 0.1
DPO_LOSS_TYPE = "sigmoid"
SFT_LEARNING_RATE_FULL, SFT_LEARNING_RATE_LORA = 2e-5, 1e-4
DPO_LEARNING_RATE_FULL, DPO_LEARNING_RATE_LORA = 5e-7, 5e-6

# Sequence length for SFT and DPO when not given: a 4k prompt budget plus the RL completion cap (the same
# budget the prime-rl writer uses, methods/defaults.py PRIME_RL_SEQ_LEN).
SFT_MAX_LENGTH = 8192
