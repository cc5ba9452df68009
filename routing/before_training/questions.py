"""The skill's questions, one function each: graded rows in, a verdict out.

Each function takes a list of row dicts or the `GradedRows` that `read_rows` returned.
"""

from __future__ import annotations

import numpy as np

from pick_a_method.common.next_step import Tool

from .. import defaults as D
from pick_a_method.common.errors import InputError
from ..readers import as_rows
from ..rows import NAME_LIMIT, RowsLike, display_name
from ..shared import (MAX_K, cap_list, check_threshold, grading_warnings, groups, groups_of, listing, plural,
                      reward_scale, rows_arguments, sampler_warning, scale_advice, single_warning, unit)
from ..forecasting import rollout_advice, signal, table_moments
from ..stats import bootstrap_ci, pass_at_k_per_group
from ..table import table_of
from ..verdicts import Band, NextStep, PassAt, RolloutsPerTask, RowRef, TruncatedPasses

# ---------------------------------------------------------------------------------------------------------
# Question 1


def truncated_passes(rows: RowsLike, *, pass_threshold: float = D.PASS_THRESHOLD) -> TruncatedPasses:
    """Question 1: count rows cut off at the token cap that still passed. Any count above zero: fix the reward
    first (a truncated reply must fail, or raise max_tokens); DAPO penalizes over-long samples for this reason."""
    rows = as_rows(rows)
    pass_threshold = check_threshold(pass_threshold)
    if rows.counts is None:
        passed = rows.truncated & (rows.reward >= pass_threshold)  # NaN compares false: ungraded never passes
        hits = np.flatnonzero(passed)
        n_hits, n_trunc = len(hits), int(rows.truncated.sum())
        examples, omitted = cap_list(hits.tolist())
        tasks = list(dict.fromkeys(display_name(rows.task_names[t]) for t in rows.task[hits[: 10 * D.LIST_LIMIT]]))[
            : D.LIST_LIMIT]
        refs, where = rows.refs(examples), ", ".join(rows.where(i) for i in examples[:5])
    else:  # a summary counts the cut-off passes per task but names no row
        t = table_of(rows, pass_threshold)
        n_hits, n_trunc = int(t.truncated_passes.sum()), int(t.truncated.sum())
        hit = np.flatnonzero(t.truncated_passes > 0)
        tasks = list(dict.fromkeys(display_name(rows.task_names[c]) for c in t.task[hit]))[: D.LIST_LIMIT]
        refs, omitted, where = [], n_hits, "in tasks " + ", ".join(tasks[:5]) + "; a summary names no row"
    stated = rows.n_truncation_stated
    args, needs = rows_arguments(rows)
    common = dict(count=n_hits, truncated_rows=n_trunc, share=(n_trunc / stated) if stated else None,
                  n_rows=rows.n_rollouts, n_truncation_stated=stated, pass_threshold=pass_threshold,
                  examples=[RowRef(**r) for r in refs], examples_omitted=omitted, tasks=tasks)
    if len(rows) == 0:
        return TruncatedPasses(verdict="empty", summary="No rows to check.", warnings=[],
                               next_step=NextStep(tool=None, why="Grade some rollouts first."), **common)
    if n_hits:
        return TruncatedPasses(
            verdict="fix_reward",
            summary=(f"{n_hits} replies cut off at the token cap still passed (e.g. {where}). Truncation, not "
                     f"the model, decides the rates: make a truncated reply fail, or raise max_tokens, then re-grade."),
            next_step=NextStep(tool=None, arguments={"truncated_passes": [r.model_dump(exclude_none=True) for r in
                                                                          common["examples"]]} if refs else
                               {"truncated_pass_tasks": tasks},
                               why="Fix the reward so a cut-off reply fails (or raise max_tokens), re-grade these "
                                   "rows, and call route again."),
            **common)
    warnings = []
    if stated == 0 and not any("question 1" in n for n in rows.notes):  # else the reader said why, for its tool
        warnings.append("no row says whether it was cut off (`truncated` or `finish_reason`); question 1 cannot "
                        "be checked: add `truncated` to the rows")
    elif stated < rows.n_rollouts:
        warnings.append(f"{rows.n_rollouts - stated} rows do not say whether they were cut off")
    verdict = "unknown" if stated == 0 else "ok"
    summary = ("No row states truncation, so whether a cut-off reply can pass is unknown." if stated == 0 else
               f"No cut-off reply passed ({n_trunc} of {stated} rows were cut off).")
    return TruncatedPasses(verdict=verdict, summary=summary, warnings=warnings,
                           next_step=NextStep(tool=Tool.ROUTE, arguments=args, needs=needs + ["model"],
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
                               n_tasks=0, n_groups=0, n_single=0, sizes={},
                               warnings=grading_warnings(rows, table_of(rows, pass_threshold), pass_threshold)
                               + sampler_warning(g),
                               next_step=NextStep(tool=None, why="Grade the rollouts first."))
    sizes, counts = np.unique(g.n, return_counts=True)
    k, k_max, n_single = int(g.n.min()), int(g.n.max()), int((g.n == 1).sum())
    shown = dict(zip([str(s) for s in sizes.tolist()], counts.tolist()))
    if len(shown) > D.LIST_LIMIT:
        top = sorted(shown.items(), key=lambda kv: -kv[1])[: D.LIST_LIMIT]
        shown = dict(sorted(top, key=lambda kv: int(kv[0])))
    warnings = grading_warnings(rows, table_of(rows, pass_threshold), pass_threshold) + sampler_warning(g)
    if k_max == 1:
        verdict, summary = "single", (f"One graded rollout per task ({plural(len(g.n), unit(g))}): no grouped method "
                                      f"applies.")
    elif n_single * 2 > len(g.n):
        verdict = "mostly_single"
        summary = (f"{n_single} of {plural(len(g.n), 'group')} have one graded rollout: most groups carry no grouped "
                   f"signal.")
    else:
        verdict = "grouped"
        summary = f"{k} to {k_max} graded rollouts per task over {plural(len(g.n), 'group')}."
        if n_single:
            warnings.append(single_warning(n_single, unit(g)))
    if k != k_max:
        warnings.append(f"groups are uneven ({k} to {k_max} graded rollouts); k is the smallest")
    return RolloutsPerTask(verdict=verdict, summary=summary, k=k, k_max=k_max, k_median=float(np.median(g.n)),
                           n_tasks=g.n_tasks, n_groups=len(g.n), n_single=n_single, sizes=shown, warnings=warnings,
                           next_step=NextStep(tool=Tool.BAND, arguments=args, needs=needs,
                                              why="Read the per-task band next."))


# ---------------------------------------------------------------------------------------------------------
# pass@1 / pass@k


def pass_at(rows: RowsLike, *, k: int | None = None, pass_threshold: float = D.PASS_THRESHOLD,
            per_task_offset: int = 0, per_task_limit: int | None = 100) -> PassAt:
    """Per-task pass rates, pass@1 with a 95% task-level interval (stats.task_ci), and the unbiased pass@k and
    pass^k over the groups with at least k graded rollouts (k defaults to the smallest group of two or more)."""
    rows = as_rows(rows)
    pass_threshold = check_threshold(pass_threshold)
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
    warnings = grading_warnings(rows, table_of(rows, pass_threshold), pass_threshold) + sampler_warning(g)
    args, needs = rows_arguments(rows)
    common = dict(n_rows=rows.n_rollouts, n_graded=g.n_graded, n_ungraded=table_of(rows, pass_threshold).n_ungraded, n_nonbinary=g.n_nonbinary,
                  pass_threshold=pass_threshold, per_task_offset=per_task_offset)
    if len(g.n) == 0:
        return PassAt(verdict="empty", summary="No graded rows: nothing to score. Grade the rollouts first.",
                      pass_at_1=None, ci95=None, k=int(k or 1), pass_at_k=None, pass_pow_k=None, n_tasks=0,
                      n_groups=0, n_tasks_at_k=0, per_task={}, warnings=warnings,
                      next_step=NextStep(tool=None, why="Grade the rollouts (a program grader beats a judge)."),
                      **common)
    rates = g.rates
    p1 = float(rates.mean())
    ci = bootstrap_ci(rates, rollouts=g.n)  # capped at what the rollouts can be worth
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
            warnings.append(f"{plural(len(g.n) - n_at_k, 'group')} of fewer than {k} graded rollouts {'is' if len(g.n) - n_at_k == 1 else 'are'} left "
                            f"out of pass@{k} and pass^{k}")
    elif k >= 2:
        warnings.append(f"no {unit(g)} has {k} graded rollouts, so pass@{k} and pass^{k} are not computed")
    if ci is None:
        warnings.append(f"no interval on pass@1: {plural(len(g.n), unit(g))}, and a bootstrap over them needs "
                        f"{D.MIN_CI_TASKS}; score more tasks (a distinct task_id per task)")
    stop = None if per_task_limit is None else per_task_offset + per_task_limit
    per_task = listing(g.names_in(slice(per_task_offset, stop)), rates[per_task_offset:stop].tolist())
    if any(len(name) > NAME_LIMIT for name in per_task):
        warnings.append(f"task ids longer than {NAME_LIMIT} characters are listed as their first 60 characters "
                        f"and a hash")
    per_task = {display_name(name): rate for name, rate in per_task.items()}
    ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " (no interval)"
    kway = f"; pass@{k} {at_k:.3f}, pass^{k} {pow_k:.3f}" if at_k is not None else ""
    return PassAt(
        verdict="measured" if ci else "no_interval",
        summary=f"pass@1 {p1:.3f}{ci_text} over {groups_of(g)}{kway}.",
        pass_at_1=p1, ci95=ci, k=k, pass_at_k=at_k, pass_pow_k=pow_k, pass_at_k_ci95=at_k_ci,
        pass_pow_k_ci95=pow_k_ci, n_tasks=g.n_tasks, n_groups=len(g.n), n_tasks_at_k=n_at_k, per_task=per_task,
        per_task_omitted=len(g) - len(per_task), warnings=warnings,
        by_sampler=g.samplers()[: D.LIST_LIMIT] if g.several else [],
        next_step=NextStep(tool=Tool.BAND, arguments=args, needs=needs, why="Read the per-task band next."), **common)


# ---------------------------------------------------------------------------------------------------------
# Question 3


def band(rows: RowsLike, *, pass_threshold: float = D.PASS_THRESHOLD) -> Band:
    """Question 3: floor (every task fails), saturated (every task passes) or mixed, the share of tasks that
    split (only those give a grouped method gradient) and the split share to expect at larger k."""
    rows = as_rows(rows)
    pass_threshold = check_threshold(pass_threshold)
    g = groups(rows, pass_threshold)
    warnings = grading_warnings(rows, table_of(rows, pass_threshold), pass_threshold) + sampler_warning(g)
    args, needs = rows_arguments(rows)
    if len(g.n) == 0:
        return Band(verdict="empty", summary="No graded rows, so no band: grade the rollouts first.",
                    split_share=None, n_tasks=0, n_groups=0, n_split=0, n_all_fail=0, n_all_pass=0, n_single=0, k=0,
                    pass_at_1=None, predicted_split_share={}, few_split=False, warnings=warnings,
                    next_step=NextStep(tool=None, why="Grade the rollouts first; ungraded rows are not fails."))
    rates = g.rates
    multi = g.n >= 2
    total, spread, tokens = table_moments(g)
    has_signal, definition = signal(g.c, g.n, total, spread, nonbinary=g.n_nonbinary > 0)
    n_split = int((has_signal & multi).sum())
    n_fail, n_pass = int((rates == 0).sum()), int((rates == 1).sum())
    n_single = int((~multi).sum())
    k = int(g.n[multi].min()) if multi.any() else 1
    split_share = n_split / int(multi.sum()) if multi.any() else None
    few = n_fail < len(rates) and n_pass < len(rates) and n_split < D.MIN_SPLIT_TASKS  # mixed, too few split
    advice, predicted, predicted_ci = None, {}, {}
    if int(multi.sum()) >= D.MIN_CI_TASKS:  # a prior needs grouped tasks to see how rates spread
        advice, fit = rollout_advice(g.c[multi], g.n[multi], k_now=k, few_split=few,
                                     tokens=tokens[multi] if tokens is not None else None)
        shown = [kk for kk in sorted({*D.PREDICT_SPLIT_AT, max(k, 2)}) if kk >= max(k, 2)]
        predicted = {str(kk): round(fit["by_k"][kk].share, 4) for kk in shown}
        predicted_ci = {str(kk): (round(fit["by_k"][kk].ci95[0], 4), round(fit["by_k"][kk].ci95[1], 4))
                        if fit["by_k"][kk].ci95 else None for kk in shown}
    w = unit(g)  # what the counts below count: tasks, or groups where a task has several (samplers, arms)
    grouped = "groups" if w == "group" else "grouped tasks"
    if g.n_nonbinary:
        warnings.append(f"rewards are not all 0/1: a group has signal when its rewards differ ({n_split} of "
                        f"{int(multi.sum())} {grouped}); the predicted split share reads pass/fail at reward >= "
                        f"{pass_threshold:g}")
    if n_fail == len(rates):
        verdict = "floor"
        summary = (f"Floor: all {groups_of(g)} fail. More rollouts cannot help (no draw passes); the model needs a "
                   f"demonstration: OPSD with privileged context, or SFT from a stronger model under ~7B.")
    elif n_pass == len(rates):
        verdict = "saturated"
        summary = (f"Saturated: all {groups_of(g)} pass. A binary reward makes every pass equal; rank the passes "
                   f"(GroupwiseGrading) if they really differ, or harden the eval.")
    else:
        verdict = "mixed"
        share = f"{split_share:.0%}" if split_share is not None else "n/a"
        per = f"; {plural(g.n_tasks, 'task')}, each grouped per sampler and arm" if w == "group" else ""
        summary = (f"Mixed: {n_split} of {int(multi.sum())} {grouped} split ({share}{per}); {n_fail} always fail, "
                   f"{n_pass} always pass.")
    if verdict != "mixed" and g.n_nonbinary and n_split:
        warnings.append(f"{n_split} {verdict} groups still have reward spread: a grouped method gets signal from them")
    if few and advice is not None and advice.suggested_group_size:
        more = next(p for p in advice.per_k if p.k == advice.suggested_group_size)
        summary += (f" Only {n_split} split {w}s (a grouped method wants {D.MIN_SPLIT_TASKS}+): sample more per task "
                    f"(about {more.split_share:.0%} would split at k={more.k}, {advice.gain:+.0%} on k={k}) or try "
                    f"ReinforceAda.")
    elif few:
        top = advice.per_k[-1] if advice is not None else None
        reach = (f": about {top.split_share:.0%} would split even at k={top.k} ({top.split_share * int(multi.sum()):.0f} "
                 f"{w}s)" if top else "")
        summary += (f" Only {n_split} split {w}s (a grouped method wants {D.MIN_SPLIT_TASKS}+), and more rollouts per "
                    f"task do not reach that{reach}. Add tasks in the band, or try ReinforceAda.")
    if predicted and n_fail and n_fail < len(rates) and np.median(g.n[multi]) < D.PRIOR_MASS_MIN_ROLLOUTS:
        warnings.append(f"at k={k} the prior cannot tell tasks that can never pass from hard ones (that takes "
                        f"{D.PRIOR_MASS_MIN_ROLLOUTS}+ rollouts per task): if some of the {n_fail} all-fail {w}s are "
                        f"impossible, the predicted split share at larger k runs high")
    if advice is not None and advice.prompts_per_step and advice.prompts_per_step > g.n_tasks:  # a prompt is a task
        warnings.append(f"{advice.target_groups} groups with signal per step take {advice.prompts_per_step} prompts at "
                        f"k={advice.group_size}, more than the {g.n_tasks} tasks here: each step would repeat tasks; "
                        f"add tasks")
    if len(rates) < D.MIN_CI_TASKS:
        warnings.append(f"only {plural(len(rates), f'graded {w}')}: a band read off so few {w}s says little; "
                        f"score more")
    if n_single:
        warnings.append(single_warning(n_single, w))
    scale = reward_scale(rows, pass_threshold)
    if scale is not None:  # passes read at 1 on a 0-10 scale: the counts above contradict each other; say why
        summary = f"Undecided: {scale_advice(scale)}; then ask again."
    return Band(verdict=verdict, summary=summary, split_share=split_share, split_definition=definition,
                n_tasks=g.n_tasks, n_groups=len(rates), n_split=n_split, n_all_fail=n_fail, n_all_pass=n_pass,
                n_single=n_single, k=k,
                pass_at_1=float(rates.mean()), predicted_split_share=predicted, predicted_split_ci95=predicted_ci,
                few_split=few, rollouts=advice, warnings=warnings,
                next_step=NextStep(tool=Tool.ROUTE, arguments=args, needs=needs + ["model"],
                                   why="Ask the remaining questions (on-policy, teacher) through route."))
