"""Distillation: OPD (a served teacher) and OPSD (the student's own anchored weights shown privileged text)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Union

from pydantic import BeforeValidator, field_validator, model_validator

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects.base import TEMPERATURE, Method, _choice, _float_knob, _int_knob, _optional_rate


_URL = re.compile(r"^https?://\S+$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


class OPD(Method):
    """On-policy distillation: the student samples, a served teacher scores, the loss is a divergence.

    ``teacher`` is the served model name; ``"name@http://host/v1"`` (or ``"vllm:name@url"``, or a
    mapping ``{"name", "base_url"}``) also sets ``base_url``. The teacher must return prompt
    log-probabilities (vLLM does). See ``methods.rules.distill`` for the two loss forms.
    """

    info: ClassVar[MethodInfo] = M.OPD
    rule: ClassVar[str] = "distill:distill_update"
    teacher: str
    base_url: Union[str, None] = None
    divergence: _choice(D.DIVERGENCES, D.OPD_DIVERGENCE) = D.OPD_DIVERGENCE
    top_k: _int_knob(1, D.OPD_TOP_K) = D.OPD_TOP_K
    ratio_cap: _float_knob(1.0, None, D.OPD_RATIO_CAP, lo_open=False, allow_inf=True) = D.OPD_RATIO_CAP
    samples: _int_knob(1, D.OPD_SAMPLES) = D.OPD_SAMPLES
    temperature: TEMPERATURE = D.OPD_TEMPERATURE
    max_tokens: _int_knob(1, D.OPD_MAX_TOKENS) = D.OPD_MAX_TOKENS
    learning_rate: _optional_rate(D.OPD_LEARNING_RATE_FULL, D.OPD_LEARNING_RATE_LORA) = None

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

    info: ClassVar[MethodInfo] = M.OPSD
    rule: ClassVar[str] = "distill:distill_update"
    privileged: str = D.OPSD_PRIVILEGED
    divergence: _choice(D.DIVERGENCES, D.OPSD_DIVERGENCE) = D.OPSD_DIVERGENCE
    ratio_cap: _float_knob(1.0, None, D.OPD_RATIO_CAP, lo_open=False, allow_inf=True) = D.OPD_RATIO_CAP
    anchor: Annotated[str, BeforeValidator(_parse_anchor)] = f"{D.OPSD_ANCHOR}:{D.OPSD_EMA_RATE:g}"
    samples: _int_knob(1, D.OPSD_SAMPLES) = D.OPSD_SAMPLES
    temperature: TEMPERATURE = D.OPSD_TEMPERATURE
    max_tokens: _int_knob(1, D.OPSD_MAX_TOKENS) = D.OPSD_MAX_TOKENS
    template: str = D.OPSD_TEMPLATE
    learning_rate: _optional_rate(D.OPSD_LEARNING_RATE) = None

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

    def topk_loss(self, student_topk_logprobs: Any, teacher_topk_logprobs: Any, mask: Any = None) -> Any:
        from pick_a_method.methods.rules.distill import topk_divergence

        return topk_divergence(student_topk_logprobs, teacher_topk_logprobs, mask, divergence=self.divergence)
