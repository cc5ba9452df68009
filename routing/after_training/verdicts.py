"""The verdict of `after` and its evidence (pydantic models, the same the MCP tool returns)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

from ..verdicts import Interval, Verdict


class Difference(BaseModel):
    """A paired difference over the compared tasks: the mean of per-task differences in pass rate, and its interval."""

    of: str = Field(description="What minus what, e.g. 'after - before'.")
    n_shared: int = Field(description="Tasks both sides scored (the compared tasks).")
    mean_diff: float = Field(description="Mean over the compared tasks of the per-task difference in pass rate.")
    ci95: Interval | None = Field(description="95% paired interval (MOVER from both arms' limits, each capped at "
                                              "its rollouts); null under 3 tasks.")


class ControlComparison(Difference):
    """The real arm against a control on the same tasks (after - control), and the control's own gain."""

    gain: Difference = Field(description="control - before: what the control arm gained by itself.")
    explains_gain: bool = Field(description="The control gained significantly, or at least as much as the real arm.")


class Arm(BaseModel):
    name: Literal["before", "after", "random_selection", "random_reward"] | str
    model: str | None = Field(description="The model that sampled most of the arm's rows.")
    n_tasks: int = Field(description="Compared tasks this arm scored.")
    n_rows: int = Field(description="The arm's rows on the compared tasks.")
    k: int = Field(description="The smallest graded group on the compared tasks.")
    pass_at_1: float | None
    ci95: Interval | None = Field(description="95% task-level interval (pass_at's).")
    cut_off_share: float | None = Field(description="Share of rows cut off at the token cap (of those that say).")
    mean_tokens: float | None = Field(description="Mean completion tokens, where the rows state them.")
    max_tokens: float | None = Field(description="The token cap the rows say they were sampled at (median).")


class Flips(BaseModel):
    """Tasks whose majority outcome changed (pass rate across 1/2), and how many moved at all."""

    fail_to_pass: int
    pass_to_fail: int
    up: int = Field(description="Tasks whose pass rate rose.")
    down: int = Field(description="Tasks whose pass rate fell.")
    same: int
    fail_to_pass_tasks: list[str] = Field(description="The first few fail -> pass tasks.")
    pass_to_fail_tasks: list[str] = Field(description="The first few pass -> fail tasks.")


class CutOffs(BaseModel):
    """Replies cut at the token cap, before and after, on the compared tasks."""

    before_share: float | None
    after_share: float | None
    change: Difference | None = Field(description="after - before in per-task cut-off share, paired; null where the "
                                                  "rows do not say whether a reply was cut off.")
    length_hacking: bool | None = Field(description="A gain that came with significantly more cut-off replies "
                                                    "(null: not stated).")
    mean_tokens_before: float | None = None
    mean_tokens_after: float | None = None


class Sizing(BaseModel):
    """What the compared tasks can show, and what would decide."""

    of: str = Field(description="The comparison sized (the undecided one with the widest need).")
    task_std: float = Field(description="One task's paired-difference sd used.")
    sd_source: Literal["rows", "model"]
    detectable_effect: float = Field(description="The smallest gain the interval in hand detects at power 0.8, "
                                                 "alpha 0.05.")
    n_tasks: int = Field(description="Held-out tasks at the rows' k that would decide (see basis).")
    basis: Literal["effect", "observed"] = Field(description=(
        "effect: n_tasks detect the registered effect from the measured sd (holdout_size's formula); observed: the "
        "tasks in hand already do, and the observed gain sits between 0 and the effect, so n_tasks is what would "
        "tell it from either, if it holds."))
    k: int = Field(description="Rollouts per task now (the smaller arm's smallest group).")
    k_needed: int | None = Field(description="Rollouts per task on the tasks in hand that would detect the effect; "
                                             "null when more rollouts cannot (k_why).")
    k_why: str | None = None


class Guard(Difference):
    """A guarded behaviour (its own before/after pair): regressed under Holm's step-down across the guards?"""

    name: str
    regressed: bool
    tested_at: float = Field(description="The interval level Holm tested it at last (1 - 0.05 / guards standing).")
    tested_ci: Interval | None
    pass_to_fail: int = 0  # the guard's own tasks that flipped pass -> fail
    pass_to_fail_tasks: list[str] = Field(default_factory=list)


class FrozenCheck(BaseModel):
    path: str | None
    n_tasks: int
    effect: float
    k: int
    missing: dict[str, list[str]] = Field(description="Arm -> frozen tasks it did not score (the first few).")
    dropped: int = Field(description="Tasks outside the frozen set, left out of every comparison.")


AfterName = Literal["not_comparable", "worse", "contamination", "selection_problem", "proven", "no_gain",
                    "underpowered"]


class After(Verdict):
    """After the GPU: did the trained checkpoint improve on the held-out tasks, beyond noise and its controls?"""

    verdict: AfterName
    effect: float = Field(description="The registered effect (the frozen manifest's where one is given).")
    decided_by: str = Field(description="The rule that gave the verdict, with its numbers.")
    paired: Difference | None = Field(None, description="after - before over the compared tasks.")
    random_selection: ControlComparison | None = None
    random_reward: ControlComparison | None = None
    guards: list[Guard] = Field(default_factory=list)
    arms: list[Arm]
    flips: Flips | None = None
    cut_offs: CutOffs | None = None
    sizing: Sizing | None = None
    frozen: FrozenCheck | None = None
    not_comparable: list[str] = Field(default_factory=list, description="Why the arms cannot be compared.")
    n_tasks: int = Field(description="Tasks compared: every arm scored them (the frozen ones where given).")
    _tasks: list[str] = PrivateAttr(default_factory=list)  # their ids, for the picture; not sent

    _paired_by: str = PrivateAttr(default="task id")  # "prompt" where the ids did not meet (a warning says so)

    @property
    def paired_by(self) -> str:
        """What paired the arms' tasks: "task id", or "prompt" (two tools' runs of the same tasks)."""
        return self._paired_by

    def compared_tasks(self) -> list[str]:
        """The ids of the compared tasks, in the compared order (empty where the arms were not comparable)."""
        return self._tasks
