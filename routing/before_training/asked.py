"""What the route knows as it asks: the rows read once (the trained model's own, the other samplers', a teacher's),
the table of counts built from them, the caller's options, and what each question has found so far. The verdict
is built here, in one place (`Asked.verdict`), from the question that decided."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import defaults as D
from pick_a_method.common import methods as M
from pick_a_method.common.errors import InputError
from pick_a_method.common.trainers import trainer_info

from .advice import before_gpu
from pick_a_method.common.config_call import config_call
from .compare import on_policy, sampler_kinds
from ..forecasting import check_gpus
from ..forecasting import confidence_fields, signal, table_moments
from ..after_training import Frozen, check_freeze, freeze, pool_step
from ..shared import rows_arguments
from ..readers import as_rows
from ..rows import GradedRows, RowsLike
from ..table import Table, table_of
from ..verdicts import NextStep, OnPolicy, Route, TraceStep
from .options import RouteOptions


@dataclass
class Decision:
    """A question's answer when it settles the route."""

    route: str
    methods: list[str]
    summary: str
    next_step: NextStep
    alternatives: list[NextStep] = field(default_factory=list)
    gpu: bool = True  # list the checks to run before a GPU run (not for routes that say "fix the data first")


@dataclass
class Asked:
    all_rows: GradedRows  # every row read
    rows: GradedRows  # the trained model's own rows (all rows unless the file holds other samplers too)
    others: dict[str, GradedRows]  # each other sampler's rows in the same file
    teacher_rows: GradedRows | None  # rows the caller gave as a teacher's
    o: RouteOptions
    full: Table  # the table of `rows`, ungraded groups too
    g: Table  # its graded groups
    args: dict[str, Any]  # the arguments that read these rows again
    needs: list[str]
    trace: list[TraceStep] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sure: dict[str, Any] = field(default_factory=dict)  # confidence, rollout advice and cost, once rates decide
    found: dict[str, Any] = field(default_factory=dict)  # what one question found that a later one reads
    write_roots: Any = None  # where freeze may write (the server's allowed folders; None: anywhere)

    @classmethod
    def start(cls, rows: RowsLike, teacher_rows: RowsLike | None, o: RouteOptions,
              fields: Mapping[str, str] | None, write_roots: Any = None) -> Asked:
        trainer_info(o.trainer)  # a bad trainer, GPU count or freeze path is refused before anything is read
        check_gpus(o.gpus, o.throughput)
        if o.freeze is not None:
            check_freeze(o.freeze, write_roots)
        all_rows = as_rows(rows, fields=fields)
        t_given = as_rows(teacher_rows, what="teacher_rows", fields=fields) if teacher_rows is not None else None
        own, others = split_samplers(all_rows, o.model)
        full = table_of(own, o.pass_threshold)
        args, needs = rows_arguments(all_rows)
        if o.model:
            args["model"] = o.model
        asked = cls(all_rows=all_rows, rows=own, others=others, teacher_rows=t_given, o=o, full=full,
                    g=full.graded(), args=args, needs=needs, write_roots=write_roots)
        unnamed = all_rows.n_rollouts - own.n_rollouts - sum(o.n_rollouts for o in others.values())
        if others and unnamed:
            asked.warn(f"{unnamed} rows name no model; with several samplers in the file they are left out of "
                       f"{o.model}'s rows")
        asked.warn(*all_rows.notes)  # what the reader saw (scorers, sidecars, fields not read), whatever decides
        return asked

    # -- what the questions share ---------------------------------------------------------------------------------

    def ask(self, question: int, name: str, answer: str, decided: bool, evidence: dict[str, Any]) -> TraceStep:
        step = TraceStep(question=question, name=name, answer=answer, decided=decided, evidence=evidence)
        self.trace.append(step)
        return step

    def warn(self, *lines: str) -> None:
        self.warnings += [w for w in lines if w not in self.warnings]

    def config(self, method: str, **kwargs: Any) -> NextStep:
        """The next step that writes the trainer's config for `method` (routing/config_call.py)."""
        return config_call(trainer_info(self.o.trainer), method, taskset=self.o.taskset, model=self.o.model, **kwargs)

    @functools.cached_property
    def on_policy(self) -> OnPolicy:
        return on_policy(self.all_rows, self.o.model, pass_threshold=self.o.pass_threshold)

    @property
    def pairs(self) -> bool:
        return bool(self.o.preference_pairs) or self.rows.has_pairs

    @property
    def tail(self) -> str:
        """Where the questions the rates do not decide lead (question 4's answer is not a rate: a resample holds it)."""
        return (M.DPO if self.pairs else M.SFT).name if self.on_policy.kind == "other_model" else M.GRPO.name

    def how_sure(self, teacher: tuple | None = None) -> None:
        """Re-decide the data-driven questions on resamples of the trained model's groups."""
        g = self.g
        total, spread, _ = table_moments(g)
        mask, _ = signal(g.c, g.n, total, spread, nonbinary=g.n_nonbinary > 0)
        found, _ = confidence_fields(g.c, g.n, tail=self.tail, teacher=teacher, effect=self.o.effect,
                                     signal_mask=mask)
        self.sure.update(found)

    # -- the verdict, built once ----------------------------------------------------------------------------------

    def frozen(self, d: Decision) -> Frozen | None:
        """The held-out draw, written where route was asked to freeze and the route goes to the GPU; where the rows
        cannot give the tasks it asks (a suite too small), a warning instead: the advice says what to change."""
        if self.o.freeze is None:
            return None
        if not d.gpu:
            self.warn(f"nothing frozen: route {d.route} says to fix the rows before training; freeze once it routes "
                      f"to a method")
            return None
        try:
            return freeze(self.rows, self.o.effect, out=self.o.freeze, allowed_roots=self.write_roots,
                          pass_threshold=self.o.pass_threshold, model=self.o.model)
        except InputError as e:
            if e.field != "n_tasks":
                raise
            self.warn(f"nothing frozen into {os.fspath(self.o.freeze)}: the rows hold fewer graded tasks than the "
                      f"held-out set needs (the before-the-GPU advice says what to change)")
            return None

    def verdict(self, d: Decision) -> Route:
        frozen = self.frozen(d)  # before the warnings are gathered: it may add one
        if frozen is not None:
            self.warn(*frozen.warnings)
            if frozen.pool_tasks is not None and d.next_step.tool is not None:  # the run trains on the pool only
                step, summary = pool_step(d.next_step, d.summary, frozen.pool_tasks, frozen.n_tasks)
                d = replace(d, next_step=step, summary=summary)
        checks = before_gpu(self.g, self.o.model, self.o.effect, frozen) if d.gpu else []
        extra = dict(self.sure)
        summary = d.summary
        if "confidence" in extra and extra["confidence"] < D.CONFIDENCE_SAY_BELOW:
            summary += (f" Not sure: {extra['confidence']:.0%} of task resamples give this route, "
                        f"{extra['runner_up_share']:.0%} give {extra['runner_up']}; score more tasks to settle it.")
        return Route(verdict=d.route, route=d.route, methods=d.methods, summary=summary, next_step=d.next_step,
                     trace=sorted(self.trace, key=lambda t: t.question), alternatives=list(d.alternatives),
                     before_gpu=checks,
                     warnings=list(dict.fromkeys(self.warnings)), model=self.o.model, n_rows=self.all_rows.n_rollouts,
                     n_tasks=self.g.n_tasks, **extra)


def split_samplers(rows: GradedRows, model: str | None) -> tuple[GradedRows, dict[str, GradedRows]]:
    """The trained model's own rows (and older copies of it), and each other sampler's rows, when the file holds
    both; else all rows and no others. Groups of different samplers are never pooled either way."""
    if not model or len(rows.model_names) < 2:
        return rows, {}
    kinds, _ = sampler_kinds(rows, model)
    mine = [c for c, k in kinds.items() if k != "other"]
    others = [c for c, k in kinds.items() if k == "other"]
    if not mine or not others:
        return rows, {}
    own = np.isin(rows.model, mine)
    return rows.subset(own), {rows.model_names[c]: rows.subset(rows.model == c) for c in others}
