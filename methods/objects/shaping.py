"""Reward shaping and sampling: GroupwiseGrading (saturated sets) and ReinforceAda (few split tasks)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Union

from pydantic import PrivateAttr, field_validator, model_validator

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects.base import Method, _bool_knob, _choice, _float_knob, _int_knob


class GroupwiseGrading(Method):
    """Groupwise grading (MiMo-V2.6 report section 4.3): reshape rewards or advantages inside each group.

    ``mode="reward"`` (GRS) multiplies each passing reward by ``max(floor, solution) * max(floor,
    behavior)`` from ``grader(item, rubric)``; ``mode="advantage"`` (GAR) asks ``grader(group)`` for a
    ranking (or factors) of the passes and redistributes the pass mass towards the better ones.
    ``grader`` may be None only for a preview (shaping is then skipped and said so).
    """

    info: ClassVar[MethodInfo] = M.GROUPWISE_GRADING
    rule: ClassVar[str] = "groupwise:groupwise_update"
    grader: Union[Callable[..., Any], None] = None
    mode: _choice(D.GROUPWISE_MODES, D.GROUPWISE_MODE) = D.GROUPWISE_MODE
    rubrics: Any = None
    floor: _float_knob(0.0, 1.0, D.GROUPWISE_FLOOR, lo_open=False, hi_open=True) = D.GROUPWISE_FLOOR
    cap: _float_knob(1.0, None, D.GROUPWISE_CAP, lo_open=False) = D.GROUPWISE_CAP
    min_factor: _float_knob(0.0, 1.0, D.GROUPWISE_MIN_FACTOR) = D.GROUPWISE_MIN_FACTOR
    hack_zero: _bool_knob(D.GROUPWISE_HACK_ZERO) = D.GROUPWISE_HACK_ZERO
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


class ReinforceAda(Method):
    """Reinforce-Ada-Seq (Xiong et al. 2025, arXiv:2510.04996): sample until a group splits.

    ``obj(draw, prompts)`` draws ``round_size`` samples per active prompt per round, retires a prompt
    when its exit rule is met (``balanced``: keep//2 right and keep - keep//2 wrong; ``positive``:
    one right), and keeps ``keep`` samples per prompt with A = r - (pass rate over everything drawn).
    """

    info: ClassVar[MethodInfo] = M.REINFORCE_ADA
    rule: ClassVar[str] = "reinforce_ada:ada_update"
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

