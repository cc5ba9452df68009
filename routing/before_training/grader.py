"""Question 0, the grader first: what the replies (read as a hash and a length, readers/replies.py) and the tools'
own records say about the grade before any rate is read from it.

- a blank reply that passes: the grader passes an answer that says nothing (any count stops the route);
- the same reply text graded both ways within a task: the grade is not a function of the reply (a judge at
  temperature, a flaky test); above GRADER_FLIP_SHARE of the repeated replies it stops the route;
- a grade that rises with the reply's length within tasks (a judge's verbosity bias): a warning;
- several graders of the same rollouts: their agreement with the reward read (raw, Cohen's kappa), and where
  they differ;
- a model graded the rows (by the tool's own record, or a judge field): a warning, and how many rows to label by
  hand to audit it.

`check_grader` reads the rows once and answers all of them; the route's step (steps.py `grader_step`) puts the
answer in its trace (question 0, before question 1) and stops the route where a check decides; the picture's
captions of it are pictures/grader.py's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from .. import defaults as D
from ..shared import plural, replies
from ..readers import as_rows
from ..readers.replies import TOOL_TRAJECTORY
from ..rows import GradedRows, RowsLike, display_name
from ..stats import tasks_needed, within_group_spearman

__all__ = ["GraderCheck", "check_grader", "fix_why", "judge_audit_rows"]

NO_REPLIES = ("no row carries its reply (completion, response or output; fields={'completion': ...} maps "
              "yours): with the replies question 0 would check the grader too (blank replies that pass, the same "
              "reply graded both ways, grades that follow length)")
# A per-task summary (readers/summary.py) keeps counts, never replies or other graders' grades.
SUMMARY_NO_REPLIES = ("a per-task summary carries counts, not replies: question 0 (blank replies that pass, the same "
                      "reply graded both ways, grades that follow length, a second grader or a judge) is not checked. "
                      "Route a sample of the rows themselves to check the grader")


class GraderCheck(BaseModel):
    """Question 0's answer from the replies and the tools' records."""

    answer: str = Field(description="What it found, comma-separated (blank_passes, graded_both_ways, length_bias, "
                                    "graders_differ, judge), or ok, or no_replies.")
    decided: bool = Field(description="A blank pass, or replies graded both ways above the share: fix the reward.")
    summary: str
    evidence: dict[str, Any]
    warnings: list[str] = Field(default_factory=list)
    rows_to_fix: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="Where to look when it decided: blank_passes, graded_both_ways (first few).")


@dataclass
class _Found:
    """What the checks found so far (each check adds to it)."""

    evidence: dict[str, Any]
    found: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary: str = ""
    decided: bool = False
    rows_to_fix: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def stop(self, what: str, summary: str, refs: list[dict[str, Any]]) -> None:
        """A finding that decides the route (the first one's summary is the route's)."""
        self.summary = self.summary or summary
        self.decided = True
        self.rows_to_fix[what] = refs


def check_grader(rows: RowsLike, pass_threshold: float = D.PASS_THRESHOLD) -> GraderCheck:
    """Question 0 from the rows read once: every check below, with its evidence."""
    rows = as_rows(rows)
    graded = ~np.isnan(rows.reward)
    passed = rows.reward >= pass_threshold  # NaN compares false: ungraded never passes
    f = _Found({"replies": rows.n_replies})
    stand_in = placeholder(rows)
    if rows.reply_len is None or stand_in:
        f.evidence["note"] = (("every row carries the same reply over several tasks (a placeholder, or replies left "
                               "out?): read as no replies. ") if stand_in else "") + NO_REPLIES
    f.evidence["rows"] = rows.n_rollouts
    if rows.counts is not None:  # said, never passed in silence: the summary cannot show the grader is sound
        f.evidence["note"] = SUMMARY_NO_REPLIES
        f.evidence["summary"] = True
        f.warnings.append(SUMMARY_NO_REPLIES)
    if rows.reply_len is not None and not stand_in:
        _blank_passes(rows, graded, passed, f)
        _length_bias(rows, graded, f)  # before the flips: a judge that follows length flips as a side effect
        _graded_both_ways(rows, graded, f)
    _other_graders(rows, graded, pass_threshold, f)
    _judge(rows, graded, passed, f)
    answer = ", ".join(f.found) if f.found else ("ok" if rows.reply_len is not None and not stand_in else "no_replies")
    summary = f.summary or ("Question 0: " + ("nothing found in the replies or the grades." if answer == "ok" else
                                              "no replies to read." if answer == "no_replies" else
                                              f"{answer.replace('_', ' ')} (see the warnings)."))
    return GraderCheck(answer=answer, decided=f.decided, summary=summary, evidence=f.evidence, warnings=f.warnings,
                       rows_to_fix=f.rows_to_fix)


def fix_why(found: dict[str, Any]) -> str:
    """How to fix what question 0 found, the finding that leads first."""
    fixes = {"blank_passes": "make a blank (or whitespace-only) reply fail",
             "length_bias": LENGTH_FIX,
             "graded_both_ways": "give the same reply the same grade (a judge at temperature 0 or a fixed seed, or the "
                                 "majority of several gradings)"}
    said = [fixes[k] for k in found if k in fixes]
    return f"Fix the grader: {'; '.join(said)}. Re-grade the rows, and call route again."


# How to fix a grade that follows length (Dubois et al. 2024, arXiv:2404.04475: length-controlled judging; Zheng et
# al. 2023, arXiv:2306.05685: a judge's verbosity bias)
LENGTH_FIX = ("grade what the reply says, not how long it is: check the final answer against a reference with a "
              "program where the task has one; else tell the judge that length earns nothing and show it a short and a "
              "long correct reply as examples, then confirm on pairs of short and long replies of the same task that "
              "their grades no longer follow length (the within-task correlation near 0)")


def placeholder(rows: GradedRows) -> bool:
    """Every reply read is one text, over two or more tasks: a stand-in for replies not kept ("...", blank), not a
    reply any grader saw."""
    if rows.reply_len is None:
        return False
    have = rows.reply_len >= 0
    hashes = rows.reply_hash[have]
    return bool(len(hashes)) and bool((hashes == hashes[0]).all()) and len(np.unique(rows.task[have])) > 1


def judge_audit_rows(pass_rate: float, *, half_width: float = D.JUDGE_AUDIT_HALF_WIDTH,
                     kappa: float = D.JUDGE_AUDIT_KAPPA, alpha: float = D.HOLDOUT_ALPHA) -> int:
    """Rows to label by hand for a (1 - alpha) interval of +/- half_width on Cohen's kappa (D.JUDGE_AUDIT_*)."""
    low, high = D.JUDGE_AUDIT_PASS_RANGE
    p = min(max(pass_rate, low), high)
    p_e = p * p + (1 - p) * (1 - p)  # chance agreement when your labels pass as often as the judge does
    p_o = kappa + (1 - kappa) * p_e
    return tasks_needed(math.sqrt(p_o * (1 - p_o)) / (1 - p_e), half_width, 0.5, alpha)


# -- the checks ------------------------------------------------------------------------------------------------------

def _tasks(rows: GradedRows, at: np.ndarray) -> list[str]:
    """The distinct tasks of rows `at`, first seen first (LIST_LIMIT of them)."""
    codes = list(dict.fromkeys(rows.task[at[: 10 * D.LIST_LIMIT]].tolist()))[: D.LIST_LIMIT]
    return [display_name(rows.task_names[t]) for t in codes]


def _blank_passes(rows: GradedRows, graded: np.ndarray, passed: np.ndarray, f: _Found) -> None:
    """Blank (or whitespace-only) replies that passed: any stops the route. Tool trajectories are not read."""
    n_tool = int((rows.reply_len == TOOL_TRAJECTORY).sum())
    if n_tool:
        f.evidence["tool_trajectories"] = n_tool
        f.warnings.append(f"{plural(n_tool, 'row')} end a tool-using trajectory: their grade may rest on what the "
                          f"tools did, so question 0 does not read their last message as the reply")
    blank = (rows.reply_len == 0) & graded
    hits = np.flatnonzero(blank & passed)
    f.evidence.update(blank_replies=int(blank.sum()), blank_passes=len(hits))
    if not len(hits):
        return
    shown = hits[: D.GRADER_EXAMPLES].tolist()
    f.evidence["blank_pass_examples"] = rows.refs(shown)
    f.evidence["blank_pass_tasks"] = _tasks(rows, hits)
    f.found.append("blank_passes")
    f.stop("blank_passes", f"{replies(len(hits), 'blank')} passed (e.g. {', '.join(rows.where(i) for i in shown)}): "
                           f"the grader passes an answer that says nothing, so every rate below counts them. Make a "
                           f"blank (or whitespace-only) reply fail, re-grade, then ask again.", rows.refs(shown))


def _graded_both_ways(rows: GradedRows, graded: np.ndarray, f: _Found) -> None:
    """The same reply text graded apart within a task: above GRADER_FLIP_SHARE of the repeated replies it stops the
    route, under it a warning; where every rollout of every task is one text, both readings are said."""
    flips = _repeated_replies(rows, graded)
    f.evidence.update(flips)
    if not flips["graded_both_ways"]:
        return
    f.found.append("graded_both_ways")
    what = (f"{flips['graded_both_ways']} of {replies(flips['repeated_replies'], 'repeated')} "
            f"({flips['flip_share']:.0%}) got different grades within a task (e.g. "
            f"{', '.join(flips['flip_tasks'][:3])}): the grade is not a function of the reply (a judge sampled at "
            f"temperature? a flaky test?)")
    if flips.get("one_text_per_task"):  # every rollout of a task the same text: replies, or a task's own text?
        where = (f"`{rows.fields['completion']}`" if "completion" in rows.fields
                 else "the reply field (completion, response or output)")
        f.warnings.append(f"{what}; but every rollout of every task carries the same text in {where}: if that is the "
                          f"task's own text (a reference answer), map the replies with fields={{\"completion\": ...}}; "
                          f"if it is the reply, the grader is not a function of it")
    elif flips["flip_share"] > D.GRADER_FLIP_SHARE:
        f.stop("graded_both_ways", f"{what[0].upper()}{what[1:]}. Grade at temperature 0 or with fixed seeds (or take "
                                   f"the majority of several gradings), re-grade, then ask again.",
               flips["flip_examples"])
    else:
        f.warnings.append(f"{what}; under {D.GRADER_FLIP_SHARE:.0%} of repeated replies, so the route goes on: read "
                          f"those rows")


def _length_bias(rows: GradedRows, graded: np.ndarray, f: _Found) -> None:
    """A grade that rises with the reply's length within tasks: it decides the route (the grade measures length, so
    every rate below does), named with its evidence, and the audit in a warning."""
    length = _length_link(rows, graded)
    if length is None:
        return
    examples = length.pop("examples", [])
    f.evidence["length"] = length
    if length["biased"]:
        f.found.append("length_bias")
        f.stop("length_bias", f"The grade follows the reply's length: within tasks, longer replies pass more often "
                              f"(Spearman rho {length['rho']:.2f} over {length['groups']} groups, z {length['z']:.1f}; "
                              f"most in {', '.join(length['tasks'][:3])}). A grader that rewards length (a judge's "
                              f"verbosity bias) teaches the model to ramble: {LENGTH_FIX}; re-grade, then ask again.",
               rows.refs(examples))
        f.warnings.append(f"grades rise with the reply's length within tasks (Spearman rho {length['rho']:.2f} over "
                          f"{length['groups']} groups, z {length['z']:.1f}): a grader that rewards length (a judge's "
                          f"verbosity bias)? Audit it before trusting any rate (audit-your-judge): hand-label short "
                          f"and long replies of the same tasks and compare their grades, or re-grade with the length "
                          f"held fixed")


# (task, reply) as one 64-bit key: the hash times an odd constant (a bijection mod 2^64) plus the task code, so two
# pairs share a key about as often as two replies share a hash
MIX = np.uint64(0x9E3779B97F4A7C15)


def _repeated_replies(rows: GradedRows, graded: np.ndarray) -> dict[str, Any]:
    """Repeated replies (a task's same text given 2+ times, cut-off rows left out) and those graded apart. The
    repeated keys come from one sorted copy of one key a row; only the rows holding them are kept past it (memory:
    two arrays of the rows' length at once)."""
    keep = graded & (rows.reply_len >= 0) & ~rows.truncated
    key = rows.reply_hash[keep].view(np.uint64)
    key *= MIX
    key += rows.task[keep].astype(np.uint64)
    ordered = np.sort(key)
    same = ordered[1:] == ordered[:-1]
    repeated = np.unique(ordered[1:][same])
    # one text in every rollout of every task: the field may hold a task's own text (a reference answer), not replies
    tasks = int(np.count_nonzero(np.bincount(rows.task[keep]))) if len(key) else 0
    one_text = bool(len(repeated)) and len(key) - int(same.sum()) == tasks
    del ordered, same
    none = {"repeated_replies": 0, "graded_both_ways": 0, "flip_share": None}
    if not len(repeated):
        return none
    held = repeated[np.minimum(np.searchsorted(repeated, key), len(repeated) - 1)] == key
    at, key = np.flatnonzero(keep)[held], key[held]
    order = np.argsort(key, kind="stable")
    at, key = at[order], key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))  # each repeated reply's first row
    reward = rows.reward[at]
    flipped = (np.maximum.reduceat(reward, starts) - np.minimum.reduceat(reward, starts)) > 1e-9
    n_rep, n_flip = len(starts), int(flipped.sum())
    out: dict[str, Any] = {"repeated_replies": n_rep, "graded_both_ways": n_flip,
                           "flip_share": round(n_flip / n_rep, 4)}
    if one_text:
        out["one_text_per_task"] = True
    if n_flip:
        first = np.sort(at[starts[flipped]])
        out["flip_tasks"] = _tasks(rows, first)
        out["flip_examples"] = rows.refs(first[: D.GRADER_EXAMPLES].tolist())
    return out


def _length_link(rows: GradedRows, graded: np.ndarray) -> dict[str, Any] | None:
    """Spearman's rho of reply length and grade within groups, pooled (D.LENGTH_*); None with no groups to read.
    Past LENGTH_MAX_ROWS rows it reads every s-th task's groups (s the smallest stride that fits)."""
    keep = graded & (rows.reply_len > 0) & ~rows.truncated
    m = int(keep.sum())
    if m < 3:
        return None
    if m > D.LENGTH_MAX_ROWS:
        keep &= rows.task % math.ceil(m / D.LENGTH_MAX_ROWS) == 0
    model, arm = rows.model[keep], rows.arms[keep]
    group = rows.task[keep].astype(np.int64)
    if len(group) and (model.min() != model.max() or arm.min() != arm.max()):  # groups apart by sampler and arm
        key = (group * (len(rows.model_names) + 1) + model + 1) * (len(rows.arm_names) + 1) + arm + 1
        group = np.unique(key, return_inverse=True)[1].reshape(-1)
    n, use, r = within_group_spearman(group, rows.reply_len[keep].astype(np.float64), rows.reward[keep])
    if not use.any():
        return None
    task_of = np.zeros(len(n), dtype=np.int64)
    task_of[group] = rows.task[keep]
    first_row = np.full(len(n), -1, dtype=np.int64)
    first_row[group[::-1]] = np.flatnonzero(keep)[::-1]  # each group's first row
    top = np.argsort(-r, kind="stable")[: D.GRADER_EXAMPLES]
    w = n[use] - 1
    rho = float((w * r).sum() / w.sum())
    z = float((w * r).sum() / math.sqrt(w.sum()))
    biased = (int(use.sum()) >= D.LENGTH_MIN_GROUPS and rho >= D.LENGTH_MIN_RHO
              and z > NormalDist().inv_cdf(1 - D.LENGTH_ALPHA))
    groups = np.flatnonzero(use)[top]
    tasks = list(dict.fromkeys(display_name(rows.task_names[t]) for t in task_of[groups].tolist()))
    return {"rho": round(rho, 4), "z": round(z, 2), "groups": int(use.sum()), "rows": int(n[use].sum()),
            "biased": biased, "tasks": tasks, "examples": first_row[groups].tolist()}


def _other_graders(rows: GradedRows, graded: np.ndarray, pass_threshold: float, f: _Found) -> None:
    """Each other grader against the reward read: rows both graded, raw agreement, Cohen's kappa, where they differ;
    a warning for each that grades any row apart."""
    out = []
    for name, values in rows.graders.items():
        both = graded & ~np.isnan(values)
        if not both.any():
            continue
        a, b = rows.reward[both], values[both]
        if b.min() < 0 or b.max() > 1:
            continue  # a count or a timing kept beside the rewards, not a grade
        pa, pb = a >= pass_threshold, b >= min(pass_threshold, 1.0)
        p_o = float((pa == pb).mean())
        qa, qb = float(pa.mean()), float(pb.mean())
        p_e = qa * qb + (1 - qa) * (1 - qb)
        apart = np.flatnonzero(both)[pa != pb]
        out.append({"name": name, "rows": int(both.sum()), "agreement": round(p_o, 4),
                    "kappa": round((p_o - p_e) / (1 - p_e), 4) if p_e < 1 else None,
                    "disagree_rows": len(apart), "disagree_tasks": _tasks(rows, apart),
                    "judge": rows.judged_by.get(name)})
    if out:
        f.evidence["graders"] = out
    differ = [c for c in out if c["disagree_rows"]]
    if differ:
        f.found.append("graders_differ")
    for c in differ:
        kappa = f"kappa {c['kappa']:.2f}" if c["kappa"] is not None else "kappa undefined: a grader is constant"
        judge = " (a model)" if c["judge"] else ""
        f.warnings.append(f"grader `{c['name']}`{judge} grades these rollouts too: it agrees with the reward read on "
                          f"{c['rows'] - c['disagree_rows']} of {c['rows']} rows ({kappa}) and differs on "
                          f"{plural(c['disagree_rows'], 'row')} ({', '.join(c['disagree_tasks'][:5])}); if both grade "
                          f"the same thing, read those replies to see which is right")


def _judge(rows: GradedRows, graded: np.ndarray, passed: np.ndarray, f: _Found) -> None:
    """Where a model graded the reward read: what says so, and the rows an audit labels (judge_audit_rows)."""
    if "reward" not in rows.judged_by or not graded.any():
        return
    rate = float(passed[graded].mean())
    judge = {"by": rows.judged_by["reward"], "pass_rate": round(rate, 4), "audit_rows": judge_audit_rows(rate),
             "kappa_half_width": D.JUDGE_AUDIT_HALF_WIDTH}
    f.evidence["judge"] = judge
    f.found.append("judge")
    f.warnings.append(f"a model graded the reward read ({judge['by']}): every rate here is only as good as that judge. "
                      f"Audit it first (audit-your-judge): hand-label {judge['audit_rows']} rows for a 95% interval of "
                      f"+/-{judge['kappa_half_width']:g} on Cohen's kappa between the judge and your labels (at kappa "
                      f"{D.JUDGE_AUDIT_KAPPA:g} and its pass rate {rate:.2f})")
