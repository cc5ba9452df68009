"""What each method becomes in TRL 1.16: the `trl` subcommand, the config keys, which knobs TRL honors (and
under which key), which it cannot (and why), and the methods it cannot run at all (refused with the reason and
what to do instead).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.trainers.config_result import Plan, check_teacher_tokenizer, show
from pick_a_method.trainers.plans import Plans
from pick_a_method.trainers.trl import constants as C

# What TRL offers where a method it lacks would go; the refusals are made from the method table with it
# (trainers/plans.py). GRPOConfig: scale_rewards in none/group/batch, num_generations >= 2 (trl/trainer/grpo_config.py).
PLANS: Plans[Callable[..., tuple[str, float]]] = Plans(M.TRL, "trl_config", (
    f"TRL {C.TRL_VERSION}'s GRPOTrainer has one advantage, the reward minus its group's mean (scaled by none, the "
    "group's or the batch's std), from a fixed num_generations per prompt (GRPOConfig refuses fewer than 2)"))


@PLANS.refuses(M.OPSD)
def _opsd(m: MethodInfo) -> str:
    return (f"TRL {C.TRL_VERSION}'s `trl` CLI has no self-distillation command. Its nearest counterpart is the "
            "experimental SDFTTrainer (trl.experimental.sdft: teacher_model_kind base/live/ema, teacher_update_rate, "
            "teacher_prompt_template), an unstable API driven from your own script, not from a config file. Fix: "
            f"use OPSD.update in your own loop, prime_rl_config(method='{m}'), or SDFTTrainer from a script.")


def _grouped(plan: Plan, group_size: int, label: str) -> None:
    if group_size < 2:
        raise ValueError(
            f"{label} with one rollout per prompt trains nothing (every group-relative advantage is 0), and TRL's "
            "GRPOConfig refuses num_generations < 2. Fix: group_size >= "
            f"{D.GROUPED_MIN_USEFUL_GROUP}, or a single-rollout method's update rule in your own loop (FlashReinforce, rae)."
        )
    if group_size < D.GROUPED_MIN_USEFUL_GROUP:
        plan.warnings.append(
            f"group_size {group_size}: with so few rollouts per prompt most groups are unanimous and carry no "
            f"advantage; {D.GROUPED_MIN_USEFUL_GROUP} or more is the usual floor."
        )
    plan.keys.update(
        num_generations=group_size,
        loss_type=C.GRPO_LOSS_TYPE,
        beta=0.0,
        num_iterations=1,
        temperature=D.RL_TEMPERATURE,
        max_completion_length=D.RL_MAX_TOKENS,
    )
    plan.honored["group_size"] = "num_generations"
    plan.notes.append(
        "loss_type 'dapo' divides the summed token losses by the active tokens of the whole accumulated batch: the "
        "project's GRPO normalization (TRL's loss_type of GRPO's name is a per-sequence mean and weighs short replies more)."
    )
    plan.notes.append(
        "beta 0.0: the project's GRPO has no KL term, so no reference model is loaded. num_iterations 1 with one "
        "generation per optimizer step makes the PPO ratio 1, so epsilon's clip never acts: a plain policy gradient."
    )


def _rl_rate(lora: bool) -> float:
    return D.PRIME_RL_LEARNING_RATE_LORA if lora else D.PRIME_RL_LEARNING_RATE_FULL


@PLANS.writes(M.GRPO)
def _grpo(obj: Any, plan: Plan, *, lora: bool, **_: Any) -> tuple[str, float]:
    _grpo_keys(obj, plan)
    return C.GRPO_COMMAND, _rl_rate(lora)


def _grpo_keys(obj: Any, plan: Plan) -> None:
    _grouped(plan, obj.group_size, obj.name)
    plan.keys["scale_rewards"] = C.SCALE_GROUP if obj.normalize_std else C.SCALE_NONE
    plan.honored["normalize_std"] = "scale_rewards"
    if obj.normalize_std:
        plan.warnings.append(
            f"normalize_std: TRL divides by the group std plus {C.TRL_STD_EPS:g}, the project by std plus "
            f"{D.GRPO_STD_EPS:g}; the advantages differ only for groups of near-equal rewards."
        )


@PLANS.writes(M.GROUPWISE_GRADING)
def _groupwise(obj: Any, plan: Plan, *, lora: bool, **_: Any) -> tuple[str, float]:
    _grouped(plan, obj.group_size, obj.name)
    plan.whole_groups_per_process = True  # each process's reward function shapes whole groups
    plan.keys["scale_rewards"] = C.SCALE_NONE  # GAR's values carry the mean TRL subtracts; a std division would bend them
    plan.needs.append(
        "reward_funcs: one reward function that calls GroupwiseGrading(...).shape(rewards, prompts, completions, "
        "group_size=num_generations) on your own rewards (each process's reward function gets its slice of the "
        "generation batch, batch / processes completions in consecutive whole groups: the writer refuses a batch that "
        "splits a group across processes)"
    )
    for knob in ("grader", "mode", "rubrics", "floor", "cap", "min_factor", "hack_zero", "pass_threshold", "concurrency"):
        plan.ignored[knob] = (
            "TRL has no groupwise-grading key: the shaping runs inside the reward function you supply "
            "(GroupwiseGrading.shape), with this knob set on the object."
        )
    plan.notes.append(
        "scale_rewards 'none' is required: GroupwiseGrading's advantage mode returns A' + mean(R), so TRL's group-mean "
        "subtraction recovers A' exactly; a std division would rescale it."
    )
    return C.GRPO_COMMAND, _rl_rate(lora)


@PLANS.writes(M.ASYNC)
def _async(obj: Any, plan: Plan, *, vllm: bool, lora: bool, **_: Any) -> tuple[str, float]:
    inner = obj.inner
    if inner.info is not M.GRPO:
        if inner.info.distill:
            raise ValueError(
                f"TRL {C.TRL_VERSION} has no async {inner.name}: DistillationTrainer samples with the current weights "
                "(on-policy), and the async distillation trainer is experimental with no CLI. Fix: ask for "
                f"method='{inner.name}' without Async (its samples are never stale), or prime_rl_config."
            )
        PLANS.refuse(inner.info)
    if obj.correction == "ipo":
        raise PLANS.no_correction("ipo", f"TRL {C.TRL_VERSION}", {
            "icepop": f"keep tokens with {D.ASYNC_ICEPOP_RATIO[0]:g} <= ratio <= {D.ASYNC_ICEPOP_RATIO[1]:g}: "
                      "vllm_importance_sampling_mode 'token_mask'",
            "tis": f"min(ratio, {D.ASYNC_TIS_CAP:g}): 'token_truncate'"})
    if not vllm:
        raise ValueError(
            "Async's correction acts on vLLM's sampling log-probs (GRPOConfig applies vllm_importance_sampling_* only "
            "with use_vllm), so it needs vllm=True."
        )
    _grpo_keys(inner, plan)
    plan.prefixed("method.")
    mode = C.IS_MODE[obj.correction]
    plan.keys.update(vllm_importance_sampling_correction=True, vllm_importance_sampling_mode=mode)
    plan.honored["correction"] = "vllm_importance_sampling_mode"
    if obj.correction == "icepop":
        low, high = obj.ratio
        plan.keys.update(vllm_importance_sampling_clip_min=low, vllm_importance_sampling_clip_max=high)
        plan.honored["ratio"] = "vllm_importance_sampling_clip_min, vllm_importance_sampling_clip_max"
        plan.ignored["cap"] = "used only by a tis correction; icepop reads ratio."
    else:
        plan.keys.update(vllm_importance_sampling_clip_min=None, vllm_importance_sampling_clip_max=obj.cap)
        plan.honored["cap"] = "vllm_importance_sampling_clip_max"
        plan.ignored["ratio"] = "used only by an icepop correction; tis reads cap."
    plan.ignored["ipo_threshold"] = "used only by an ipo correction, which TRL does not have."
    plan.ignored["off_policy_steps"] = (
        "GRPOTrainer generates with the current weights before every optimizer step (vLLM weights are synced each "
        "generation), so no rollout is stale and any bound holds; the correction still applies to the ratio between "
        "the trainer's and vLLM's log-probs of the same weights. TRL's experimental AsyncGRPOTrainer has a staleness "
        "bound (max_staleness) but none of these corrections and no CLI."
    )
    return C.GRPO_COMMAND, _rl_rate(lora)


@PLANS.writes(M.OPD)
def _opd(obj: Any, plan: Plan, *, model: str, tokenizers_match: Any, lora: bool, **_: Any) -> tuple[str, float]:
    check_teacher_tokenizer(tokenizers_match, obj.teacher, model, plan)
    plan.keys.update(
        teacher_model_name_or_path=obj.teacher,
        beta=C.DISTILLATION_BETA[obj.divergence],
        temperature=obj.temperature,
        max_completion_length=obj.max_tokens,
    )
    plan.honored.update(teacher="teacher_model_name_or_path", divergence="beta", temperature="temperature",
                        max_tokens="max_completion_length", learning_rate="learning_rate")
    if obj.base_url is not None:
        plan.ignored["base_url"] = (
            "TRL's DistillationTrainer loads the teacher's weights itself, next to the student on the training GPUs; "
            "a served teacher is not used."
        )
    plan.ignored["top_k"] = (
        f"DistillationTrainer matches the teacher's full distribution (chunked over the vocabulary), not a top-{obj.top_k} "
        "support: exact where the project's OPD approximates."
    )
    plan.ignored["samples"] = (
        f"DistillationTrainer samples one completion per prompt; for {obj.samples} per prompt, repeat each prompt "
        f"{obj.samples} times in the dataset."
    )
    plan.warnings.append(
        f"The teacher {obj.teacher} is loaded on every training process: it needs GPU memory beside the student."
    )
    return C.DISTILLATION_COMMAND, obj.resolved_learning_rate(lora=lora)


# The knobs TRL's supervised trainers take from a route (its SFTConfig and DPOConfig have many more: use overrides).
_SUPERVISED_KNOBS = {M.SFT: ("learning_rate", "max_length"), M.DPO: ("learning_rate", "max_length", "beta")}


@PLANS.writes(M.SFT, M.DPO)
def _supervised(obj: Any, plan: Plan, *, lora: bool, **_: Any) -> tuple[str, float]:
    """SFT and DPO, TRL's own trainers (no update rule here): their few knobs, the dataset they read."""
    knobs, allowed = obj.knobs, _SUPERVISED_KNOBS[obj.info]
    unknown = sorted(set(knobs) - set(allowed))
    if unknown:
        raise ValueError(f"{obj.name} takes the knobs {', '.join(allowed)}; unknown {unknown}")
    max_length = knobs.get("max_length", C.SFT_MAX_LENGTH)
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise ValueError(f"max_length must be a whole number >= 1 (default {C.SFT_MAX_LENGTH}); got {show(max_length)}")
    plan.keys["max_length"] = max_length
    plan.honored["max_length"] = "max_length"
    if obj.info is M.DPO:
        beta = knobs.get("beta", C.DPO_BETA)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
            raise ValueError(f"beta must be a number > 0 (DPO's KL strength, default {C.DPO_BETA:g}); got {show(beta)}")
        plan.keys.update(beta=float(beta), loss_type=[C.DPO_LOSS_TYPE])
        plan.honored["beta"] = "beta"
        plan.needs.append("dataset columns: prompt, chosen and rejected (a preference dataset: better/worse replies "
                          "to the same prompt)")
        default = C.DPO_LEARNING_RATE_LORA if lora else C.DPO_LEARNING_RATE_FULL
    else:
        plan.needs.append("dataset columns: prompt and completion (or messages), e.g. the passing rows or a stronger "
                          "model's completions")
        default = C.SFT_LEARNING_RATE_LORA if lora else C.SFT_LEARNING_RATE_FULL
    lr = knobs.get("learning_rate", default)
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"learning_rate must be a number > 0; got {show(lr)}")
    plan.honored["learning_rate"] = "learning_rate"
    return obj.name, float(lr)  # TRL's `trl sft` and `trl dpo` commands carry the methods' names


def method_plan(obj: Any, *, model: str, lora: bool, vllm: bool, tokenizers_match: Any) -> tuple[Plan, str, float]:
    """(the plan, the `trl` subcommand, the learning rate); a method TRL cannot run is refused with the fix."""
    plan = Plan(label=obj.full_name)
    command, lr = PLANS.plan_of(obj.info)(obj, plan, model=model, lora=lora, vllm=vllm,
                                          tokenizers_match=tokenizers_match)
    return plan, command, lr
