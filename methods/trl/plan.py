"""What each method becomes in TRL 1.16: the `trl` subcommand, the config keys, which knobs TRL honors (and
under which key), which it cannot (and why), and the methods it cannot run at all (refused with the reason and
what to do instead).
"""

from __future__ import annotations

from typing import Any

from pick_a_method.methods import defaults as D
from pick_a_method.methods.config_result import Plan, check_teacher_tokenizer, placeholder, show
from pick_a_method.methods.trl import constants as C

TRAINER_METHODS = ("sft", "dpo")  # trainer-level methods with no method object

_SINGLE = (
    "Upstream TRL {v} has no trainer for {label} {needs}: GRPOTrainer's advantage is group-relative (zero with one "
    "rollout per prompt, and GRPOConfig refuses num_generations < 2). Writing the nearest GRPO config under "
    "{label}'s name would train a different method. Fix: run {label}'s own update rule in your loop "
    "(methods.make_method({name!r}).update(batch) gives per-token coefficients; subclass GRPOTrainer and use them "
    "in _compute_loss), or ask for method='grpo' with group_size >= {g}, which is a different method."
)
_REFUSED = {
    "flash_reinforce": ("FlashReinforce", "(a batch-mean baseline and a sequence trust gate)"),
    "sao": ("SAO", "(a value critic with length-adaptive GAE)"),
    "bpco": ("BPCO", "(a bounded value critic and a clipped DPPO step)"),
    "rae": ("rae", "(a per-agent EMA baseline)"),
}


def refuse(name: str) -> None:
    v = C.TRL_VERSION
    if name in _REFUSED:
        label, needs = _REFUSED[name]
        raise ValueError(_SINGLE.format(v=v, label=label, needs=needs, name=name, g=D.GROUPED_MIN_USEFUL_GROUP))
    if name == "max_rl":
        raise ValueError(
            f"TRL {v} has no max_rl advantage ((R - mean)/mean per group): GRPOConfig.scale_rewards offers only none, "
            "group (std) and batch. Fix: run MaxRL.update in your own loop (or override GRPOTrainer's advantage), or "
            "ask for method='grpo', which is a different advantage (reward minus group mean)."
        )
    if name == "opsd":
        raise ValueError(
            f"TRL {v}'s `trl` CLI has no self-distillation command. Its nearest counterpart is the experimental "
            "SDFTTrainer (trl.experimental.sdft: teacher_model_kind base/live/ema, teacher_update_rate, "
            "teacher_prompt_template), an unstable API driven from your own script, not from a config file. Fix: "
            "use OPSD.update in your own loop, prime_rl_config(method='opsd'), or SDFTTrainer from a script."
        )
    if name == "reinforce_ada":
        raise ValueError(
            f"TRL {v} has no adaptive sampling: ReinforceAda keeps drawing rollouts for a prompt until its group "
            "splits, and GRPOTrainer draws a fixed num_generations. Fix: ask for method='grpo' with a larger group "
            "(knobs={'group_size': 16}), or run ReinforceAda in your own sampler."
        )
    raise ValueError(f"trl_config writes grpo, async grpo, groupwise_grading, opd, sft and dpo; {name!r} is not one.")


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
        "project's GRPO normalization (TRL's 'grpo' loss_type is a per-sequence mean and weighs short replies more)."
    )
    plan.notes.append(
        "beta 0.0: the project's GRPO has no KL term, so no reference model is loaded. num_iterations 1 with one "
        "generation per optimizer step makes the PPO ratio 1, so epsilon's clip never acts: a plain policy gradient."
    )


def _grpo(obj: Any, plan: Plan) -> None:
    _grouped(plan, obj.group_size, "grpo")
    plan.keys["scale_rewards"] = C.SCALE_GROUP if obj.normalize_std else C.SCALE_NONE
    plan.honored["normalize_std"] = "scale_rewards"
    if obj.normalize_std:
        plan.warnings.append(
            f"normalize_std: TRL divides by the group std plus {C.TRL_STD_EPS:g}, the project by std plus "
            f"{D.GRPO_STD_EPS:g}; the advantages differ only for groups of near-equal rewards."
        )


def _groupwise(obj: Any, plan: Plan) -> None:
    _grouped(plan, obj.group_size, "groupwise_grading")
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


def _async(obj: Any, plan: Plan, *, vllm: bool) -> None:
    inner = obj.inner
    if inner.name != "grpo":
        if inner.name in ("opd", "opsd"):
            raise ValueError(
                f"TRL {C.TRL_VERSION} has no async {inner.name}: DistillationTrainer samples with the current weights "
                "(on-policy), and the async distillation trainer is experimental with no CLI. Fix: ask for "
                f"method='{inner.name}' without Async (its samples are never stale), or prime_rl_config."
            )
        refuse(inner.name)
    if obj.correction == "ipo":
        raise ValueError(
            f"TRL {C.TRL_VERSION} has no ipo correction (a mask on |pi_train - pi_sampler| <= ipo_threshold, a "
            "probability difference): its importance-sampling corrections act on the ratio pi_train/pi_sampler. Fix: "
            f"correction='icepop' (keep tokens with {D.ASYNC_ICEPOP_RATIO[0]:g} <= ratio <= {D.ASYNC_ICEPOP_RATIO[1]:g}: "
            f"vllm_importance_sampling_mode 'token_mask') or correction='tis' (min(ratio, {D.ASYNC_TIS_CAP:g}): "
            "'token_truncate'), or prime_rl_config, which has ipo."
        )
    if not vllm:
        raise ValueError(
            "Async's correction acts on vLLM's sampling log-probs (GRPOConfig applies vllm_importance_sampling_* only "
            "with use_vllm), so it needs vllm=True."
        )
    _grpo(inner, plan)
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


def _opd(obj: Any, plan: Plan, *, model: str, tokenizers_match: Any) -> None:
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


def _trainer_method(name: str, knobs: dict[str, Any], plan: Plan, *, lora: bool) -> float:
    allowed = {"sft": ("learning_rate", "max_length"), "dpo": ("learning_rate", "max_length", "beta")}[name]
    unknown = sorted(set(knobs) - set(allowed))
    if unknown:
        raise ValueError(f"{name} takes the knobs {', '.join(allowed)}; unknown {unknown}")
    max_length = knobs.get("max_length", C.SFT_MAX_LENGTH)
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise ValueError(f"max_length must be a whole number >= 1 (default {C.SFT_MAX_LENGTH}); got {show(max_length)}")
    plan.keys["max_length"] = max_length
    plan.honored["max_length"] = "max_length"
    if name == "dpo":
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
    return float(lr)


def method_plan(obj: Any, *, model: str, lora: bool, vllm: bool, tokenizers_match: Any) -> tuple[Plan, str, float]:
    """(the plan, the `trl` subcommand, the learning rate)."""
    if isinstance(obj, tuple):  # ("sft" | "dpo", knobs)
        name, knobs = obj
        plan = Plan(label=name)
        return plan, name, _trainer_method(name, knobs, plan, lora=lora)
    name = obj.name
    label = f"async {obj.inner.name}" if name == "async" else name
    plan = Plan(label=label)
    rl_lr = D.PRIME_RL_LEARNING_RATE_LORA if lora else D.PRIME_RL_LEARNING_RATE_FULL
    if name == "grpo":
        _grpo(obj, plan)
        return plan, "grpo", rl_lr
    if name == "groupwise_grading":
        _groupwise(obj, plan)
        return plan, "grpo", rl_lr
    if name == "async":
        _async(obj, plan, vllm=vllm)
        return plan, "grpo", rl_lr
    if name == "opd":
        _opd(obj, plan, model=model, tokenizers_match=tokenizers_match)
        return plan, "distillation", obj.resolved_learning_rate(lora=lora)
    refuse(name)
    raise AssertionError("unreachable")  # pragma: no cover


def reward_placeholder() -> str:
    return placeholder("your_module.your_reward_function")
