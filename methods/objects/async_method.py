"""Async: a staleness bound and a per-token correction around a grouped or distillation method."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Union

from pydantic import BeforeValidator, Field, field_validator, model_validator

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects.base import Method, _choice, _float_knob, _int_knob, _pair
from pick_a_method.methods.objects.distill import OPD, OPSD
from pick_a_method.methods.objects.grouped import GRPO, RAE, MaxRL


_INNER = ", ".join(M.ASYNC.wraps)


def _coerce_inner(value: Any) -> Any:
    if isinstance(value, Method) and value.name in M.ASYNC.wraps:
        return value
    if isinstance(value, Method):
        raise ValueError(
            f"method must be one of {_INNER}; {type(value).__name__} cannot be wrapped"
            + (" (it carries its own off-policy handling: use it directly)" if value.info.rule else "")
        )
    from pick_a_method.methods.objects.registry import make_method  # the registry holds Async

    if isinstance(value, str):
        info, inner = M.method_info(value)
        if inner is not None or info.name not in M.ASYNC.wraps:
            raise ValueError(f"Async wraps one of {_INNER}; got {value!r}")
        if info is M.OPD:
            raise ValueError(
                f"Async(method='{M.OPD}') needs the teacher: pass method={{'name': '{M.OPD}', 'teacher': "
                "'model@http://host/v1'} or an OPD object"
            )
        return make_method(info.name)
    if isinstance(value, Mapping):
        spec = dict(value)
        inner_name = spec.pop("name", None)
        if not isinstance(inner_name, str):
            raise ValueError(f"method given as a mapping needs a 'name' (one of {_INNER}); got {value!r}")
        return _coerce_inner(make_method(inner_name, **spec))
    raise ValueError(f"method must be one of {_INNER} (a name, a mapping {{'name': ..., **knobs}} or an object); "
                     f"got {value!r}")


class Async(Method):
    """Bounded staleness plus a per-token correction around grpo, max_rl, rae, OPD or OPSD.

    A trajectory older than ``off_policy_steps`` policy versions is dropped (when the batch carries
    its lag): lags 0..off_policy_steps are kept, 0 is on-policy. The trainer configs write this same bound in
    each trainer's own count (verl's threshold counts the versions a rollout spans: off_policy_steps + 1). Each kept token's coefficient is then corrected with the importance ratio
    rho = pi_train/pi_sampler: ``ipo`` keeps rho*c where |pi_train - pi_sampler| <= ipo_threshold,
    ``icepop`` keeps rho*c where low <= rho <= high (inclusive), ``tis`` multiplies c by min(rho, cap).
    Every kept rho is also capped at ``ratio_cap`` (default 20, verl's DPPO truncation; it binds only under
    ipo). Our ipo leaves out prime-rl's ``kl_tau * (log rho)^2`` loss term (see ``defaults``).
    """

    info: ClassVar[MethodInfo] = M.ASYNC
    rule: ClassVar[str] = "corrections:async_update"
    off_policy_guard: ClassVar[bool] = True
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
    def stateful(self) -> bool:
        return self.method.stateful

    @property
    def full_name(self) -> str:
        return f"{self.name} {self.method.name}"

    @property
    def inner_name(self) -> str:
        return self.method.name

