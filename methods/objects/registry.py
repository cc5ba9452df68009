"""The registry: canonical names, common spellings, and ``make_method``."""

from __future__ import annotations

import re
from typing import Any

from pick_a_method.methods.objects.async_method import _ASYNC_INNER, Async
from pick_a_method.methods.objects.base import Method
from pick_a_method.methods.objects.distill import OPD, OPSD
from pick_a_method.methods.objects.grouped import GRPO, RAE, MaxRL
from pick_a_method.methods.objects.shaping import GroupwiseGrading, ReinforceAda
from pick_a_method.methods.objects.single_rollout import BPCO, SAO, FlashReinforce


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
