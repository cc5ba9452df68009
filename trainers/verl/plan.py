"""What each method becomes in verl 0.9.1's ``main_ppo``: the Hydra keys, which knobs verl honors (and where),
which it cannot (and why), and the methods it cannot run (refused with the reason and what to do instead).

Facts read from the verl 0.9.1 wheel: ``trainer/config/*.yaml``, ``trainer/ppo/core_algos.py`` (advantage
estimators, policy losses, ``agg_loss``), ``trainer/ppo/rollout_corr_helper.py`` (rollout correction) and
``workers/config/distillation.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pick_a_method.common import methods as M
from pick_a_method.methods import defaults as D
from pick_a_method.trainers.config_result import Plan, check_teacher_tokenizer
from pick_a_method.trainers.plans import Plans
from pick_a_method.trainers.verl.constants import (ACTOR, ADV_ESTIMATOR, ASYNC_MODE, CORRECTION, DISTILL,
                                                  LOSS_AGG_MODE, ROLLOUT, SYNC_MODE, TEACHER, THRESHOLD_OVER_LAG,
                                                  VERL_VERSION)

# What verl offers where a method it lacks would go; the refusals are made from the method table with it
# (trainers/plans.py). Its estimators: AdvantageEstimator in verl/trainer/ppo/core_algos.py (v0.9.1).
PLANS: Plans[Callable[..., float]] = Plans(M.VERL, "verl_config", (
    f"verl {VERL_VERSION}'s main_ppo has only its registered advantage estimators and policy losses (grpo, "
    "reinforce_plus_plus_baseline, gae, ...; @register_adv_est adds one in a fork), a reward function per sample, "
    "a fixed rollout.n per prompt, and distillation from a separate teacher model"))


def _rl_rate(lora: bool) -> float:
    return D.PRIME_RL_LEARNING_RATE_LORA if lora else D.PRIME_RL_LEARNING_RATE_FULL


def _grouped(plan: Plan, group_size: int) -> None:
    if group_size < 2:
        raise ValueError(
            "grpo with one rollout per prompt trains nothing in the project's terms (a group of one carries no "
            "advantage; verl would even feed the raw score as the advantage). Fix: group_size >= "
            f"{D.GROUPED_MIN_USEFUL_GROUP}, or a single-rollout method's update rule in your own loop."
        )
    if group_size < D.GROUPED_MIN_USEFUL_GROUP:
        plan.warnings.append(
            f"group_size {group_size}: with so few rollouts per prompt most groups are unanimous and carry no "
            f"advantage; {D.GROUPED_MIN_USEFUL_GROUP} or more is the usual floor."
        )


@PLANS.writes(M.GRPO)
def _grpo(obj: Any, plan: Plan, *, lora: bool, **_: Any) -> float:
    _grpo_keys(obj, plan)
    return _rl_rate(lora)


def _grpo_keys(obj: Any, plan: Plan) -> None:
    _grouped(plan, obj.group_size)
    plan.keys.update({
        "algorithm.adv_estimator": ADV_ESTIMATOR,
        "algorithm.norm_adv_by_std_in_grpo": obj.normalize_std,
        "algorithm.use_kl_in_reward": False,
        f"{ACTOR}.use_kl_loss": False,
        f"{ACTOR}.entropy_coeff": 0,
        f"{ACTOR}.loss_agg_mode": LOSS_AGG_MODE,
        f"{ACTOR}.policy_loss.loss_mode": "vanilla",
        f"{ROLLOUT}.n": obj.group_size,
        f"{ROLLOUT}.temperature": D.RL_TEMPERATURE,
        "data.max_response_length": D.RL_MAX_TOKENS,
    })
    plan.honored.update(group_size=f"{ROLLOUT}.n", normalize_std="algorithm.norm_adv_by_std_in_grpo")
    plan.notes.append(
        "loss_agg_mode token-mean divides the masked token sum by the global token count: the project's GRPO "
        "normalization. With ppo_mini_batch_size = train_batch_size and ppo_epochs 1 there is one update per batch, "
        "so the PPO ratio is 1 and the clip never acts: a plain policy gradient. No KL (use_kl_loss, use_kl_in_reward "
        "false), as in the project's GRPO; with normalize_std verl divides by the unbiased std plus 1e-6, the project's eps."
    )


@PLANS.writes(M.ASYNC)
def _async(obj: Any, plan: Plan, *, lora: bool, **_: Any) -> float:
    inner = obj.inner
    if inner.info is not M.GRPO:
        if inner.info is M.OPD:
            raise ValueError(
                "verl_config writes async grpo only; OPD in verl samples on-policy from the student. Fix: "
                f"method='{M.OPD}' without Async, or prime_rl_config for async OPD."
            )
        PLANS.refuse(inner.info)
    if obj.correction == "ipo":
        raise PLANS.no_correction("ipo", f"verl {VERL_VERSION}", {
            "tis": f"rollout_is 'token', threshold {D.ASYNC_TIS_CAP:g}: verl's own default",
            "icepop": f"threshold '{D.ASYNC_ICEPOP_RATIO[0]:g}_{D.ASYNC_ICEPOP_RATIO[1]:g}'"})
    _grpo_keys(inner, plan)
    plan.prefixed("method.")
    plan.keys[f"{CORRECTION}.rollout_is"] = "token"
    plan.honored["correction"] = f"{CORRECTION}.rollout_is, {CORRECTION}.rollout_is_threshold"
    if obj.correction == "tis":
        plan.keys[f"{CORRECTION}.rollout_is_threshold"] = obj.cap
        plan.honored["cap"] = f"{CORRECTION}.rollout_is_threshold"
        plan.ignored["ratio"] = "used only by an icepop correction; tis reads cap."
    else:
        low, high = obj.ratio
        plan.keys[f"{CORRECTION}.rollout_is_threshold"] = f"{low:g}_{high:g}"  # verl's "lower_upper" IcePop spec
        plan.honored["ratio"] = f"{CORRECTION}.rollout_is_threshold"
        plan.ignored["cap"] = "used only by a tis correction; icepop reads ratio."
    plan.ignored["ipo_threshold"] = "used only by an ipo correction, which verl does not have."
    if obj.off_policy_steps == 0:  # no stale rollout at all: verl's on-policy trainer, the correction kept
        plan.keys["trainer.v1.trainer_mode"] = SYNC_MODE
        plan.honored["off_policy_steps"] = "trainer.v1.trainer_mode"
        plan.notes.append("off_policy_steps 0 is on-policy: verl's sync trainer (trainer.v1.trainer_mode sync) "
                          "generates every batch with the current weights, so no rollout is stale; the rollout "
                          "correction still applies to vLLM's and the trainer's log-probs of the same weights. "
                          "(verl's async trainer at threshold 1 would keep the same lag 0 alone, through a replay "
                          "buffer the sync trainer does without.)")
        return _rl_rate(lora)
    threshold = obj.off_policy_steps + THRESHOLD_OVER_LAG
    plan.keys.update({"trainer.v1.trainer_mode": ASYNC_MODE,
                      "trainer.v1.sampler.max_off_policy_threshold": threshold,
                      "trainer.v1.sampler.max_off_policy_strategy": "drop"})
    plan.honored["off_policy_steps"] = "trainer.v1.sampler.max_off_policy_threshold"
    plan.notes.append(f"max_off_policy_threshold {threshold} = off_policy_steps + 1: verl counts the versions a "
                      f"rollout spans, its own included, so {threshold} keeps rollouts up to {obj.off_policy_steps} "
                      "versions behind, as off_policy_steps means on every trainer.")
    return _rl_rate(lora)


@PLANS.writes(M.OPD)
def _opd(obj: Any, plan: Plan, *, model: str, tokenizers_match: Any, teacher_gpus: int, lora: bool) -> float:
    check_teacher_tokenizer(tokenizers_match, obj.teacher, model, plan)
    if obj.divergence == "jsd":
        raise ValueError(
            f"verl {VERL_VERSION}'s distillation losses are reverse-KL estimators (k1, k3, ...) on the sampled token and "
            f"forward_kl_topk; it has no JSD. Fix: divergence='reverse_kl' or 'forward_kl', or trl_config(method='{M.OPD}') "
            "(TRL's DistillationTrainer has the JSD)."
        )
    reverse = obj.divergence == "reverse_kl"
    plan.keys.update({
        f"{DISTILL}.enabled": True,
        f"{TEACHER}.model_path": obj.teacher,
        f"{DISTILL}.distillation_loss.loss_mode": "k1" if reverse else "forward_kl_topk",
        f"{DISTILL}.distillation_loss.use_policy_gradient": reverse,
        f"{DISTILL}.distillation_loss.use_task_rewards": False,
        f"{DISTILL}.nnodes": 1,
        f"{DISTILL}.n_gpus_per_node": teacher_gpus,
        "algorithm.adv_estimator": ADV_ESTIMATOR,
        f"{ACTOR}.use_kl_loss": False,
        f"{ACTOR}.loss_agg_mode": LOSS_AGG_MODE,
        f"{ROLLOUT}.n": obj.samples,
        f"{ROLLOUT}.temperature": obj.temperature,
        "data.max_response_length": obj.max_tokens,
    })
    plan.honored.update(teacher=f"{TEACHER}.model_path", divergence=f"{DISTILL}.distillation_loss.loss_mode",
                        samples=f"{ROLLOUT}.n", temperature=f"{ROLLOUT}.temperature",
                        max_tokens="data.max_response_length", learning_rate=f"{ACTOR}.optim.lr")
    if reverse:
        plan.ignored["top_k"] = (
            "verl's reverse KL is the sampled-token estimator k1 used as a policy-gradient advantage (as prime-rl's opd), "
            f"not a sum over the teacher's top-{obj.top_k}; only forward_kl_topk reads a top-k."
        )
    else:
        plan.keys[f"{DISTILL}.distillation_loss.topk"] = obj.top_k
        plan.honored["top_k"] = f"{DISTILL}.distillation_loss.topk"
    if obj.base_url is not None:
        plan.ignored["base_url"] = (
            f"verl starts the teacher itself on its own resource pool ({DISTILL}.nnodes x n_gpus_per_node = "
            f"{teacher_gpus} GPU(s)); a served teacher is not used."
        )
    plan.notes.append(f"The teacher runs on {teacher_gpus} GPU(s) beside the training GPUs (verl's tensor parallel 2 per "
                      "teacher replica by default); use_task_rewards false trains on the teacher signal alone.")
    return obj.resolved_learning_rate(lora=lora)


def method_plan(obj: Any, *, model: str, tokenizers_match: Any, teacher_gpus: int, lora: bool) -> tuple[Plan, float]:
    """(the plan, the learning rate); a method verl cannot run is refused with the reason and the fix."""
    plan = Plan(label=obj.full_name)
    lr = PLANS.plan_of(obj.info)(obj, plan, model=model, tokenizers_match=tokenizers_match, teacher_gpus=teacher_gpus,
                                 lora=lora)
    return plan, lr
