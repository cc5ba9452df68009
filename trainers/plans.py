"""Each trainer's plans: for every method its entry in common/methods.py says the trainer runs, the function that
writes it in that trainer's terms; for every other method, the refusal that says why and what to do instead.

A trainer's writer (trainers/prime_rl/plan.py, trainers/trl/plan.py, trainers/verl/plan.py) makes one ``Plans`` and
registers into it, as verl registers its advantage estimators (``register_adv_est`` in
verl/trainer/ppo/core_algos.py, v0.4.0): the method is named once, by its table entry, never by a string.
``Plans.missing()`` lists what a trainer neither writes nor refuses; tests/methods/test_method_table.py keeps it empty
and checks each registration against the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pick_a_method.common.methods import GRPO, METHODS, RAE, SINGLE_ROLLOUT, MethodInfo, run_by
from pick_a_method.common.next_step import placeholder
from pick_a_method.common.trainers import TRAINERS

F = TypeVar("F", bound=Callable[..., Any])
# What an Async correction the refusals name is (methods/defaults.py cites each).
CORRECTION_WHAT = {"ipo": "a mask on |pi_train - pi_sampler| <= ipo_threshold, a probability difference"}


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

    def __init__(self, trainer: str, tool: str, has: str) -> None:
        # has: what the trainer offers where a method it lacks would go (its advantages, its sampling), the
        # trainer's half of every refusal made from the table
        self.trainer, self.tool, self.has = trainer, tool, has
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
        raise ValueError(why(method) if why is not None else self.refusal(method))

    def refusal(self, m: MethodInfo) -> str:
        """Why this trainer cannot run `m` and what to do instead, made from m's table entry: what m needs, the
        trainers that run it, its update rule, the nearest method this trainer runs for the same data."""
        label = TRAINERS[self.trainer].label
        if self.trainer in m.trainers or not m.needs:
            return f"{self.tool} writes {', '.join(x.name for x in run_by(self.trainer))}; {m.name!r} is not one."
        fixes = [f"{TRAINERS[t].tool}(method='{m.name}', model={placeholder('model')}) writes {m.label} for "
                 f"{TRAINERS[t].label}" for t in m.trainers]
        if not m.rule:  # the trainers' own supervised methods: another writer, or nothing
            return (f"{self.tool} writes {label}'s RL runs; {m.label} ({m.needs}) is not one of them. Fix: "
                    + "; or ".join(fixes) + ".")
        if m in SINGLE_ROLLOUT:
            fixes += [f"ask for method='{RAE}' with knobs={{'group_size': 1}} (REINFORCE with an EMA baseline, which "
                      f"{label} runs at one rollout per prompt)" for _ in [RAE] if self.trainer in RAE.trainers]
        elif m.grouped:
            fixes.append(f"ask for method='{GRPO}' with a larger group (knobs={{'group_size': 16}}), a different method")
        fixes.insert(0, f"run {m.label}'s own update rule in your trainer (methods.make_method({m.name!r})"
                        f".update(batch); the preview_update tool shows what it keeps on a logged batch)")
        return (f"{label} cannot run {m.label}: it needs {m.needs}, and {self.has}. Writing the nearest config under "
                f"{m.label}'s name would train a different method. Fix: " + "; or ".join(fixes) + f". ({m.label}: "
                f"{m.source}.)")

    def no_correction(self, correction: str, name: str, how: Mapping[str, str]) -> ValueError:
        """The refusal of an Async correction this trainer lacks (`name`: the trainer and its version), with the
        ones it has (`how`: each as the trainer writes it) and the writers that have it."""
        has = [f"correction='{c}' ({how[c]})" for c in TRAINERS[self.trainer].corrections]
        others = [t.tool for t in TRAINERS.values() if correction in t.corrections]
        return ValueError(f"{name} has no {correction} correction ({CORRECTION_WHAT.get(correction, correction)}); its "
                          "corrections act on the ratio pi_train/pi_sampler. Fix: " + " or ".join(has)
                          + (f", or {' or '.join(others)}, which has {correction}." if others else "."))

    def missing(self) -> list[str]:
        """What the table and these registrations disagree on, as sentences (empty when they agree)."""
        out = [f"{m.name}: the table says {self.trainer} runs it, but no plan is registered"
               for m in run_by(self.trainer) if m not in self.written]
        out += [f"{m.name}: a plan is registered, but the table does not list {self.trainer}"
                for m in self.written if self.trainer not in m.trainers]
        out += [f"{m.name}: {self.trainer} neither writes nor refuses it (give its table entry `needs`)"
                for m in METHODS.values() if m not in self.written and m not in self.refused and not m.needs]
        return out
