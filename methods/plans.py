"""Each trainer's plans: for every method its entry in common/methods.py says the trainer runs, the function that
writes it in that trainer's terms; for every other method, the refusal that says why and what to do instead.

A trainer's writer (methods/prime_rl/plan.py, methods/trl/plan.py, methods/verl/plan.py) makes one ``Plans`` and
registers into it, as verl registers its advantage estimators (``register_adv_est`` in
verl/trainer/ppo/core_algos.py, v0.4.0): the method is named once, by its table entry, never by a string.
``Plans.missing()`` lists what a trainer neither writes nor refuses; tests/methods/test_method_table.py keeps it empty
and checks each registration against the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pick_a_method.common.methods import METHODS, MethodInfo, run_by

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class TrainerMethod:
    """A method with no update rule here (SFT, DPO: the trainer's own), and the knobs it was given."""

    info: MethodInfo
    knobs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def full_name(self) -> str:
        return self.info.name


class Plans(Generic[F]):
    """One trainer's plan functions and refusals, each under the table entries it serves."""

    def __init__(self, trainer: str, tool: str) -> None:
        self.trainer, self.tool = trainer, tool
        self.written: dict[MethodInfo, F] = {}
        self.refused: dict[MethodInfo, Callable[[MethodInfo], str]] = {}

    def writes(self, *methods: MethodInfo) -> Callable[[F], F]:
        """Register the decorated function as the plan of `methods`."""
        def register(fn: F) -> F:
            for m in methods:
                self.written[m] = fn
            return fn
        return register

    def refuses(self, *methods: MethodInfo) -> Callable[[Callable[[MethodInfo], str]], Callable[[MethodInfo], str]]:
        """Register the decorated function (the method -> why not, and the fix) as the refusal of `methods`."""
        def register(fn: Callable[[MethodInfo], str]) -> Callable[[MethodInfo], str]:
            for m in methods:
                self.refused[m] = fn
            return fn
        return register

    def plan_of(self, method: MethodInfo) -> F:
        """The plan function for `method`, or the trainer's refusal of it as a ValueError."""
        if method in self.written:
            return self.written[method]
        self.refuse(method)
        raise AssertionError("refuse raises")  # pragma: no cover

    def refuse(self, method: MethodInfo) -> None:
        why = self.refused.get(method)
        if why is not None:
            raise ValueError(why(method))
        raise ValueError(f"{self.tool} writes {', '.join(m.name for m in run_by(self.trainer))}; {method.name!r} is "
                         f"not one.")

    def missing(self) -> list[str]:
        """What the table and these registrations disagree on, as sentences (empty when they agree)."""
        out = [f"{m.name}: the table says {self.trainer} runs it, but no plan is registered"
               for m in run_by(self.trainer) if m not in self.written]
        out += [f"{m.name}: a plan is registered, but the table does not list {self.trainer}"
                for m in self.written if self.trainer not in m.trainers]
        out += [f"{m.name}: neither written nor refused by {self.trainer}"
                for m in METHODS.values() if m not in self.written and m not in self.refused]
        return out
