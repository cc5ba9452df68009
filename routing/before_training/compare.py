"""Questions 4 and 5: who sampled the rows (on_policy), and does a teacher beat the student (teacher_clears)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pick_a_method.common import methods as M
from pick_a_method.common.errors import InputError
from pick_a_method.common.identity import relation
from pick_a_method.common.next_step import Tool, placeholder
from pick_a_method.common.trainers import TRAINERS

from .. import defaults as D
from pick_a_method.common.config_call import config_call
from .questions import pass_at
from ..paired import shared_index
from ..shared import dominant_model, median_budget, model_rollouts, rows_arguments
from ..readers import as_rows
from ..rows import GradedRows, RowsLike, display_name
from ..stats import paired_ci
from ..table import Table, table_of
from ..verdicts import NextStep, OnPolicy, PairedDifference, TeacherClears


def sampler_kinds(rows: GradedRows, model: str) -> tuple[dict[int, str], list[str]]:
    """Model code -> 'same' / 'checkpoint' / 'other' for every sampler the rows name, and notes on readings."""
    kinds, notes = {}, []
    seen = model_rollouts(rows)
    for code in np.flatnonzero(seen).tolist():
        kind, note = relation(rows.model_names[code], model)
        kinds[code] = kind
        if note:
            notes.append(note)
    return kinds, notes


def on_policy(rows: RowsLike, model: str | None, *, pass_threshold: float = D.PASS_THRESHOLD) -> OnPolicy:
    """Question 4: did the model you will train sample these rows? Rows that name no model are 'unknown',
    never silently off-policy; an older checkpoint of the same model is an async sampler (wrap in Async).
    Evidence: `samplers`, one entry per sampler (and arm) with its rows, tasks and pass@1."""
    rows = as_rows(rows)
    n = rows.n_rollouts
    named = rows.model >= 0
    counts = model_rollouts(rows)
    order = np.argsort(-counts, kind="stable")[: D.LIST_LIMIT]
    models = {display_name(rows.model_names[i]): int(counts[i]) for i in order if counts[i]}
    n_named = int(counts.sum())
    share_named = (float(named.mean()) if rows.counts is None else n_named / n) if n else None
    samplers = table_of(rows, pass_threshold).samplers()[: D.LIST_LIMIT] if n else []
    common = dict(model=model, share_named=share_named, models=models, samplers=samplers)
    args, needs = rows_arguments(rows)
    if n == 0:
        return OnPolicy(verdict="unknown", kind="empty", summary="No rows.", warnings=[],
                        next_step=NextStep(tool=None, why="Pass the graded rows."), **common)
    if not model:
        return OnPolicy(verdict="unknown", kind="no_model_given",
                        summary="No model named, so whether these rows are on-policy is unknown.",
                        warnings=["pass `model` (the model you will train) to answer question 4"],
                        next_step=NextStep(tool=Tool.ROUTE, arguments=args, needs=needs + ["model"],
                                           why="Name the model you will train."), **common)
    warnings = [n for n in rows.notes if "sampler" in n]
    if not named.any():
        return OnPolicy(verdict="unknown", kind="unnamed",
                        summary="No row names the model that sampled it, so on-policy is unknown (not assumed off).",
                        warnings=warnings + ["add a `model` field to each row (the model that sampled it), or map "
                                             "yours with fields={\"model\": \"<your field>\"}"],
                        next_step=NextStep(tool=None, why="Record which model sampled each row, then ask again."),
                        **common)
    kinds, notes = sampler_kinds(rows, model)
    warnings += notes
    others = [display_name(rows.model_names[c]) for c, k in kinds.items() if k == "other"]
    stale = [display_name(rows.model_names[c]) for c, k in kinds.items() if k == "checkpoint"]
    mine = [c for c, k in kinds.items() if k != "other"]
    if share_named < 1.0:
        warnings.append(f"{n - n_named} of {n} rows name no model")
    if others and mine:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        kind = "mixed"
        summary = (f"The rows mix {model}'s own rollouts with those of {shown}: route on {model}'s rows; the others "
                   f"are candidate OPD teachers, scored against it on shared tasks.")
        return OnPolicy(verdict="yes" if not stale else "no", kind=kind, summary=summary, warnings=warnings,
                        next_step=NextStep(tool=Tool.ROUTE, arguments={**args, "model": model}, needs=needs,
                                           why=f"route reads {model}'s rows and scores the others as teachers."),
                        **common)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        return OnPolicy(verdict="no", kind="other_model", warnings=warnings,
                        summary=(f"Rows were sampled by {shown}, not {model}: GRPO on them is off-policy with no "
                                 f"correction. Train SFT on them, or use that model as an OPD teacher. (If {others[0]} "
                                 f"is {model} served under another name, pass model={others[0]!r}.)"),
                        next_step=NextStep(tool=Tool.TEACHER_CLEARS, arguments={"teacher_" + k: v for k, v in args.items()},
                                           needs=["student_rows (your model's rows on the same tasks)"],
                                           why="Check whether that model beats yours before distilling from it."),
                        **common)
    if stale:
        return OnPolicy(verdict="no", kind="older_checkpoint", warnings=warnings,
                        summary=(f"Rows come from older copies of {model} ({', '.join(stale[:3])}): an async "
                                 f"sampler. Wrap the method in Async with a per-token correction (ipo)."),
                        next_step=config_call(TRAINERS[M.PRIME_RL], M.ASYNC.name, taskset=None, model=model,
                                              knobs={"method": M.GRPO.name, "correction": "ipo"},
                                              why="An Async config bounds staleness and corrects it."),
                        **common)
    if share_named < 1.0:
        return OnPolicy(verdict="unknown", kind="unnamed", warnings=warnings,
                        summary=f"The rows that name a model name {model}, but some name none, so it is not proven.",
                        next_step=NextStep(tool=None, why="Record the sampling model on every row."), **common)
    return OnPolicy(verdict="yes", kind="same_model", warnings=warnings,
                    summary=f"Every row was sampled by {model}: on-policy.",
                    next_step=NextStep(tool=Tool.ROUTE, arguments={**args, "model": model}, needs=needs,
                                       why="Finish the route."), **common)


# ---------------------------------------------------------------------------------------------------------
# Question 5


def _shared(t_table: Table, s_table: Table) -> tuple[np.ndarray, ...]:
    """The tasks both sides scored, in the teacher's order: their codes in the teacher's rows, and each side's pass
    rate on them and the rollouts it is worth (Table.task_means). Sides read together (one file's samplers) share
    the task codes, so they pair on them (numpy); sides read apart pair by name (paired.py)."""
    t_codes, t_rates, t_worth = t_table.task_means()
    s_codes, s_rates, s_worth = s_table.task_means()
    if t_table.rows.task_names is s_table.rows.task_names:
        at = np.full(t_table.rows.n_tasks, -1)  # task code -> its position in the student's codes
        at[s_codes] = np.arange(len(s_codes))
        ti = np.flatnonzero(at[t_codes] >= 0)
        si = at[t_codes[ti]]
    else:
        ti, si = shared_index(t_table.names_of(t_codes), s_table.names_of(s_codes))
    return t_codes[ti], t_rates[ti], s_rates[si], t_worth[ti], s_worth[si]


def shared_rates(t_table: Table, s_table: Table) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The tasks both sides scored (in the teacher's order) and each side's pass rate on them."""
    codes, t_rates, s_rates, _, _ = _shared(t_table, s_table)
    return t_table.names_of(codes), t_rates, s_rates


def paired(t: GradedRows, s: GradedRows, pass_threshold: float) -> PairedDifference | None:
    """Teacher minus student pass rate per shared task, with the MOVER interval from both arms (stats.paired_ci),
    each arm capped at what its rollouts are worth, as pass_at's interval is."""
    _, t_rates, s_rates, t_worth, s_worth = _shared(table_of(t, pass_threshold), table_of(s, pass_threshold))
    if not len(t_rates):
        return None
    ci95 = paired_ci(t_rates, s_rates, rollouts_a=t_worth, rollouts_b=s_worth)
    return PairedDifference(n_shared=len(t_rates), mean_diff=float((t_rates - s_rates).mean()), ci95=ci95)


def _again(t_rows: GradedRows, s_rows: GradedRows, effect: float, pass_threshold: float) -> dict[str, Any]:
    """teacher_clears' arguments that ask this question again on the same files (one `fields` serves both)."""
    args: dict[str, Any] = {"effect": effect}
    if pass_threshold != D.PASS_THRESHOLD:
        args["pass_threshold"] = pass_threshold
    for side, rows in (("teacher", t_rows), ("student", s_rows)):
        back, _ = rows_arguments(rows)
        if "rows_path" in back:
            args[f"{side}_rows_path"] = back["rows_path"]
        if "fields" in back:
            args["fields"] = back["fields"]
    return args


def teacher_clears(teacher_rows: RowsLike, student_rows: RowsLike, effect: float = D.PROVE_EFFECT, *,
                   pass_threshold: float = D.PASS_THRESHOLD, tokenizers_match: bool | None = None) -> TeacherClears:
    """Question 5: does the teacher beat the student by `effect`? Where they share tasks, the paired test on
    those tasks decides (mean gap >= effect and its 95% MOVER interval, stats.paired_ci, above 0); else the unpaired rule of whileai's
    pick-a-method skill (gap >= effect and the teacher's interval wholly above the student's). Both are in the
    evidence, and the summary says which decided. Too few tasks, no graded rows, or a teacher scored with a longer
    budget: undecided."""
    if not 0 < effect < 1:
        raise InputError(f"effect is {effect}; give a gain in (0, 1), e.g. {D.PROVE_EFFECT}", field="effect")
    t_rows, s_rows = as_rows(teacher_rows, what="teacher_rows"), as_rows(student_rows, what="student_rows")
    t, s = pass_at(t_rows, pass_threshold=pass_threshold), pass_at(s_rows, pass_threshold=pass_threshold)
    pair = paired(t_rows, s_rows, pass_threshold)
    warnings = [f"teacher: {w}" for w in t.warnings] + [f"student: {w}" for w in s.warnings]
    common = dict(effect=effect, teacher_pass_at_1=t.pass_at_1, teacher_ci95=t.ci95, student_pass_at_1=s.pass_at_1,
                  student_ci95=s.ci95, paired=pair, tokenizers_match=tokenizers_match)
    gap = (t.pass_at_1 - s.pass_at_1) if t.pass_at_1 is not None and s.pass_at_1 is not None else None
    again = _again(t_rows, s_rows, effect, pass_threshold)

    def undecided(why: str, step: NextStep, decided_by: str | None = None) -> TeacherClears:
        return TeacherClears(verdict="undecided", clears=None, gap=gap, apart=None, summary=why, next_step=step,
                             warnings=warnings, decided_by=decided_by, **common)

    score_more = NextStep(tool=Tool.HOLDOUT_SIZE, arguments={"effect": effect},
                          why="Size the held-out set that can show this gap, score both models on it, ask again.")
    if t.pass_at_1 is None or s.pass_at_1 is None:
        side = "teacher" if t.pass_at_1 is None else "student"
        return undecided(f"Undecided: the {side} rows have no graded reward.", score_more)
    paired_ok = pair is not None and pair.ci95 is not None
    if not paired_ok and (t.ci95 is None or s.ci95 is None):
        return undecided(f"Undecided: an interval needs {D.MIN_CI_TASKS}+ tasks on each side (teacher "
                         f"{t.n_tasks}, student {s.n_tasks}).", score_more)
    tb, sb = median_budget(t_rows), median_budget(s_rows)
    if tb is not None and sb is not None and tb > sb:
        return undecided(f"Undecided: the teacher was scored with max_tokens {tb:g}, the student with {sb:g}. Inside "
                         f"an OPD run the teacher is cut at the student's budget: score it at {sb:g} and ask again.",
                         NextStep(tool=Tool.TEACHER_CLEARS, arguments=again,
                                  needs=[f"teacher rows re-scored at max_tokens {int(sb)}"],
                                  why="Re-score the teacher at the student's max_tokens, then ask again."))
    if int(table_of(t_rows, pass_threshold).truncated_passes.sum()):
        warnings.append("some teacher replies were cut off and still passed; fix the reward (question 1) before "
                        "trusting the teacher's rate")
    apart = bool(t.ci95[0] > s.ci95[1]) if t.ci95 and s.ci95 else None
    unpaired = bool(gap >= effect and apart) if apart is not None else None
    if paired_ok:
        decided_by = "paired"
        clears = bool(pair.mean_diff >= effect and pair.ci95[0] > 0)
    else:
        decided_by, clears = "unpaired", bool(unpaired)
    text = f"teacher {t.pass_at_1:.3f}{_ci(t.ci95)} vs student {s.pass_at_1:.3f}{_ci(s.ci95)}, gap {gap:+.3f}"
    if paired_ok:
        text += (f"; paired on {pair.n_shared} shared tasks {pair.mean_diff:+.3f} "
                 f"[{pair.ci95[0]:.3f}, {pair.ci95[1]:.3f}]")
    how = _how(decided_by, clears, unpaired, effect, pair, gap)
    common["decided_by"] = decided_by
    if clears and tokenizers_match is False:
        return TeacherClears(verdict="tokenizer_mismatch", clears=True, gap=gap, apart=apart, warnings=warnings,
                             summary=(f"The teacher scores higher ({text}) but its tokenizer differs from the "
                                      f"student's: per-token distillation needs one tokenizer. Pick a same-family "
                                      f"teacher."),
                             next_step=NextStep(tool=None, why="Find a stronger teacher that shares the tokenizer."),
                             **common)
    if clears:
        if tokenizers_match is None:
            warnings.append("tokenizers not compared: OPD needs the teacher and student to share one (once you "
                            "know, pass tokenizers_match=True or tokenizers_match=False; prime_rl_config compares them "
                            "from the teacher and student names)")
        teacher, student = dominant_model(t_rows), dominant_model(s_rows)
        step = config_call(TRAINERS[M.PRIME_RL], M.OPD.name, taskset=None, model=student,
                           knobs={"teacher": teacher or placeholder("teacher")},
                           needs=([] if teacher else ["knobs.teacher"]) + ["knobs.base_url (the teacher's vLLM server)"],
                           why="Distill from this teacher (OPD).")
        return TeacherClears(verdict="clears", clears=True, gap=gap, apart=apart, warnings=warnings,
                             summary=f"The teacher clears: {text}. {how}", next_step=step, **common)
    student = dominant_model(s_rows)
    back, needs = rows_arguments(s_rows)
    return TeacherClears(verdict="does_not_clear", clears=False, gap=gap, apart=apart, warnings=warnings,
                         summary=f"The teacher does not clear: {text}. {how} It has nothing to give by OPD.",
                         next_step=NextStep(tool=Tool.ROUTE, arguments={**back, **({"model": student} if student else {})},
                                            needs=needs + ([] if student else ["model"]),
                                            why="Route the student's rows without this teacher."), **common)


def _ci(ci: tuple[float, float] | None) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " (no interval)"


def _how(decided_by: str, clears: bool, unpaired: bool | None, effect: float, pair: PairedDifference | None,
         gap: float) -> str:
    """Which test decided and why; where the two tests disagree, say so."""
    if decided_by == "unpaired":
        why = (f"The gap is under {effect:g}." if gap < effect else
               "The intervals are apart." if clears else "The intervals overlap.")
        return f"{why} No shared tasks for a paired test, so whileai's unpaired rule decided."
    assert pair is not None and pair.ci95 is not None
    if clears:
        why = f"the paired gap is at least {effect:g} and its interval lies above 0"
    elif pair.mean_diff < effect:
        why = f"the paired gap is under {effect:g}"
    else:
        why = "the paired interval reaches 0"
    text = f"The paired test on the shared tasks decided: {why}."
    if unpaired is not None and unpaired != clears:
        other = "clear" if unpaired else "not clear"
        text += (f" whileai's unpaired rule (intervals apart) would {other}: it ignores that both were scored on the "
                 f"same tasks, so task difficulty they share widens its intervals; the paired test removes it.")
    return text
