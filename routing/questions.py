"""The skill's questions, one function each: graded rows in, a verdict out.

Each function takes a list of row dicts or the `GradedRows` that `read_rows` returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import defaults as D
from .errors import InputError
from .rows import NAME_LIMIT, GradedRows, RowsLike, as_rows, display_name
from .stats import bootstrap_ci, pass_at_k_per_group, split_probability
from .verdicts import (Band, NextStep, OnPolicy, PairedDifference, PassAt, RolloutsPerTask, RowRef,
                       TeacherClears, TruncatedPasses)

MAX_K = 1_000_000_000  # rollouts per task; a larger k is a mistake, and past 1.8e308 one that overflows


# ---------------------------------------------------------------------------------------------------------
# Shared pieces


def rows_arguments(rows: GradedRows) -> tuple[dict[str, Any], list[str]]:
    """The `rows_path` argument that re-reads these rows, or a note that the caller must pass them again."""
    if rows.source is not None:
        return {"rows_path": rows.source}, []
    return {}, ["rows"]


def _check_threshold(pass_threshold: float) -> float:
    if not np.isfinite(pass_threshold):
        raise InputError(f"pass_threshold is {pass_threshold}; give a finite number (default "
                         f"{D.PASS_THRESHOLD}: a row passes when reward >= it)", field="pass_threshold")
    return float(pass_threshold)


@dataclass(frozen=True)
class Groups:
    """Per-task counts over graded rows; tasks with no graded row are left out."""

    names: list[str]
    n: np.ndarray  # graded rollouts per task
    c: np.ndarray  # passes per task
    n_graded: int
    n_ungraded: int
    n_nonbinary: int

    @property
    def rates(self) -> np.ndarray:
        return self.c / self.n


def groups(rows: GradedRows, pass_threshold: float = D.PASS_THRESHOLD) -> Groups:
    graded = ~np.isnan(rows.reward)
    task = rows.task[graded]
    reward = rows.reward[graded]
    n = np.bincount(task, minlength=rows.n_tasks)
    c = np.bincount(task, weights=(reward >= pass_threshold), minlength=rows.n_tasks)
    keep = n > 0
    names = rows.task_names if keep.all() else [rows.task_names[i] for i in np.flatnonzero(keep)]
    nonbinary = int(((reward != 0.0) & (reward != 1.0)).sum())
    return Groups(names, n[keep], c[keep].astype(np.int64), int(graded.sum()), int((~graded).sum()), nonbinary)


def grading_warnings(rows: GradedRows, g: Groups, pass_threshold: float) -> list[str]:
    """What the caller must know about how the rows were graded."""
    out = []
    if g.n_ungraded:
        nan = f" ({rows.n_nan_rewards} of them NaN: did the grader fail?)" if rows.n_nan_rewards else ""
        out.append(f"{g.n_ungraded} of {len(rows)} rows carry no reward{nan}; they are left out of every rate, "
                   f"not counted as fails")
    if rows.missing_reward_hint:
        out.append(f"no row has a `reward` field{rows.missing_reward_hint}")
    if g.n_nonbinary:
        out.append(f"{g.n_nonbinary} graded rows have a reward other than 0 or 1; a row passes when reward >= "
                   f"{pass_threshold:g} (set pass_threshold to change that)")
    graded = rows.reward[~np.isnan(rows.reward)]
    if len(graded) >= 2 and graded.min() == graded.max():
        out.append(f"every graded row scored {graded[0]:g}; check the grader before reading any rate")
    return out


def _listing(names: list[str], values: list[float]) -> dict[str, float]:
    """name -> value, stopping once the listed names reach LIST_CHARS characters (answers stay small)."""
    out, used = {}, 0
    for name, value in zip(names, values):
        used += min(len(name), NAME_LIMIT) + 24
        if used > D.LIST_CHARS and out:
            break
        out[name] = value
    return out


def _cap(items: list[Any], limit: int = D.LIST_LIMIT) -> tuple[list[Any], int]:
    return items[:limit], max(0, len(items) - limit)


# ---------------------------------------------------------------------------------------------------------
# Question 1


def truncated_passes(rows: RowsLike, *, pass_threshold: float = D.PASS_THRESHOLD) -> TruncatedPasses:
    """Question 1: count rows cut off at the token cap that still passed. Any count above zero: fix the reward
    first (a truncated reply must fail, or raise max_tokens); DAPO penalizes over-long samples for this reason."""
    rows = as_rows(rows)
    pass_threshold = _check_threshold(pass_threshold)
    passed = rows.truncated & (rows.reward >= pass_threshold)  # NaN compares false: ungraded never passes
    hits = np.flatnonzero(passed)
    n_trunc = int(rows.truncated.sum())
    stated = rows.n_truncation_stated
    args, needs = rows_arguments(rows)
    examples, omitted = _cap(hits.tolist())
    tasks = list(dict.fromkeys(display_name(rows.task_names[t]) for t in rows.task[hits[: 10 * D.LIST_LIMIT]]))[
        : D.LIST_LIMIT]
    common = dict(count=len(hits), truncated_rows=n_trunc, share=(n_trunc / stated) if stated else None,
                  n_rows=len(rows), n_truncation_stated=stated, pass_threshold=pass_threshold,
                  examples=[RowRef(**r) for r in rows.refs(examples)], examples_omitted=omitted, tasks=tasks)
    if len(rows) == 0:
        return TruncatedPasses(verdict="empty", summary="No rows to check.", warnings=[],
                               next_step=NextStep(tool=None, why="Grade some rollouts first."), **common)
    if len(hits):
        where = ", ".join(rows.where(i) for i in examples[:5])
        return TruncatedPasses(
            verdict="fix_reward",
            summary=(f"{len(hits)} replies cut off at the token cap still passed (e.g. {where}). Truncation, not "
                     f"the model, decides the rates: make a truncated reply fail, or raise max_tokens, then re-grade."),
            next_step=NextStep(tool=None, arguments={"truncated_passes": [r.model_dump(exclude_none=True) for r in
                                                                          common["examples"]]},
                               why="Fix the reward so a cut-off reply fails (or raise max_tokens), re-grade these "
                                   "rows, and call route again."),
            **common)
    warnings = []
    if stated == 0:
        warnings.append("no row says whether it was cut off (`truncated` or `finish_reason`); question 1 cannot "
                        "be checked: add `truncated` to the rows")
    elif stated < len(rows):
        warnings.append(f"{len(rows) - stated} rows do not say whether they were cut off")
    verdict = "unknown" if stated == 0 else "ok"
    summary = ("No row states truncation, so whether a cut-off reply can pass is unknown." if stated == 0 else
               f"No cut-off reply passed ({n_trunc} of {stated} rows were cut off).")
    return TruncatedPasses(verdict=verdict, summary=summary, warnings=warnings,
                           next_step=NextStep(tool="route", arguments=args, needs=needs + ["model"],
                                              why="Go on to the other questions."), **common)


# ---------------------------------------------------------------------------------------------------------
# Question 2


def rollouts_per_task(rows: RowsLike, *, pass_threshold: float = D.PASS_THRESHOLD) -> RolloutsPerTask:
    """Question 2: graded rollouts per task. k = 1 means no grouped method: the group mean is the reward."""
    rows = as_rows(rows)
    g = groups(rows, pass_threshold)
    args, needs = rows_arguments(rows)
    if len(g.n) == 0:
        return RolloutsPerTask(verdict="empty", summary="No graded rows, so no groups.", k=0, k_max=0, k_median=0.0,
                               n_tasks=0, n_single=0, sizes={}, warnings=grading_warnings(rows, g, pass_threshold),
                               next_step=NextStep(tool=None, why="Grade the rollouts first."))
    sizes, counts = np.unique(g.n, return_counts=True)
    k, k_max, n_single = int(g.n.min()), int(g.n.max()), int((g.n == 1).sum())
    shown = dict(zip([str(s) for s in sizes.tolist()], counts.tolist()))
    if len(shown) > D.LIST_LIMIT:
        top = sorted(shown.items(), key=lambda kv: -kv[1])[: D.LIST_LIMIT]
        shown = dict(sorted(top, key=lambda kv: int(kv[0])))
    warnings = grading_warnings(rows, g, pass_threshold)
    if k_max == 1:
        verdict, summary = "single", f"One graded rollout per task ({len(g.n)} tasks): no grouped method applies."
    elif n_single * 2 > len(g.n):
        verdict = "mostly_single"
        summary = (f"{n_single} of {len(g.n)} tasks have one graded rollout: most groups carry no grouped signal.")
    else:
        verdict = "grouped"
        summary = f"{k} to {k_max} graded rollouts per task over {len(g.n)} tasks."
        if n_single:
            warnings.append(f"{n_single} tasks have a single graded rollout; a grouped method gets no signal from "
                            f"them: drop them or sample them again")
    if k != k_max:
        warnings.append(f"groups are uneven ({k} to {k_max} graded rollouts); k is the smallest")
    return RolloutsPerTask(verdict=verdict, summary=summary, k=k, k_max=k_max, k_median=float(np.median(g.n)),
                           n_tasks=len(g.n), n_single=n_single, sizes=shown, warnings=warnings,
                           next_step=NextStep(tool="band", arguments=args, needs=needs,
                                              why="Read the per-task band next."))


# ---------------------------------------------------------------------------------------------------------
# pass@1 / pass@k


def pass_at(rows: RowsLike, *, k: int | None = None, pass_threshold: float = D.PASS_THRESHOLD,
            per_task_offset: int = 0, per_task_limit: int | None = 100) -> PassAt:
    """Per-task pass rates, pass@1 with a 95% percentile bootstrap over tasks, and the unbiased pass@k and
    pass^k over the groups with at least k graded rollouts (k defaults to the smallest group of two or more)."""
    rows = as_rows(rows)
    pass_threshold = _check_threshold(pass_threshold)
    if k is not None and k < 1:
        raise InputError(f"k is {k}; k must be at least 1", field="k")
    if k is not None and k > MAX_K:  # an int past 4,300 digits cannot even be printed in a warning
        raise InputError(f"k is over {MAX_K:,}; give the rollouts per task to score pass@k at", field="k")
    if per_task_offset < 0 or (per_task_limit is not None and per_task_limit < 0):
        raise InputError("per_task_offset and per_task_limit must be 0 or more", field="per_task_offset")
    if per_task_offset > MAX_K:  # echoed back in the answer: keep it a number every client can read
        raise InputError(f"per_task_offset is over {MAX_K:,}; page from 0 up to the number of tasks",
                         field="per_task_offset")
    g = groups(rows, pass_threshold)
    warnings = grading_warnings(rows, g, pass_threshold)
    args, needs = rows_arguments(rows)
    common = dict(n_rows=len(rows), n_graded=g.n_graded, n_ungraded=g.n_ungraded, n_nonbinary=g.n_nonbinary,
                  pass_threshold=pass_threshold, per_task_offset=per_task_offset)
    if len(g.n) == 0:
        return PassAt(verdict="empty", summary="No graded rows: nothing to score. Grade the rollouts first.",
                      pass_at_1=None, ci95=None, k=int(k or 1), pass_at_k=None, pass_pow_k=None, n_tasks=0,
                      n_tasks_at_k=0, per_task={}, warnings=warnings,
                      next_step=NextStep(tool=None, why="Grade the rollouts (a program grader beats a judge)."),
                      **common)
    rates = g.rates
    p1 = float(rates.mean())
    ci = bootstrap_ci(rates)
    if k is None:
        multi = g.n[g.n >= 2]
        k = int(multi.min()) if len(multi) else 1
    at_k = pow_k = at_k_ci = pow_k_ci = None
    eligible = g.n >= k
    n_at_k = int(eligible.sum()) if k >= 2 else 0
    if k >= 2 and n_at_k:
        a, p = pass_at_k_per_group(g.n[eligible], g.c[eligible], k)
        at_k, pow_k = float(a.mean()), float(p.mean())
        at_k_ci, pow_k_ci = bootstrap_ci(a), bootstrap_ci(p)
        if n_at_k < len(g.n):
            warnings.append(f"{len(g.n) - n_at_k} tasks have fewer than {k} graded rollouts and are left out of "
                            f"pass@{k} and pass^{k}")
    elif k >= 2:
        warnings.append(f"no task has {k} graded rollouts, so pass@{k} and pass^{k} are not computed")
    if ci is None:
        warnings.append(f"no interval on pass@1: {len(g.n)} task(s), and a bootstrap over tasks needs "
                        f"{D.MIN_CI_TASKS}; score more tasks (a distinct task_id per task)")
    stop = None if per_task_limit is None else per_task_offset + per_task_limit
    per_task = _listing(g.names[per_task_offset:stop], rates[per_task_offset:stop].tolist())
    if any(len(name) > NAME_LIMIT for name in per_task):
        warnings.append(f"task ids longer than {NAME_LIMIT} characters are listed as their first 60 characters "
                        f"and a hash")
    per_task = {display_name(name): rate for name, rate in per_task.items()}
    ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " (no interval)"
    kway = f"; pass@{k} {at_k:.3f}, pass^{k} {pow_k:.3f}" if at_k is not None else ""
    return PassAt(
        verdict="measured" if ci else "no_interval",
        summary=f"pass@1 {p1:.3f}{ci_text} over {len(g.n)} tasks{kway}.",
        pass_at_1=p1, ci95=ci, k=k, pass_at_k=at_k, pass_pow_k=pow_k, pass_at_k_ci95=at_k_ci,
        pass_pow_k_ci95=pow_k_ci, n_tasks=len(g.n), n_tasks_at_k=n_at_k, per_task=per_task,
        per_task_omitted=len(g.names) - len(per_task), warnings=warnings,
        next_step=NextStep(tool="band", arguments=args, needs=needs, why="Read the per-task band next."), **common)


# ---------------------------------------------------------------------------------------------------------
# Question 3


def band(rows: RowsLike, *, pass_threshold: float = D.PASS_THRESHOLD) -> Band:
    """Question 3: floor (every task fails), saturated (every task passes) or mixed, the share of tasks that
    split (only those give a grouped method gradient) and the split share to expect at larger k."""
    rows = as_rows(rows)
    pass_threshold = _check_threshold(pass_threshold)
    g = groups(rows, pass_threshold)
    warnings = grading_warnings(rows, g, pass_threshold)
    args, needs = rows_arguments(rows)
    if len(g.n) == 0:
        return Band(verdict="empty", summary="No graded rows, so no band: grade the rollouts first.",
                    split_share=None, n_tasks=0, n_split=0, n_all_fail=0, n_all_pass=0, n_single=0, k=0,
                    pass_at_1=None, predicted_split_share={}, few_split=False, warnings=warnings,
                    next_step=NextStep(tool=None, why="Grade the rollouts first; ungraded rows are not fails."))
    rates = g.rates
    multi = g.n >= 2
    n_split = int(((rates > 0) & (rates < 1) & multi).sum())
    n_fail, n_pass = int((rates == 0).sum()), int((rates == 1).sum())
    n_single = int((~multi).sum())
    k = int(g.n[multi].min()) if multi.any() else 1
    split_share = n_split / int(multi.sum()) if multi.any() else None
    predicted = {str(kk): round(float(split_probability(rates, kk).mean()), 4)
                 for kk in sorted({*D.PREDICT_SPLIT_AT, max(k, 2)}) if kk >= max(k, 2)}
    if n_fail == len(rates):
        verdict = "floor"
        summary = (f"Floor: all {len(rates)} tasks fail. More rollouts cannot help (no draw passes); the model "
                   f"needs a demonstration: OPSD with privileged context, or SFT from a stronger model under ~7B.")
    elif n_pass == len(rates):
        verdict = "saturated"
        summary = (f"Saturated: all {len(rates)} tasks pass. A binary reward makes every pass equal; rank the passes "
                   f"(GroupwiseGrading) if they really differ, or harden the eval.")
    else:
        verdict = "mixed"
        share = f"{split_share:.0%}" if split_share is not None else "n/a"
        summary = f"Mixed: {n_split} of {int(multi.sum())} grouped tasks split ({share}); {n_fail} always fail, {n_pass} always pass."
    few = verdict == "mixed" and n_split < D.MIN_SPLIT_TASKS
    if few:
        best = max(predicted.items(), key=lambda kv: int(kv[0]))
        summary += (f" Only {n_split} split tasks (a grouped method wants {D.MIN_SPLIT_TASKS}+): sample more per task "
                    f"(about {best[1]:.0%} would split at k={best[0]}) or try ReinforceAda.")
    if len(rates) < D.MIN_CI_TASKS:
        warnings.append(f"only {len(rates)} graded task(s): a band read off so few tasks says little; score more")
    if n_single:
        warnings.append(f"{n_single} tasks have one graded rollout; they cannot split and are left out of split_share")
    return Band(verdict=verdict, summary=summary, split_share=split_share, n_tasks=len(rates), n_split=n_split,
                n_all_fail=n_fail, n_all_pass=n_pass, n_single=n_single, k=k, pass_at_1=float(rates.mean()),
                predicted_split_share=predicted, few_split=few, warnings=warnings,
                next_step=NextStep(tool="route", arguments=args, needs=needs + ["model"],
                                   why="Ask the remaining questions (on-policy, teacher) through route."))


# ---------------------------------------------------------------------------------------------------------
# Question 4

# A row's model that is the trained model plus one of these, then anything, is an older copy of it
# (an async sampler's checkpoint): "Qwen/Qwen3-8B@step-40", "Qwen/Qwen3-8B:ckpt-3".
_CHECKPOINT_TAIL = re.compile(r"^(@|:|#|/|[-_.]?(step|ckpt|checkpoint|iter|global_step|v\d))", re.IGNORECASE)


def _same_model(name: str, model: str) -> str:
    """'same', 'checkpoint' or 'other'."""
    a, b = name.strip().casefold(), model.strip().casefold()
    if a == b:
        return "same"
    if a.startswith(b) and _CHECKPOINT_TAIL.match(a[len(b):]):
        return "checkpoint"
    return "other"


def on_policy(rows: RowsLike, model: str | None) -> OnPolicy:
    """Question 4: did the model you will train sample these rows? Rows that name no model are 'unknown',
    never silently off-policy; an older checkpoint of the same model is an async sampler (wrap in Async)."""
    rows = as_rows(rows)
    n = len(rows)
    named = rows.model >= 0
    counts = np.bincount(rows.model[named], minlength=len(rows.model_names))
    order = np.argsort(-counts, kind="stable")[: D.LIST_LIMIT]
    models = {display_name(rows.model_names[i]): int(counts[i]) for i in order if counts[i]}
    share_named = float(named.mean()) if n else None
    common = dict(model=model, share_named=share_named, models=models)
    if n == 0:
        return OnPolicy(verdict="unknown", kind="empty", summary="No rows.", warnings=[],
                        next_step=NextStep(tool=None, why="Pass the graded rows."), **common)
    if not model:
        return OnPolicy(verdict="unknown", kind="no_model_given",
                        summary="No model named, so whether these rows are on-policy is unknown.",
                        warnings=["pass `model` (the model you will train) to answer question 4"],
                        next_step=NextStep(tool="route", needs=["model"], why="Name the model you will train."),
                        **common)
    if not named.any():
        return OnPolicy(verdict="unknown", kind="unnamed",
                        summary="No row names the model that sampled it, so on-policy is unknown (not assumed off).",
                        warnings=["add a `model` field to each row (the model that sampled it)"],
                        next_step=NextStep(tool=None, why="Record which model sampled each row, then ask again."),
                        **common)
    kinds = {rows.model_names[i]: _same_model(rows.model_names[i], model) for i in np.flatnonzero(counts)}
    others = [display_name(m) for m, kd in kinds.items() if kd == "other"]
    stale = [display_name(m) for m, kd in kinds.items() if kd == "checkpoint"]
    warnings = []
    if share_named < 1.0:
        warnings.append(f"{int((~named).sum())} of {n} rows name no model")
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        return OnPolicy(verdict="no", kind="other_model", warnings=warnings,
                        summary=(f"Rows were sampled by {shown}, not {model}: GRPO on them is off-policy with no "
                                 f"correction. Train SFT on them, or use that model as an OPD teacher."),
                        next_step=NextStep(tool="teacher_clears", needs=["teacher_rows", "student_rows"],
                                           why="Check whether that model beats yours before distilling from it."),
                        **common)
    if stale:
        return OnPolicy(verdict="no", kind="older_checkpoint", warnings=warnings,
                        summary=(f"Rows come from older copies of {model} ({', '.join(stale[:3])}): an async "
                                 f"sampler. Wrap the method in Async with a per-token correction (ipo)."),
                        next_step=NextStep(tool="prime_rl_config",
                                           arguments={"method": "async", "model": model,
                                                      "knobs": {"method": "grpo", "correction": "ipo"}},
                                           needs=["taskset"], why="An Async config bounds staleness and corrects it."),
                        **common)
    if share_named < 1.0:
        return OnPolicy(verdict="unknown", kind="unnamed", warnings=warnings,
                        summary=f"The rows that name a model name {model}, but some name none, so it is not proven.",
                        next_step=NextStep(tool=None, why="Record the sampling model on every row."), **common)
    return OnPolicy(verdict="yes", kind="same_model", warnings=warnings,
                    summary=f"Every row was sampled by {model}: on-policy.",
                    next_step=NextStep(tool="route", needs=["rows"], arguments={"model": model},
                                       why="Finish the route."), **common)


# ---------------------------------------------------------------------------------------------------------
# Question 5


def dominant_model(rows: GradedRows) -> str | None:
    """The model that sampled most of the rows, or None when no row names one."""
    named = rows.model[rows.model >= 0]
    if not len(named):
        return None
    values, counts = np.unique(named, return_counts=True)
    return rows.model_names[int(values[counts.argmax()])]


def _median_budget(rows: GradedRows) -> float | None:
    stated = rows.max_tokens[~np.isnan(rows.max_tokens)]
    return float(np.median(stated)) if len(stated) else None


def _paired(t: GradedRows, s: GradedRows, pass_threshold: float) -> PairedDifference | None:
    gt, gs = groups(t, pass_threshold), groups(s, pass_threshold)
    where = {name: i for i, name in enumerate(gs.names)}
    shared = [(i, where[name]) for i, name in enumerate(gt.names) if name in where]
    if not shared:
        return None
    ti, si = np.array(shared).T
    diff = gt.rates[ti] - gs.rates[si]
    return PairedDifference(n_shared=len(diff), mean_diff=float(diff.mean()), ci95=bootstrap_ci(diff))


def teacher_clears(teacher_rows: RowsLike, student_rows: RowsLike, effect: float = D.PROVE_EFFECT, *,
                   pass_threshold: float = D.PASS_THRESHOLD, tokenizers_match: bool | None = None) -> TeacherClears:
    """Question 5: the teacher clears when its pass@1 beats the student's by `effect` and its 95% interval lies
    wholly above the student's (the seed's rule). A paired bootstrap on shared tasks is reported as evidence.
    Too few tasks, no graded rows, or a teacher scored with a longer token budget: undecided, never a guess."""
    if not 0 < effect < 1:
        raise InputError(f"effect is {effect}; give a gain in (0, 1), e.g. {D.PROVE_EFFECT}", field="effect")
    t_rows, s_rows = as_rows(teacher_rows, what="teacher_rows"), as_rows(student_rows, what="student_rows")
    t, s = pass_at(t_rows, pass_threshold=pass_threshold), pass_at(s_rows, pass_threshold=pass_threshold)
    paired = _paired(t_rows, s_rows, pass_threshold)
    warnings = [f"teacher: {w}" for w in t.warnings] + [f"student: {w}" for w in s.warnings]
    common = dict(effect=effect, teacher_pass_at_1=t.pass_at_1, teacher_ci95=t.ci95, student_pass_at_1=s.pass_at_1,
                  student_ci95=s.ci95, paired=paired, tokenizers_match=tokenizers_match)
    gap = (t.pass_at_1 - s.pass_at_1) if t.pass_at_1 is not None and s.pass_at_1 is not None else None

    def undecided(why: str, step: NextStep) -> TeacherClears:
        return TeacherClears(verdict="undecided", clears=None, gap=gap, apart=None, summary=why, next_step=step,
                             warnings=warnings, **common)

    score_more = NextStep(tool="holdout_size", arguments={"effect": effect},
                          why="Size the held-out set that can show this gap, score both models on it, ask again.")
    if t.pass_at_1 is None or s.pass_at_1 is None:
        side = "teacher" if t.pass_at_1 is None else "student"
        return undecided(f"Undecided: the {side} rows have no graded reward.", score_more)
    if t.ci95 is None or s.ci95 is None:
        return undecided(f"Undecided: an interval needs {D.MIN_CI_TASKS}+ tasks on each side (teacher "
                         f"{t.n_tasks}, student {s.n_tasks}).", score_more)
    tb, sb = _median_budget(t_rows), _median_budget(s_rows)
    if tb is not None and sb is not None and tb > sb:
        return undecided(f"Undecided: the teacher was scored with max_tokens {tb:g}, the student with {sb:g}. Inside "
                         f"an OPD run the teacher is cut at the student's budget: score it at {sb:g} and ask again.",
                         NextStep(tool=None, arguments={"max_tokens": int(sb)},
                                  why="Re-score the teacher at the student's max_tokens."))
    if int(t_rows.truncated.sum()) and int((t_rows.truncated & (t_rows.reward >= pass_threshold)).sum()):
        warnings.append("some teacher replies were cut off and still passed; fix the reward (question 1) before "
                        "trusting the teacher's rate")
    apart = t.ci95[0] > s.ci95[1]
    clears = gap >= effect and apart
    if t.ci95[0] == t.ci95[1] or s.ci95[0] == s.ci95[1]:
        warnings.append("an interval has zero width (every task at one rate), so 'apart' is easy to meet; the "
                        "paired difference is the better evidence")
    if paired and paired.ci95 and clears and paired.ci95[0] <= 0:
        warnings.append(f"on the {paired.n_shared} shared tasks the paired interval on the gap "
                        f"[{paired.ci95[0]:.3f}, {paired.ci95[1]:.3f}] reaches 0")
    text = (f"teacher {t.pass_at_1:.3f} [{t.ci95[0]:.3f}, {t.ci95[1]:.3f}] vs student {s.pass_at_1:.3f} "
            f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}], gap {gap:+.3f}")
    if clears and tokenizers_match is False:
        return TeacherClears(verdict="tokenizer_mismatch", clears=True, gap=gap, apart=apart, warnings=warnings,
                             summary=(f"The teacher scores higher ({text}) but its tokenizer differs from the "
                                      f"student's: per-token distillation needs one tokenizer. Pick a same-family "
                                      f"teacher."),
                             next_step=NextStep(tool=None, why="Find a stronger teacher that shares the tokenizer."),
                             **common)
    if clears:
        if tokenizers_match is None:
            warnings.append("tokenizers not compared: OPD needs the teacher and student to share one (pass "
                            "tokenizers_match, or teacher/student names to prime_rl_config)")
        teacher = dominant_model(t_rows)
        student = dominant_model(s_rows)
        args = {"method": "opd", **({"model": student} if student else {}),
                "knobs": {"teacher": teacher or "<teacher model>"}}
        needs = ["taskset"] + ([] if student else ["model"]) + ([] if teacher else ["knobs.teacher"])
        return TeacherClears(verdict="clears", clears=True, gap=gap, apart=apart, warnings=warnings,
                             summary=f"The teacher clears: {text}, at least {effect:g} with intervals apart.",
                             next_step=NextStep(tool="prime_rl_config", arguments=args,
                                                needs=needs + ["knobs.base_url (the teacher's vLLM server)"],
                                                why="Distill from this teacher (OPD)."), **common)
    reason = (f"the gap is under {effect:g}" if gap < effect else "the intervals overlap")
    return TeacherClears(verdict="does_not_clear", clears=False, gap=gap, apart=apart, warnings=warnings,
                         summary=f"The teacher does not clear ({reason}): {text}. It has nothing to give by OPD.",
                         next_step=NextStep(tool="route", needs=["rows", "model"],
                                            why="Route without the teacher."), **common)
