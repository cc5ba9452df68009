"""What each method becomes in prime-rl: its algorithm, the knobs prime-rl honors (and under which key),
the knobs it cannot honor (and why), and the methods and corrections it cannot run at all.

``method_plan(obj, model=..., lora=...)`` returns a ``Plan``; ``prime_rl_config`` (``build.py``)
turns it into the TOML. A method prime-rl cannot run (FlashReinforce, SAO, BPCO, GroupwiseGrading,
ReinforceAda; an ``icepop`` or ``tis`` correction) is refused with a ``ValueError`` that says why and
what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pick_a_method.common import methods as M
from pick_a_method.common.identity import model_params_b
from pick_a_method.methods import defaults as D
from pick_a_method.trainers.plans import Plans
from pick_a_method.trainers.prime_rl.constants import (
    NON_THINKING_MODEL,
    OPD_TEACHER_BASE_URL,
    OPD_TEACHER_PORT,
    PRIME_RL_TAG,
    QWEN3_HYBRID,
    THINKING_MODEL,
)

# ================================================================================================
# Refusals for methods prime-rl cannot run (prime-rl's algorithm and loss types at the targeted commit:
# src/prime_rl/orchestrator/advantage.py and src/prime_rl/trainer/rl/loss.py)
# ================================================================================================

# What prime-rl offers where a method it lacks would go; the refusals are made from the method table with it
# (trainers/plans.py).
PLANS: Plans[Callable[..., "Plan"]] = Plans(M.PRIME_RL, "prime_rl_config", (
    "prime-rl's reward advantages are group-relative (grpo, max_rl: zero with one rollout per prompt) or an EMA "
    f"baseline (rae), from a fixed group_size per prompt; it has no batch-mean baseline, no sequence-level trust "
    f"region and no value critic in {PRIME_RL_TAG}"))


# ================================================================================================
# The plans
# ================================================================================================


@dataclass
class Plan:
    """A method in prime-rl's terms: ``[orchestrator.algo]``, sampling, learning rate, ``[trainer.loss]``,
    and for each knob of the method where prime-rl reads it (``honored``) or why it cannot (``ignored``)."""

    algo: dict[str, Any]
    group_size: int
    temperature: float
    max_tokens: int
    lr: float
    honored: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    off_policy_steps: int | None = None
    loss: dict[str, Any] | None = None


def _distillation_plan(obj: Any, algo: dict[str, Any], *, lora: bool, **algo_keys: str) -> Plan:
    """OPD's and OPSD's plan: their own sampling knobs, and where prime-rl reads each (``algo_keys`` first). Their
    loss is prime-rl's ref_kl component, fixed to reverse KL, whatever the method's divergence."""
    plan = Plan(
        algo=algo,
        group_size=obj.samples,
        temperature=obj.temperature,
        max_tokens=obj.max_tokens,
        lr=obj.resolved_learning_rate(lora=lora),
    )
    plan.honored.update(
        algo_keys,
        samples="orchestrator.group_size",
        temperature="orchestrator.train.sampling.temperature",
        max_tokens="orchestrator.train.sampling.max_completion_tokens",
        learning_rate="trainer.optim.lr",
    )
    if obj.divergence != "reverse_kl":
        plan.ignored["divergence"] = (
            f"prime-rl's {obj.name} loss is fixed to reverse KL (its ref_kl component; [trainer.loss] configures only "
            f"the rl component), so divergence={obj.divergence} is not used. For {obj.divergence}, run "
            f"{type(obj).__name__}.update in your own trainer."
        )
    return plan


@PLANS.writes(M.GRPO, M.MAX_RL, M.RAE)
def _grouped(obj: Any, *, model: str, lora: bool) -> Plan:
    # prime-rl's [orchestrator.algo] type is the method's name in the table (grpo, max_rl, rae, opd, opsd)
    plan = Plan(
        algo={"type": obj.name},
        group_size=obj.group_size,
        temperature=D.RL_TEMPERATURE,
        max_tokens=D.RL_MAX_TOKENS,
        lr=D.PRIME_RL_LEARNING_RATE_LORA if lora else D.PRIME_RL_LEARNING_RATE_FULL,
    )
    plan.honored["group_size"] = "orchestrator.group_size"
    if getattr(obj, "normalize_std", False):
        plan.ignored["normalize_std"] = (
            "prime-rl's grpo advantage is reward minus the group mean with no std division, and no key turns "
            "the division on; use GRPO.update in your own trainer for the std-normalized form."
        )
    if obj.stateful:  # rae's EMA baseline
        plan.algo["decay"] = obj.decay
        plan.honored["decay"] = "orchestrator.algo.decay"
    return plan


@PLANS.writes(M.OPD)
def _opd(obj: Any, *, model: str, lora: bool) -> Plan:
    plan = _distillation_plan(
        obj,
        {"type": obj.name, "teacher": {"name": obj.teacher, "base_url": obj.base_url or OPD_TEACHER_BASE_URL}},
        lora=lora,
        teacher="orchestrator.algo.teacher.name",
        base_url="orchestrator.algo.teacher.base_url",
    )
    plan.ignored["top_k"] = (
        f"prime-rl's opd scores each sampled token with the teacher's prefill log-prob (reverse KL on sampled "
        f"tokens); {PRIME_RL_TAG} has no top-k support key, so top_k={obj.top_k} is not used."
    )
    if obj.base_url is None:
        plan.warnings.append(
            f"The OPD teacher has no base_url, so the config points at {OPD_TEACHER_BASE_URL}. `rl` does not start "
            f"the teacher: serve it first on its own GPU(s), e.g. `CUDA_VISIBLE_DEVICES=<free gpu> uv run inference "
            f"--vllm.model {obj.teacher} --server.port {OPD_TEACHER_PORT}` (it must return prompt log-probs, which "
            "vLLM does), or pass knobs={'base_url': ...}."
        )
    return plan


@PLANS.writes(M.OPSD)
def _opsd(obj: Any, *, model: str, lora: bool) -> Plan:
    plan = _distillation_plan(
        obj,
        {"type": obj.name, "demo_key": _demo_key(obj.privileged), "template": obj.template},
        lora=lora,
        privileged="orchestrator.algo.demo_key",
        template="orchestrator.algo.template",
    )
    anchor = obj.anchor.partition(":")[0]
    if anchor == "live":
        plan.honored["anchor"] = "orchestrator.algo (prime-rl's opsd always scores against the live policy)"
    else:
        plan.ignored["anchor"] = (
            f"prime-rl's opsd scores against the live policy given the demonstration; {PRIME_RL_TAG} keeps no "
            f"EMA or frozen copy of the weights, so anchor={obj.anchor} runs as anchor='live'."
        )
    plan.warnings.extend(_in_context_learner(model))
    return plan


def _demo_key(privileged: str) -> str:
    """The key prime-rl's opsd looks the privileged text up by (demo_key): one key, first in each row's `info`, then
    as a top-level field."""
    if privileged.startswith("info.") and privileged.count(".") == 1:
        return privileged[len("info."):]
    if "." in privileged:
        raise ValueError(
            f"prime-rl's opsd looks the privileged text up by one key (demo_key), first in each row's `info`, "
            f"then as a top-level field; privileged={privileged!r} is a nested path it cannot follow. Fix: "
            "put the text in a top-level or info field of the taskset rows and pass that field's name."
        )
    return privileged


def _in_context_learner(model: str) -> list[str]:
    """What OPSD asks of the model, where its name says it falls short: in-context learning (its size), and no
    thinking mode."""
    size, found = model_params_b(model), []
    if size is None:
        found.append(f"Could not read the size of {model!r} from its name: OPSD needs a model that learns in context, "
                     f"about {M.OPSD_MIN_PARAMS_B:g}B parameters and up; under that, SFT on a stronger model's "
                     "completions.")
    elif size < M.OPSD_MIN_PARAMS_B:
        found.append(f"{model} has about {size:g}B parameters: OPSD needs in-context learning of about "
                     f"{M.OPSD_MIN_PARAMS_B:g}B and up, and under it SFT on a stronger model's completions does better.")
    if _is_thinking(model):
        found.append(f"{model} is a thinking model: OPSD can cost points on thinking models (Kaur et al. 2026, "
                     "arXiv:2607.05184). Compare against grpo on a held-out set before trusting it.")
    return found


@PLANS.writes(M.ASYNC)
def _async(obj: Any, *, model: str, lora: bool) -> Plan:
    inner = obj.inner
    correction = obj.correction
    if correction in ("icepop", "tis"):
        low, high = obj.ratio
        what = (
            f"icepop (keep a token only when {low:g} <= pi_train/pi_sampler <= {high:g})"
            if correction == "icepop"
            else f"tis (multiply by min(pi_train/pi_sampler, {obj.cap:g}))"
        )
        kwargs = {"low": low, "high": high} if correction == "icepop" else {"cap": obj.cap}
        raise ValueError(
            f"prime-rl {PRIME_RL_TAG} has no {correction} correction: its loss types are default (DPPO+KL, masks on "
            f"the probability difference), ipo (ipo_threshold) and custom; no prime-rl version has an icepop or "
            f"tis loss. Fix: use correction='ipo' (keeps a token when |pi_train - pi_sampler| <= ipo_threshold, "
            f"default {D.ASYNC_IPO_THRESHOLD:g}), or write {what} as a custom loss: a Python function with the "
            "signature of the default loss in prime-rl's src/prime_rl/trainer/rl/loss.py, importable where the "
            f"trainer runs, then pass overrides={{'trainer.loss': {{'type': 'custom', 'import_path': "
            f"'your_module.your_{correction}_loss', 'kwargs': {kwargs!r}}}}} with correction={correction!r} (the custom "
            "loss carries it)."
        )
    plan = PLANS.plan_of(inner.info)(inner, model=model, lora=lora)
    plan.honored = {f"method.{k}": v for k, v in plan.honored.items()}
    plan.ignored = {f"method.{k}": v for k, v in plan.ignored.items()}
    plan.off_policy_steps = obj.off_policy_steps
    plan.honored["off_policy_steps"] = "orchestrator.max_off_policy_steps"
    if inner.info.distill:
        why = (
            f"[trainer.loss] configures only the rl component; {inner.name}'s ref_kl loss is fixed in {PRIME_RL_TAG}, "
            "so no per-token correction applies to it"
        )
        plan.ignored["correction"] = why + "."
        plan.ignored["ipo_threshold"] = why + "."
    else:
        plan.loss = {"type": "ipo", "ipo_threshold": obj.ipo_threshold}
        plan.honored["correction"] = "trainer.loss.type"
        plan.honored["ipo_threshold"] = "trainer.loss.ipo_threshold"
    plan.ignored["ratio"] = "used only by an icepop correction, which prime-rl does not have; ipo reads ipo_threshold."
    plan.ignored["cap"] = "used only by a tis correction, which prime-rl does not have."
    if obj.off_policy_steps < 1:
        plan.warnings.append(
            "off_policy_steps=0: prime-rl always runs the trainer one step ahead of inference, so a bound of 0 may "
            "discard most rollouts; 1 is the tightest bound that keeps the pipeline full."
        )
    return plan


def method_plan(obj: Any, *, model: str, lora: bool, custom_loss: dict[str, Any] | None = None) -> tuple[Plan, str]:
    """(the plan, the method's label in messages: its name, or "async <inner>"); a method prime-rl cannot run is
    refused with the reason and the fix. ``custom_loss``: the caller's custom ``[trainer.loss]`` (an override),
    which carries an Async icepop or tis correction prime-rl has no loss for."""
    correction = getattr(obj, "correction", None)
    if custom_loss is None or correction not in ("icepop", "tis") or obj.inner.info.distill:
        return PLANS.plan_of(obj.info)(obj, model=model, lora=lora), obj.full_name
    plan = PLANS.plan_of(obj.info)(obj.model_copy(update={"correction": "ipo"}), model=model, lora=lora)
    plan.loss = None  # the override writes [trainer.loss]
    plan.honored.pop("ipo_threshold", None)
    plan.honored["correction"] = f"trainer.loss.import_path (your custom {correction} loss, from overrides)"
    knob = "ratio" if correction == "icepop" else "cap"
    del plan.ignored[knob]
    if custom_loss.get("kwargs"):
        plan.honored[knob] = "trainer.loss.kwargs (as your custom loss reads them)"
    else:
        plan.ignored[knob] = "your custom loss gets only trainer.loss.kwargs; pass it there."
    plan.ignored["ipo_threshold"] = f"used only by an ipo correction; your custom loss carries {correction}."
    return plan, obj.full_name


def _is_thinking(model: str) -> bool:
    if NON_THINKING_MODEL.search(model):
        return False
    return bool(THINKING_MODEL.search(model) or QWEN3_HYBRID.search(model))
