"""The verl facts the writer relies on (version, key prefixes, the async mode, the teacher's replica), each with
its source in the verl 0.9.1 wheel. Plain constants: the options model (options.py) reads the teacher pool's
default from here without loading the writer."""

from __future__ import annotations

import math

VERL_VERSION = "0.9.1"

ACTOR = "actor_rollout_ref.actor"
ROLLOUT = "actor_rollout_ref.rollout"
CORRECTION = "algorithm.rollout_correction"
DISTILL = "distillation"
TEACHER = "distillation.teacher_models.teacher_model"

# verl's advantage estimator for GRPO and for the distillation block's policy gradient (core_algos.py
# AdvantageEstimator.GRPO).
ADV_ESTIMATOR = "grpo"

# agg_loss "token-mean": the masked token sum over the global token count, the project's GRPO normalization.
LOSS_AGG_MODE = "token-mean"

# ``trainer.v1.trainer_mode``: "colocate_async" overlaps rollout and training on the same GPUs and drops rollouts
# older than trainer.v1.sampler.max_off_policy_threshold model versions ("drop" strategy); "sync" (the packaged
# default) generates each batch with the current weights: on-policy.
ASYNC_MODE, SYNC_MODE = "colocate_async", "sync"

# verl's threshold counts the model versions a trajectory spans, the one it was submitted under included:
# ReplayBufferAsync._stale_terminal_keys drops it when global_steps - submitted_at + 1 > threshold
# (trainer/ppo/v1/replay_buffer.py), so a threshold T keeps lags 0..T-1. Async's off_policy_steps N keeps lags
# 0..N on every trainer, so verl gets T = N + 1. verl refuses T < 1 (ReplayBuffer.__init__).
THRESHOLD_OVER_LAG = 1

# The teacher's inference replica: tensor x data x pipeline parallel sizes, verl's distillation.yaml defaults
# (2, 1, 1). DistillationConfig._resolve_teacher_models refuses a pool its replica size does not divide.
TEACHER_INFERENCE = f"{TEACHER}.inference"
TEACHER_REPLICA_SIZES = {"tensor_model_parallel_size": 2, "data_parallel_size": 1, "pipeline_model_parallel_size": 1}
# The teacher pool's GPUs by default: one replica of those sizes.
TEACHER_GPUS = math.prod(TEACHER_REPLICA_SIZES.values())
