"""The method objects: validated, frozen knobs for every post-training method the skill routes to.

Each object is a pydantic v2 model (frozen, unknown knobs refused) with a class-level ``name``.
A bad knob is refused when the object is built, with a ``ValueError`` (pydantic's
``ValidationError`` is one) whose message names the knob, the allowed range and the default.

This module never imports torch: the update rules (``obj.update(batch)``) import it on first call,
so a server can list and validate methods without paying torch's start-up cost.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pick_a_method.methods import defaults as D

__all__ = [
    "Method",
    "GRPO",
    "MaxRL",
    "RAE",
    "OPD",
    "OPSD",
    "Async",
    "FlashReinforce",
    "SAO",
    "BPCO",
    "GroupwiseGrading",
    "ReinforceAda",
    "METHODS",
    "make_method",
    "method_names",
]


# ------------------------------------------------------------------------------------------------
# Knob checkers (used as pydantic "before" validators so the message is ours, not pydantic's)
# ------------------------------------------------------------------------------------------------


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _int_knob(lo: int, default: Any, hi: int | None = None) -> Any:
    """An integer knob in [lo, hi]; integral floats (8.0) are accepted, bools and 1.5 are not."""
    span = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"

    def check(value: Any, info: ValidationInfo) -> int:
        ok = _is_real(value) and math.isfinite(float(value)) and float(value).is_integer()
        if ok:
            value = int(value)
            ok = value >= lo and (hi is None or value <= hi)
        if not ok:
            raise ValueError(f"{info.field_name} must be an integer {span} (default {default}); got {value!r}")
        return value

    return Annotated[int, BeforeValidator(check)]


def _float_knob(
    lo: float | None,
    hi: float | None,
    default: Any,
    *,
    lo_open: bool = True,
    hi_open: bool = False,
    allow_inf: bool = False,
) -> Any:
    """A real knob in an interval; NaN is always refused, infinity only when ``allow_inf``."""
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    lo_text = "-inf" if lo is None else f"{lo:g}"
    hi_text = "inf" if hi is None else f"{hi:g}"
    if hi is None:
        right = "]" if allow_inf else ")"
    span = f"a number in {left}{lo_text}, {hi_text}{right}"
    if allow_inf:
        span += " (inf disables it)"

    def check(value: Any, info: ValidationInfo) -> float:
        ok = _is_real(value) and not math.isnan(float(value))
        if ok:
            value = float(value)
            if math.isinf(value):
                ok = allow_inf and value > 0
            else:
                if lo is not None:
                    ok = value > lo if lo_open else value >= lo
                if ok and hi is not None:
                    ok = value < hi if hi_open else value <= hi
        if not ok:
            raise ValueError(f"{info.field_name} must be {span} (default {default}); got {value!r}")
        return value

    return Annotated[float, BeforeValidator(check)]


def _optional_rate(default_text: str) -> Any:
    """A learning rate: None (use the method's default) or a finite number > 0."""

    def check(value: Any, info: ValidationInfo) -> float | None:
        if value is None:
            return None
        if not (_is_real(value) and math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(
                f"{info.field_name} must be None (meaning {default_text}) or a finite number > 0; got {value!r}"
            )
        return float(value)

    return Annotated[Union[float, None], BeforeValidator(check)]


def _choice(options: tuple[str, ...], default: str) -> Any:
    """A string choice, case-insensitive, '-' and ' ' read as '_', stored lower-case."""

    def check(value: Any, info: ValidationInfo) -> str:
        if isinstance(value, str):
            norm = value.strip().lower().replace("-", "_").replace(" ", "_")
            if norm in options:
                return norm
        raise ValueError(f"{info.field_name} must be one of {', '.join(options)} (default {default}); got {value!r}")

    return Annotated[str, BeforeValidator(check)]


def _pair(value: Any, field: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{field} must be a pair (low, high) of numbers; got {value!r}")
    low, high = value
    if not (_is_real(low) and _is_real(high)) or math.isnan(float(low)) or math.isnan(float(high)):
        raise ValueError(f"{field} must be a pair (low, high) of numbers; got {value!r}")
    return float(low), float(high)


TEMPERATURE = _float_knob(0.0, D.TEMPERATURE_MAX, 1.0)

_COMMON = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, validate_default=True)


# ------------------------------------------------------------------------------------------------
# Base class
# ------------------------------------------------------------------------------------------------


class Method(BaseModel):
    """Base of every method object. ``name`` is the registry name; ``update`` runs the rule."""

    model_config = _COMMON
    name: ClassVar[str] = "method"

    def knobs(self) -> dict[str, Any]:
        """The knobs as plain data (callables shown by their names)."""
        out: dict[str, Any] = {}
        for key in type(self).model_fields:
            value = getattr(self, key)
            if isinstance(value, Method):
                value = {"name": value.name, **value.knobs()}
            elif callable(value):
                value = getattr(value, "__qualname__", None) or repr(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out

    def update(self, batch: Any, **kwargs: Any) -> Any:  # pragma: no cover - overridden
        """Run the method's update rule on a batch (a ``methods.Batch`` or a list of trajectory dicts).

        Keyword arguments every rule takes: ``dtype``/``device`` (the batch's, when converting), ``validate``
        (check the inputs, default True), ``stats`` (compute stats and notes, default True; False is the hot
        path), ``process_group`` (take batch statistics over that group's ranks; default: this rank only),
        ``distributed=True`` (the world group). The batch may carry autograd graphs: the rule never follows them.
        """
        raise NotImplementedError(f"{type(self).__name__} has no update rule")


# ------------------------------------------------------------------------------------------------
# Group-relative methods (prime-rl's grpo, max_rl, rae)
# ------------------------------------------------------------------------------------------------


class GRPO(Method):
    """Group-relative advantage: A_i = R_i - mean_group(R), optionally divided by the group std.

    prime-rl's ``grpo`` (no std division, the Dr. GRPO form, arXiv:2503.20783) is the default;
    ``normalize_std=True`` gives the DeepSeekMath form (arXiv:2402.03300). A group of one carries
    no gradient (A = 0), as in prime-rl.
    """

    name: ClassVar[str] = "grpo"
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT
    normalize_std: bool = D.GRPO_NORMALIZE_STD

    @field_validator("normalize_std", mode="before")
    @classmethod
    def _bool(cls, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"normalize_std must be true or false (default {D.GRPO_NORMALIZE_STD}); got {value!r}")
        return value

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.grouped import grouped_update

        return grouped_update(self, batch, **kwargs)


class MaxRL(Method):
    """max_rl (arXiv:2602.02710): A_i = (R_i - mean)/mean per group; a group with mean <= 0 carries 0.

    Assumes non-negative rewards (a pass rate); the update refuses a negative reward.
    """

    name: ClassVar[str] = "max_rl"
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.grouped import grouped_update

        return grouped_update(self, batch, **kwargs)


class RAE(Method):
    """rae (SPIRAL, arXiv:2506.24119): A = R - b with a per-agent EMA baseline b.

    The baseline is read before the trajectory's own reward moves it (b <- decay*b + (1-decay)*R),
    in batch order, exactly as prime-rl's orchestrator does. The baselines are state kept on the
    object (``baselines``, ``reset()``); the knobs stay frozen. Works at group_size 1.
    """

    name: ClassVar[str] = "rae"
    decay: _float_knob(0.0, 1.0, D.RAE_DECAY, lo_open=False, hi_open=True) = D.RAE_DECAY
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT

    _baselines: dict[str, float] = PrivateAttr(default_factory=dict)

    @property
    def baselines(self) -> dict[str, float]:
        """A copy of the current per-agent baselines."""
        return dict(self._baselines)

    def baseline(self, agent: str = D.RAE_DEFAULT_AGENT) -> float:
        return self._baselines.get(str(agent), D.RAE_INITIAL_BASELINE)

    def reset(self, baselines: Mapping[str, float] | None = None) -> None:
        """Forget every baseline (or start from the given ones)."""
        self._baselines.clear()
        if baselines:
            for key, value in baselines.items():
                if not (_is_real(value) and math.isfinite(float(value))):
                    raise ValueError(f"baseline for agent {key!r} must be a finite number; got {value!r}")
                self._baselines[str(key)] = float(value)

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.grouped import grouped_update

        return grouped_update(self, batch, **kwargs)


# ------------------------------------------------------------------------------------------------
# Distillation: OPD and OPSD
# ------------------------------------------------------------------------------------------------

_URL = re.compile(r"^https?://\S+$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


class OPD(Method):
    """On-policy distillation: the student samples, a served teacher scores, the loss is a divergence.

    ``teacher`` is the served model name; ``"name@http://host/v1"`` (or ``"vllm:name@url"``, or a
    mapping ``{"name", "base_url"}``) also sets ``base_url``. The teacher must return prompt
    log-probabilities (vLLM does). See ``methods.rules.distill`` for the two loss forms.
    """

    name: ClassVar[str] = "opd"
    teacher: str
    base_url: Union[str, None] = None
    divergence: _choice(D.DIVERGENCES, D.OPD_DIVERGENCE) = D.OPD_DIVERGENCE
    top_k: _int_knob(1, D.OPD_TOP_K) = D.OPD_TOP_K
    ratio_cap: _float_knob(1.0, None, D.OPD_RATIO_CAP, lo_open=False, allow_inf=True) = D.OPD_RATIO_CAP
    samples: _int_knob(1, D.OPD_SAMPLES) = D.OPD_SAMPLES
    temperature: TEMPERATURE = D.OPD_TEMPERATURE
    max_tokens: _int_knob(1, D.OPD_MAX_TOKENS) = D.OPD_MAX_TOKENS
    learning_rate: _optional_rate(
        f"{D.OPD_LEARNING_RATE_LORA:g} with LoRA, {D.OPD_LEARNING_RATE_FULL:g} full"
    ) = None

    @model_validator(mode="before")
    @classmethod
    def _split_teacher(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or "teacher" not in data:
            return data
        data = dict(data)
        teacher = data["teacher"]
        url = None
        if isinstance(teacher, Mapping):
            unknown = set(teacher) - {"name", "base_url", "model", "url"}
            if unknown:
                raise ValueError(f"teacher mapping takes name and base_url; unknown keys {sorted(unknown)}")
            name = teacher.get("name", teacher.get("model"))
            url = teacher.get("base_url", teacher.get("url"))
            teacher = name
        elif isinstance(teacher, str):
            text = teacher.strip()
            if text.lower().startswith("vllm:"):
                text = text[5:]
            at = text.rfind("@")
            if at > 0 and _URL.match(text[at + 1 :]):
                teacher, url = text[:at], text[at + 1 :]
            else:
                teacher = text
        if url is not None:
            given = data.get("base_url")
            if given is not None and given != url:
                raise ValueError(f"teacher names base URL {url!r} but base_url={given!r}; give one of them")
            data["base_url"] = url
        data["teacher"] = teacher
        return data

    @field_validator("teacher", mode="before")
    @classmethod
    def _teacher(cls, value: Any) -> str:
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value.strip()):
            raise ValueError(
                "teacher must be the served model's name, e.g. 'Qwen/Qwen3-32B' or "
                f"'Qwen/Qwen3-32B@http://host:8000/v1' (a server that returns prompt log-probs); got {value!r}"
            )
        return value.strip()

    @field_validator("base_url", mode="before")
    @classmethod
    def _base_url(cls, value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not _URL.match(value.strip()):
            raise ValueError(f"base_url must be None or an http(s):// URL such as 'http://host:8000/v1'; got {value!r}")
        return value.strip()

    @property
    def teacher_ref(self) -> tuple[str, str | None]:
        """(served model name, base URL or None)."""
        return self.teacher, self.base_url

    def resolved_learning_rate(self, lora: bool = True) -> float:
        if self.learning_rate is not None:
            return self.learning_rate
        return D.OPD_LEARNING_RATE_LORA if lora else D.OPD_LEARNING_RATE_FULL

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.distill import distill_update

        return distill_update(self, batch, **kwargs)

    def topk_loss(self, student_topk_logprobs: Any, teacher_topk_logprobs: Any, mask: Any = None) -> Any:
        from pick_a_method.methods.rules.distill import topk_divergence

        return topk_divergence(
            student_topk_logprobs, teacher_topk_logprobs, mask, divergence=self.divergence, top_k=self.top_k
        )


def _parse_anchor(value: Any) -> str:
    if isinstance(value, str):
        text = value.strip().lower()
        kind, sep, rate_text = text.partition(":")
        if kind in D.OPSD_ANCHORS and kind != "ema" and not sep:  # initial, live: no rate
            return kind
        if kind == "ema":
            if not sep:
                return f"ema:{D.OPSD_EMA_RATE:g}"
            try:
                rate = float(rate_text)
            except ValueError:
                rate = float("nan")
            if 0.0 < rate < 1.0:
                return f"ema:{rate:g}"
    raise ValueError(
        f"anchor must be 'ema[:rate]' with 0 < rate < 1 (bare 'ema' means {D.OPSD_EMA_RATE:g}), 'initial' or "
        f"'live' (default 'ema:{D.OPSD_EMA_RATE:g}'); got {value!r}"
    )


class OPSD(Method):
    """On-policy self-distillation: the teacher is the student's own (anchored) weights shown privileged text.

    ``privileged`` names what the teacher sees: demonstration (SDFT), reference, hint, feedback, or a
    task field such as ``info.answer``. ``anchor`` picks the teacher's weights: ``ema[:rate]``,
    ``initial`` or ``live``. Needs a model that learns in context (about 7B and up) and can cost
    points on thinking models (Kaur et al., arXiv:2607.05184).
    """

    name: ClassVar[str] = "opsd"
    privileged: str = D.OPSD_PRIVILEGED
    divergence: _choice(D.DIVERGENCES, D.OPSD_DIVERGENCE) = D.OPSD_DIVERGENCE
    ratio_cap: _float_knob(1.0, None, D.OPD_RATIO_CAP, lo_open=False, allow_inf=True) = D.OPD_RATIO_CAP
    anchor: Annotated[str, BeforeValidator(_parse_anchor)] = f"{D.OPSD_ANCHOR}:{D.OPSD_EMA_RATE:g}"
    samples: _int_knob(1, D.OPSD_SAMPLES) = D.OPSD_SAMPLES
    temperature: TEMPERATURE = D.OPSD_TEMPERATURE
    max_tokens: _int_knob(1, D.OPSD_MAX_TOKENS) = D.OPSD_MAX_TOKENS
    template: str = D.OPSD_TEMPLATE
    learning_rate: _optional_rate(f"{D.OPSD_LEARNING_RATE:g}") = None

    @field_validator("privileged", mode="before")
    @classmethod
    def _privileged(cls, value: Any) -> str:
        if isinstance(value, str) and _IDENT.match(value.strip()):
            return value.strip()
        raise ValueError(
            f"privileged must be one of {', '.join(D.OPSD_PRIVILEGED_NAMED)} or a task field identifier such as "
            f"'info.answer' (letters, digits, '_' and '.'; default {D.OPSD_PRIVILEGED!r}); got {value!r}"
        )

    @field_validator("template", mode="before")
    @classmethod
    def _template(cls, value: Any) -> str:
        if not isinstance(value, str) or "{demonstration}" not in value:
            raise ValueError(f"template must be a string containing '{{demonstration}}'; got {value!r}")
        try:
            value.format(demonstration="x")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"template may use only the field {{demonstration}} (double other braces as {{{{ }}}}); "
                f"formatting it failed with {exc!r}"
            ) from None
        return value

    def anchor_parts(self) -> tuple[str, float | None]:
        kind, _, rate = self.anchor.partition(":")
        return kind, (float(rate) if rate else None)

    def resolved_learning_rate(self, lora: bool = True) -> float:
        return self.learning_rate if self.learning_rate is not None else D.OPSD_LEARNING_RATE

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.distill import distill_update

        return distill_update(self, batch, **kwargs)

    def topk_loss(self, student_topk_logprobs: Any, teacher_topk_logprobs: Any, mask: Any = None) -> Any:
        from pick_a_method.methods.rules.distill import topk_divergence

        return topk_divergence(student_topk_logprobs, teacher_topk_logprobs, mask, divergence=self.divergence)


# ------------------------------------------------------------------------------------------------
# Async: staleness bound and per-token correction around a grouped or distillation method
# ------------------------------------------------------------------------------------------------

_ASYNC_INNER = ("grpo", "max_rl", "rae", "opd", "opsd")


def _coerce_inner(value: Any) -> Any:
    if isinstance(value, (GRPO, MaxRL, RAE, OPD, OPSD)):
        return value
    if isinstance(value, Method):
        raise ValueError(
            f"method must be one of grpo, max_rl, rae, OPD, OPSD; {type(value).__name__} cannot be wrapped"
            + (
                " (it carries its own off-policy handling: use it directly)"
                if isinstance(value, (FlashReinforce, SAO, BPCO, Async))
                else ""
            )
        )
    if isinstance(value, str):
        canonical = _ALIASES.get(_fold(value))
        if canonical not in _ASYNC_INNER:
            raise ValueError(f"Async wraps one of {', '.join(_ASYNC_INNER)}; got {value!r}")
        if canonical == "opd":
            raise ValueError(
                "Async(method='opd') needs the teacher: pass method={'name': 'opd', 'teacher': 'model@http://host/v1'} "
                "or an OPD object"
            )
        return _coerce_inner(make_method(canonical))
    if isinstance(value, Mapping):
        spec = dict(value)
        inner_name = spec.pop("name", None)
        if not isinstance(inner_name, str):
            raise ValueError(f"method given as a mapping needs a 'name' (one of {', '.join(_ASYNC_INNER)}); got {value!r}")
        return _coerce_inner(make_method(inner_name, **spec))
    raise ValueError(
        f"method must be one of {', '.join(_ASYNC_INNER)} (a name, a mapping {{'name': ..., **knobs}} or an object); "
        f"got {value!r}"
    )


class Async(Method):
    """Bounded staleness plus a per-token correction around grpo, max_rl, rae, OPD or OPSD.

    A trajectory older than ``off_policy_steps`` policy versions is dropped (when the batch carries
    its lag). Each kept token's coefficient is then corrected with the importance ratio
    rho = pi_train/pi_sampler: ``ipo`` keeps rho*c where |pi_train - pi_sampler| <= ipo_threshold,
    ``icepop`` keeps rho*c where low <= rho <= high (inclusive), ``tis`` multiplies c by min(rho, cap).
    Every kept rho is also capped at ``ratio_cap`` (default 20, verl's DPPO truncation; it binds only under
    ipo). Our ipo leaves out prime-rl's ``kl_tau * (log rho)^2`` loss term (see ``defaults``).
    """

    name: ClassVar[str] = "async"
    method: Annotated[Union[GRPO, MaxRL, RAE, OPD, OPSD], BeforeValidator(_coerce_inner)] = Field(
        default_factory=GRPO
    )
    off_policy_steps: _int_knob(0, D.ASYNC_OFF_POLICY_STEPS) = D.ASYNC_OFF_POLICY_STEPS
    correction: _choice(D.ASYNC_CORRECTIONS, D.ASYNC_CORRECTION) = D.ASYNC_CORRECTION
    ipo_threshold: _float_knob(0.0, 1.0, D.ASYNC_IPO_THRESHOLD) = D.ASYNC_IPO_THRESHOLD
    ratio: tuple[float, float] = D.ASYNC_ICEPOP_RATIO
    cap: _float_knob(1.0, None, D.ASYNC_TIS_CAP, lo_open=False) = D.ASYNC_TIS_CAP
    ratio_cap: _float_knob(1.0, None, D.ASYNC_RATIO_CAP, lo_open=False, allow_inf=True) = D.ASYNC_RATIO_CAP

    @model_validator(mode="before")
    @classmethod
    def _eps_alias(cls, data: Any) -> Any:
        # The anchor SDK calls the ipo threshold `eps`; accept it as a synonym.
        if isinstance(data, Mapping) and "eps" in data:
            data = dict(data)
            eps = data.pop("eps")
            if "ipo_threshold" in data and data["ipo_threshold"] != eps:
                raise ValueError("give the ipo threshold once: eps and ipo_threshold are the same knob")
            data["ipo_threshold"] = eps
        return data

    @field_validator("ratio", mode="before")
    @classmethod
    def _ratio(cls, value: Any) -> tuple[float, float]:
        low, high = _pair(value, "ratio")
        if not (0.0 < low <= 1.0 <= high < math.inf):
            raise ValueError(
                f"ratio must be (low, high) with 0 < low <= 1 <= high < inf (default {D.ASYNC_ICEPOP_RATIO}); "
                f"got {value!r}"
            )
        return low, high

    @property
    def inner(self) -> Union[GRPO, MaxRL, RAE, OPD, OPSD]:
        """The wrapped method object."""
        return self.method

    @property
    def inner_name(self) -> str:
        return self.method.name

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.corrections import async_update

        return async_update(self, batch, **kwargs)


# ------------------------------------------------------------------------------------------------
# Single-rollout methods: FlashReinforce, SAO, BPCO
# ------------------------------------------------------------------------------------------------


class FlashReinforce(Method):
    """FlashREINFORCE (Hu et al. 2026): batch-mean baseline, sequence trust gate, 1/T weighting.

    See ``methods.rules.single_rollout.flash_reinforce_update`` for the rule and its normalization.
    """

    name: ClassVar[str] = "flash_reinforce"
    samples: ClassVar[int] = D.SINGLE_ROLLOUT_SAMPLES
    batch: ClassVar[int] = D.FLASH_REINFORCE_BATCH

    trust: _float_knob(0.0, None, D.FLASH_REINFORCE_TRUST, allow_inf=True) = D.FLASH_REINFORCE_TRUST
    off_policy_steps: _int_knob(0, D.FLASH_REINFORCE_OFF_POLICY_STEPS) = D.FLASH_REINFORCE_OFF_POLICY_STEPS
    ratio_cap: _float_knob(1.0, None, D.FLASH_REINFORCE_RATIO_CAP, lo_open=False, allow_inf=True) = D.FLASH_REINFORCE_RATIO_CAP
    temperature: TEMPERATURE = D.FLASH_REINFORCE_TEMPERATURE
    max_tokens: _int_knob(1, D.FLASH_REINFORCE_MAX_TOKENS) = D.FLASH_REINFORCE_MAX_TOKENS
    learning_rate: _optional_rate(
        f"{D.FLASH_REINFORCE_LEARNING_RATE:g} full, {D.FLASH_REINFORCE_LEARNING_RATE_LORA:g} with LoRA"
    ) = None

    def resolved_learning_rate(self, lora: bool = False) -> float:
        if self.learning_rate is not None:
            return self.learning_rate
        return D.FLASH_REINFORCE_LEARNING_RATE_LORA if lora else D.FLASH_REINFORCE_LEARNING_RATE

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.flash_reinforce import flash_reinforce_update

        return flash_reinforce_update(self, batch, **kwargs)


def _length_adaptive_lambda(alpha: float, length: int) -> float:
    """SAO's and BPCO's GAE lambda(L) = max(0, 1 - 1/(alpha * L)); 0 for L < 1 (rules: ``gae_lambdas``)."""
    if length < 1:
        return 0.0
    return max(0.0, 1.0 - 1.0 / (alpha * length))


class SAO(Method):
    """SAO (Hou et al. 2026, arXiv:2607.07508): skip-observation LA-GAE critic and a strict ratio band.

    See ``methods.rules.single_rollout.sao_update``.
    """

    name: ClassVar[str] = "sao"
    samples: ClassVar[int] = D.SINGLE_ROLLOUT_SAMPLES
    gamma: ClassVar[float] = D.SAO_GAMMA
    batch: ClassVar[int] = D.SAO_BATCH

    ratio: tuple[float, float] = D.SAO_RATIO
    gae_alpha: _float_knob(0.0, None, D.SAO_GAE_ALPHA) = D.SAO_GAE_ALPHA
    critic_steps: _int_knob(1, D.SAO_CRITIC_STEPS) = D.SAO_CRITIC_STEPS
    critic_warmup: _int_knob(0, D.SAO_CRITIC_WARMUP) = D.SAO_CRITIC_WARMUP
    temperature: TEMPERATURE = D.SAO_TEMPERATURE
    max_tokens: _int_knob(1, D.SAO_MAX_TOKENS) = D.SAO_MAX_TOKENS
    learning_rate: _optional_rate(f"{D.SAO_LEARNING_RATE:g}") = None
    critic_learning_rate: _float_knob(0.0, None, D.SAO_CRITIC_LEARNING_RATE) = D.SAO_CRITIC_LEARNING_RATE

    @field_validator("ratio", mode="before")
    @classmethod
    def _ratio(cls, value: Any) -> tuple[float, float]:
        low, high = _pair(value, "ratio")
        if not (0.0 < low < 1.0 < high < math.inf):
            raise ValueError(
                f"ratio must be (low, high) with 0 < low < 1 < high < inf (default {D.SAO_RATIO}; coding band "
                f"{D.SAO_RATIO_CODING}); got {value!r}"
            )
        return low, high

    def gae_lambda(self, length: int) -> float:
        return _length_adaptive_lambda(self.gae_alpha, length)

    def resolved_learning_rate(self, lora: bool = False) -> float:
        return self.learning_rate if self.learning_rate is not None else D.SAO_LEARNING_RATE

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.single_rollout import sao_update

        return sao_update(self, batch, **kwargs)


class BPCO(Method):
    """BPCO (Qi et al. 2026, arXiv:2608.23566): bounded critic, LA-GAE, sign-dependent DPPO clip.

    See ``methods.rules.single_rollout.bpco_update``.
    """

    name: ClassVar[str] = "bpco"
    samples: ClassVar[int] = D.SINGLE_ROLLOUT_SAMPLES

    clip: _float_knob(0.0, 1.0, D.BPCO_CLIP) = D.BPCO_CLIP
    ratio_cap: _float_knob(1.0, None, D.BPCO_RATIO_CAP, lo_open=False, allow_inf=True) = D.BPCO_RATIO_CAP
    gae_alpha: _float_knob(0.0, None, D.BPCO_GAE_ALPHA) = D.BPCO_GAE_ALPHA
    reward_range: tuple[float, float] = D.BPCO_REWARD_RANGE
    critic_warmup: _int_knob(0, D.BPCO_CRITIC_WARMUP) = D.BPCO_CRITIC_WARMUP
    temperature: TEMPERATURE = D.BPCO_TEMPERATURE
    max_tokens: _int_knob(1, D.BPCO_MAX_TOKENS) = D.BPCO_MAX_TOKENS
    learning_rate: _optional_rate(f"{D.BPCO_LEARNING_RATE:g}") = None
    critic_learning_rate: _float_knob(0.0, None, D.BPCO_CRITIC_LEARNING_RATE) = D.BPCO_CRITIC_LEARNING_RATE

    @field_validator("reward_range", mode="before")
    @classmethod
    def _range(cls, value: Any) -> tuple[float, float]:
        low, high = _pair(value, "reward_range")
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(
                f"reward_range must be a finite pair (low, high) with low < high (default {D.BPCO_REWARD_RANGE}); "
                f"got {value!r}"
            )
        return low, high

    def bound(self, z: float) -> float:
        """The bounded critic head (eq. 9): R_min + (R_max - R_min) * (1/2 + atan(z)/pi)."""
        low, high = self.reward_range
        return low + (high - low) * (0.5 + math.atan(z) / math.pi)

    def unbound(self, value: float) -> float:
        """Inverse of ``bound``; refused at or beyond either end of the reward range."""
        low, high = self.reward_range
        if not (low < value < high):
            raise ValueError(f"unbound needs a value strictly inside reward_range {self.reward_range}; got {value!r}")
        return math.tan(math.pi * ((value - low) / (high - low) - 0.5))

    def gae_lambda(self, length: int) -> float:
        return _length_adaptive_lambda(self.gae_alpha, length)

    def resolved_learning_rate(self, lora: bool = False) -> float:
        return self.learning_rate if self.learning_rate is not None else D.BPCO_LEARNING_RATE

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.single_rollout import bpco_update

        return bpco_update(self, batch, **kwargs)


# ------------------------------------------------------------------------------------------------
# Reward shaping and sampling: GroupwiseGrading, ReinforceAda
# ------------------------------------------------------------------------------------------------


class GroupwiseGrading(Method):
    """Groupwise grading (MiMo-V2.6 report section 4.3): reshape rewards or advantages inside each group.

    ``mode="reward"`` (GRS) multiplies each passing reward by ``max(floor, solution) * max(floor,
    behavior)`` from ``grader(item, rubric)``; ``mode="advantage"`` (GAR) asks ``grader(group)`` for a
    ranking (or factors) of the passes and redistributes the pass mass towards the better ones.
    ``grader`` may be None only for a preview (shaping is then skipped and said so).
    """

    name: ClassVar[str] = "groupwise_grading"
    grader: Union[Callable[..., Any], None] = None
    mode: _choice(D.GROUPWISE_MODES, D.GROUPWISE_MODE) = D.GROUPWISE_MODE
    rubrics: Any = None
    floor: _float_knob(0.0, 1.0, D.GROUPWISE_FLOOR, lo_open=False, hi_open=True) = D.GROUPWISE_FLOOR
    cap: _float_knob(1.0, None, D.GROUPWISE_CAP, lo_open=False) = D.GROUPWISE_CAP
    min_factor: _float_knob(0.0, 1.0, D.GROUPWISE_MIN_FACTOR) = D.GROUPWISE_MIN_FACTOR
    hack_zero: bool = D.GROUPWISE_HACK_ZERO
    pass_threshold: _float_knob(None, None, D.PASS_THRESHOLD) = D.PASS_THRESHOLD
    concurrency: _int_knob(1, D.GROUPWISE_CONCURRENCY) = D.GROUPWISE_CONCURRENCY
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT

    _stats: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("grader", mode="before")
    @classmethod
    def _grader(cls, value: Any) -> Any:
        if value is not None and not callable(value):
            raise ValueError(f"grader must be a callable (or None for a preview); got {type(value).__name__}")
        return value

    @field_validator("rubrics", mode="before")
    @classmethod
    def _rubrics(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, Mapping) and not callable(value):
            raise ValueError(
                f"rubrics must be None, a mapping task_id -> rubric, or a callable(items) -> rubric; got {value!r}"
            )
        return value

    @field_validator("hack_zero", mode="before")
    @classmethod
    def _bool(cls, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"hack_zero must be true or false (default {D.GROUPWISE_HACK_ZERO}); got {value!r}")
        return value

    @property
    def stats(self) -> dict[str, Any]:
        """Running counters of ``group``/``shape``/``update`` calls: groups, mixed, grader_calls, grader_failures,
        hacks, lambda_capped, and the factors / scores seen."""
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self._stats.items() if not k.startswith("_")}

    def reset_stats(self) -> None:
        self._stats.clear()

    def group(self, items: list[Mapping[str, Any]]) -> list[float]:
        """Shape one group of items (prompt, completion, reward[, task_id]); returns one number per item."""
        from pick_a_method.methods.rules.groupwise import shape_group

        return shape_group(self, items)

    def shape(
        self,
        rewards: list[float],
        prompts: list[Any],
        completions: list[Any],
        *,
        group_size: int | None = None,
        task_id: list[Any] | None = None,
    ) -> list[float]:
        """Shape consecutive groups of ``group_size`` (TRL's layout)."""
        from pick_a_method.methods.rules.groupwise import shape_flat

        return shape_flat(self, rewards, prompts, completions, group_size=group_size or self.group_size, task_id=task_id)

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.groupwise import groupwise_update

        return groupwise_update(self, batch, **kwargs)


class ReinforceAda(Method):
    """Reinforce-Ada-Seq (Xiong et al. 2025, arXiv:2510.04996): sample until a group splits.

    ``obj(draw, prompts)`` draws ``round_size`` samples per active prompt per round, retires a prompt
    when its exit rule is met (``balanced``: keep//2 right and keep - keep//2 wrong; ``positive``:
    one right), and keeps ``keep`` samples per prompt with A = r - (pass rate over everything drawn).
    """

    name: ClassVar[str] = "reinforce_ada"
    keep: _int_knob(2, D.REINFORCE_ADA_KEEP) = D.REINFORCE_ADA_KEEP
    round_size: _int_knob(1, D.REINFORCE_ADA_ROUND_SIZE) = D.REINFORCE_ADA_ROUND_SIZE
    max_rounds: _int_knob(1, D.REINFORCE_ADA_MAX_ROUNDS) = D.REINFORCE_ADA_MAX_ROUNDS
    exit: _choice(D.REINFORCE_ADA_EXITS, D.REINFORCE_ADA_EXIT) = D.REINFORCE_ADA_EXIT
    threshold: _float_knob(None, None, D.REINFORCE_ADA_THRESHOLD) = D.REINFORCE_ADA_THRESHOLD

    @model_validator(mode="after")
    def _round_covers_keep(self) -> "ReinforceAda":
        if self.round_size < self.keep:
            raise ValueError(
                f"round_size must be >= keep (a round must be able to fill a group); got round_size="
                f"{self.round_size}, keep={self.keep}"
            )
        return self

    @property
    def max_draws(self) -> int:
        return self.round_size * self.max_rounds

    def __call__(self, draw: Callable[[list[Any], int], Any], prompts: list[Any]) -> Any:
        from pick_a_method.methods.rules.reinforce_ada import run_sampling

        return run_sampling(self, draw, prompts)

    def update(self, batch: Any, **kwargs: Any) -> Any:
        from pick_a_method.methods.rules.reinforce_ada import ada_update

        return ada_update(self, batch, **kwargs)


# ------------------------------------------------------------------------------------------------
# Registry
# ------------------------------------------------------------------------------------------------

METHODS: dict[str, type[Method]] = {
    cls.name: cls
    for cls in (GRPO, MaxRL, RAE, OPD, OPSD, Async, FlashReinforce, SAO, BPCO, GroupwiseGrading, ReinforceAda)
}

# Spellings folded to lower case with separators removed -> canonical name.
_ALIASES: dict[str, str] = {
    "grpo": "grpo",
    "drgrpo": "grpo",
    "maxrl": "max_rl",
    "rae": "rae",
    "spiral": "rae",
    "opd": "opd",
    "onpolicydistillation": "opd",
    "opsd": "opsd",
    "selfdistillation": "opsd",
    "onpolicyselfdistillation": "opsd",
    "async": "async",
    "flashreinforce": "flash_reinforce",
    "sao": "sao",
    "bpco": "bpco",
    "groupwisegrading": "groupwise_grading",
    "groupwise": "groupwise_grading",
    "reinforceada": "reinforce_ada",
    "reinforceadaseq": "reinforce_ada",
}


def _fold(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def method_names() -> list[str]:
    """The canonical registry names."""
    return list(METHODS)


def make_method(name: str | Method, **knobs: Any) -> Method:
    """Build a method object from a name (case-insensitive, common spellings) and its knobs.

    ``make_method("GRPO", group_size=4)``, ``make_method("MaxRL")``, ``make_method("flash_reinforce",
    trust=0.01)``, ``make_method("Async", method={"name": "rae", "decay": 0.9}, correction="icepop")``;
    ``"async grpo"`` is short for ``Async(method="grpo")``. An unknown name raises ValueError listing
    the known ones; a bad knob raises ValueError with the allowed range.
    """
    if isinstance(name, Method):
        return type(name)(**{**_raw_knobs(name), **knobs}) if knobs else name
    if not isinstance(name, str):
        raise ValueError(f"method name must be a string such as 'grpo' or 'FlashReinforce'; got {name!r}")
    folded = _fold(name)
    canonical = _ALIASES.get(folded)
    if canonical is None and folded.startswith("async") and len(folded) > len("async"):
        inner = _ALIASES.get(folded[len("async") :])
        if inner in _ASYNC_INNER:
            if "method" in knobs:
                raise ValueError(f"{name!r} already names the inner method; drop the 'method' knob")
            return Async(method=inner, **knobs)
    if canonical is None:
        raise ValueError(
            f"unknown method {name!r}; known methods: {', '.join(METHODS)} "
            "(also spelled GRPO, MaxRL, FlashReinforce, GroupwiseGrading, ReinforceAda, 'async grpo', ...)"
        )
    return METHODS[canonical](**knobs)


def _raw_knobs(obj: Method) -> dict[str, Any]:
    return {key: getattr(obj, key) for key in type(obj).model_fields}
