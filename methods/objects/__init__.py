"""The method objects: validated, frozen knobs for every post-training method the skill routes to.

Each object is a pydantic v2 model (frozen, unknown knobs refused) with a class-level ``name``.
A bad knob is refused when the object is built, with a ``ValueError`` (pydantic's
``ValidationError`` is one) whose message names the knob, the allowed range and the default.

This module never imports torch: the update rules (``obj.update(batch)``) import it on first call,
so a server can list and validate methods without paying torch's start-up cost.

One module a family: ``base`` (the base class and knob checkers), ``grouped``, ``distill``,
``single_rollout``, ``shaping``, ``async_method``, and ``registry`` (names and ``make_method``).
"""

from pick_a_method.methods.objects.async_method import Async
from pick_a_method.methods.objects.base import Method
from pick_a_method.methods.objects.distill import OPD, OPSD
from pick_a_method.methods.objects.grouped import GRPO, RAE, MaxRL
from pick_a_method.methods.objects.registry import METHODS, make_method, method_names
from pick_a_method.methods.objects.shaping import GroupwiseGrading, ReinforceAda
from pick_a_method.methods.objects.single_rollout import BPCO, SAO, FlashReinforce

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
