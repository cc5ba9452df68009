"""The route: the skill's questions in its order (whileai's pick-a-method skill v2.0.0, section 6, "The route, end
to end": github.com/whilehq/whileai-sdk, skills/pick-a-method/SKILL.md); the first that decides, stops.

Each question is a function in steps.py that reads the rows read once and their table (asked.py) and returns a
Decision when it settles the route; the verdict is built in one place (`Asked.verdict`). To add a question,
write its step and put it in STEPS where the skill asks it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from pick_a_method.common.errors import InputError

from .asked import Asked
from .options import RouteOptions
from ..rows import RowsLike
from .steps import (band_step, graded_step, grader_step, grpo_step, on_policy_step, reward_scale_step, rollouts_step,
                    teacher_step, truncation_step)
from ..verdicts import Route

# The skill's order: reward scale, the grader's replies (question 0) and truncation (is the grade sound?), anything
# graded, k = 1, floor or saturated, a teacher (the skill asks it before question 4), on-policy, then GRPO, which
# always decides.
STEPS = (reward_scale_step, grader_step, truncation_step, graded_step, rollouts_step, band_step, teacher_step,
         on_policy_step, grpo_step)


def route(rows: RowsLike, model: str | None = None, teacher_rows: RowsLike | None = None, *,
          fields: Mapping[str, str] | None = None, allowed_roots: Sequence[Any] | None = None,
          **options: Any) -> Route:
    """Route graded rows to a training method; `trace` holds each question's answer and evidence, in question order.

    `options` are the fields of routing.RouteOptions (the threshold, the effect, the teacher, the trainer, the GPUs,
    the freeze, ...); an unknown one is refused by name. `fields` maps your field names (see routing.fields); `trainer` ("prime-rl", "trl" or
    "verl") picks the config tool next_step names. When the rows hold the trained model's rollouts beside other
    models', the route reads the trained model's own rows and scores each other model as an OPD teacher on the
    shared tasks. `gpus` and `throughput` ({"inference_tokens_per_s_per_gpu": x, "trainer_tokens_per_s_per_gpu": y})
    give a grouped route's cost prime-rl's inference / trainer GPU split, which prime_rl_config's next step then
    carries as `gpus`. `freeze` (a .json path) writes the held-out manifest before_gpu sizes (routing.freeze: a
    seeded draw of the trained model's graded tasks) where the route goes to the GPU, never over a file and inside
    `allowed_roots` when given; `after(..., frozen=that path)` then judges the trained checkpoint on those tasks."""
    unknown = sorted(set(options) - set(RouteOptions.model_fields))
    if unknown:  # named with the closest option, as the tools name a misspelt argument
        close = difflib.get_close_matches(unknown[0], RouteOptions.model_fields, n=1)
        raise InputError(f"route takes no option {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; its options: {', '.join(RouteOptions.model_fields)}", field=unknown[0])
    try:
        o = RouteOptions(model=model, **options)
    except ValidationError as e:  # a value of the wrong kind: named, with what the option takes
        first = e.errors()[0]
        name = ".".join(map(str, first["loc"]))
        raise InputError(f"route's option {name}={first.get('input')!r}: {first['msg']}", field=name) from None
    asked = Asked.start(rows, teacher_rows, o, fields, allowed_roots)
    for step in STEPS:
        decision = step(asked)
        if decision is not None:
            return asked.verdict(decision)
    raise AssertionError("grpo_step always decides")  # pragma: no cover
