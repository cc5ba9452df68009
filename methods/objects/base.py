"""The base of every method object, and the knob checkers its subclasses declare their knobs with.

The checkers run as pydantic "before" validators so a bad knob's message is ours (the knob, its range, its
default), not pydantic's.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D


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


@dataclass(frozen=True)
class DefaultRate:
    """A method's default learning rate, full and with LoRA (the same where its source gives one): the metadata of its
    `learning_rate` knob, which `Method.resolved_learning_rate` reads when the knob is left None."""

    full: float
    lora: float | None = None

    def words(self) -> str:
        return f"{self.full:g}" if self.lora is None else f"{self.full:g} full, {self.lora:g} with LoRA"


def _optional_rate(full: float, lora: float | None = None) -> Any:
    """A learning rate: None (use the method's default, `full` or `lora`) or a finite number > 0."""
    default = DefaultRate(full, lora)

    def check(value: Any, info: ValidationInfo) -> float | None:
        if value is None:
            return None
        if not (_is_real(value) and math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(
                f"{info.field_name} must be None (meaning {default.words()}) or a finite number > 0; got {value!r}"
            )
        return float(value)

    return Annotated[Union[float, None], BeforeValidator(check), default]


def _bool_knob(default: bool) -> Any:
    """A switch: true or false only (pydantic would read "yes" or 1 as true)."""

    def check(value: Any, info: ValidationInfo) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"{info.field_name} must be true or false (default {default}); got {value!r}")
        return value

    return Annotated[bool, BeforeValidator(check)]


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


# The method objects by their table name, each added as its class is defined (Method.__pydantic_init_subclass__): a
# method registers on its table entry, as the trainers' plans do (trainers/plans.py), never in a hand-kept list.
REGISTERED: dict[str, type[Method]] = {}


class Method(BaseModel):
    """Base of every method object. ``info`` is its entry in the method table (common/methods.py: its name,
    spellings, source and the trainers that run it), ``name`` that entry's name; ``update`` runs the rule."""

    model_config = _COMMON
    info: ClassVar[MethodInfo]
    name: ClassVar[str]
    off_policy_guard: ClassVar[bool] = False  # it drops or masks stale tokens itself (a trust gate, a band, a clip)
    rule: ClassVar[str]  # its update rule, "module:function" in methods/rules/

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "info" not in vars(cls) and cls.__name__.startswith("_"):
            return  # a family's shared base (SAO's and BPCO's critic): not a method of its own
        cls.name = cls.info.name
        if cls.__name__ != cls.info.object_name:
            raise TypeError(f"{cls.__name__} is method {cls.info.name!r}, whose table entry names its object "
                            f"{cls.info.object_name!r} (common/methods.py)")
        if not isinstance(getattr(cls, "rule", None), str) or ":" not in cls.rule:
            raise TypeError(f"{cls.__name__} names no update rule: set rule = \"module:function\" (methods/rules/)")
        REGISTERED[cls.name] = cls

    @property
    def full_name(self) -> str:
        """The name a tool call takes for this method with what it wraps: its name, or "async <inner>" for Async."""
        return self.name

    @property
    def stateful(self) -> bool:
        """Its update moves state kept on the object (rae's baselines); ``update(batch, commit=False)`` leaves it."""
        return False

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

    def resolved_learning_rate(self, lora: bool = False) -> float:
        """The `learning_rate` knob, or the method's default for a full or a LoRA run (its knob's DefaultRate)."""
        if getattr(self, "learning_rate", None) is not None:
            return self.learning_rate
        field = type(self).model_fields.get("learning_rate")
        default = next((m for m in field.metadata if isinstance(m, DefaultRate)), None) if field else None
        if default is None:
            raise NotImplementedError(f"{type(self).__name__} sets no learning rate of its own")
        return default.lora if lora and default.lora is not None else default.full

    def update(self, batch: Any, **kwargs: Any) -> Any:
        """Run the method's update rule on a batch (a ``methods.Batch`` or a list of trajectory dicts).

        Keyword arguments every rule takes: ``dtype``/``device`` (the batch's, when converting), ``validate``
        (check the inputs, default True), ``stats`` (compute stats and notes, default True; False is the hot
        path), ``process_group`` (take batch statistics over that group's ranks; default: this rank only),
        ``distributed=True`` (the world group). The batch may carry autograd graphs: the rule never follows them.
        """
        module, _, function = self.rule.partition(":")  # imported on use: torch loads with the first update
        return getattr(importlib.import_module(f"pick_a_method.methods.rules.{module}"), function)(self, batch,
                                                                                                   **kwargs)
