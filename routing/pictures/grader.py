"""What question 0 found, drawn for a route it stopped (fix_reward on the grader): blank replies that passed,
repeated replies graded both ways, and the pass rate against the reply's length within its task. The truncation
counts (question 1) are not what decided such a route, so they are not drawn in its place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ..before_training import fix_why
from ..rows import GradedRows
from ..shared import plural, replies
from ..stats import midranks

FIFTHS = ("shortest fifth", "2nd fifth", "middle fifth", "4th fifth", "longest fifth")


class LengthBin(BaseModel):
    label: str
    rows: int
    pass_rate: float | None


class GraderPanel(BaseModel):
    """Question 0's counts, and the grade against length where the replies vary in length within tasks."""

    blank_passes: int = Field(description="Blank (or whitespace-only) replies that passed.")
    blank_replies: int
    repeated_replies: int = Field(description="Replies a task got two or more times with the same text.")
    graded_both_ways: int = Field(description="Of those, the ones given different grades.")
    flip_tasks: list[str] = Field(default_factory=list)
    length_rho: float | None = Field(None, description="Within-task Spearman rho of reply length and grade.")
    length_biased: bool = False
    length_tasks: list[str] = Field(default_factory=list)
    by_length: list[LengthBin] = Field(default_factory=list, description=(
        "Pass rate by the reply's length rank within its task (ties share a rank), shortest fifth first; only "
        "tasks whose replies differ in length and whose grades differ."))


def grader_panel(rows: GradedRows, evidence: dict[str, Any], pass_threshold: float) -> GraderPanel:
    length = evidence.get("length") or {}
    return GraderPanel(blank_passes=int(evidence.get("blank_passes") or 0),
                       blank_replies=int(evidence.get("blank_replies") or 0),
                       repeated_replies=int(evidence.get("repeated_replies") or 0),
                       graded_both_ways=int(evidence.get("graded_both_ways") or 0),
                       flip_tasks=list(evidence.get("flip_tasks") or []), length_rho=length.get("rho"),
                       length_biased=bool(length.get("biased")), length_tasks=list(length.get("tasks") or []),
                       by_length=_by_length(rows, pass_threshold) if rows.reply_len is not None else [])


def _by_length(rows: GradedRows, pass_threshold: float) -> list[LengthBin]:
    graded = ~np.isnan(rows.reward)
    keep = graded & (rows.reply_len > 0) & ~rows.truncated
    if keep.sum() < 3:
        return []
    task = rows.task[keep].astype(np.int64)
    length = rows.reply_len[keep].astype(np.float64)
    passed = (rows.reward[keep] >= pass_threshold).astype(np.float64)
    n = np.bincount(task).astype(np.float64)
    rank = midranks(task, length)
    varies = (np.bincount(task, weights=length ** 2) * n - np.bincount(task, weights=length) ** 2 > 0)
    split = (np.bincount(task, weights=passed) % np.maximum(n, 1) != 0)
    use = (varies & split)[task]
    if not use.any():
        return []
    where = np.minimum(((rank[use] - 0.5) / n[task][use] * len(FIFTHS)).astype(np.int64), len(FIFTHS) - 1)
    counts = np.bincount(where, minlength=len(FIFTHS))
    sums = np.bincount(where, weights=passed[use], minlength=len(FIFTHS))
    return [LengthBin(label=label, rows=int(c), pass_rate=round(float(s / c), 4) if c else None)
            for label, c, s in zip(FIFTHS, counts.tolist(), sums.tolist())]


def grader_lines(p: GraderPanel) -> list[str]:
    """The panel as the text sketch says it."""
    out = ["question 0: the grader, not the model, decides the pass rates:",
           f"  blank replies that passed:        {p.blank_passes} of {p.blank_replies} blank",
           f"  repeated replies graded both ways: {p.graded_both_ways} of {p.repeated_replies}"
           + (f" (e.g. {', '.join(p.flip_tasks[:3])})" if p.flip_tasks else "")]
    if p.length_rho is not None:
        out.append(f"  grade against length within tasks: rho {p.length_rho:+.2f}"
                   + (" (the grade follows length" + (f"; most in {', '.join(p.length_tasks[:3])}" if p.length_tasks
                                                      else "") + ")" if p.length_biased else ""))
    for b in p.by_length:
        rate = f"{b.pass_rate:4.0%}" if b.pass_rate is not None else "   -"
        out.append(f"    {b.label:<15} {'#' * round(20 * (b.pass_rate or 0)):<21}{rate} ({b.rows} replies)")
    return out


# -- the captions: what question 0 found, in words ----------------------------------------------------------


def caption_line(trace: list[Any]) -> str | None:
    """What question 0 found, for the band picture's caption (None when it found nothing)."""
    q0 = _question_0(trace)
    if q0 is None or q0.answer in ("ok", "no_replies"):
        return None
    e = q0.evidence
    said = []
    if e.get("blank_passes"):
        said.append(f"{replies(e['blank_passes'], 'blank')} passed")
    if (e.get("length") or {}).get("biased"):  # before the flips: a judge that follows length flips too
        said.append(f"grades rise with length (rho {e['length']['rho']:.2f})")
    if e.get("graded_both_ways"):
        said.append(f"{e['graded_both_ways']} repeated replies graded both ways")
    for c in e.get("graders") or []:
        if c["disagree_rows"]:
            said.append(f"`{c['name']}` differs on {plural(c['disagree_rows'], 'row')}")
    if e.get("judge"):
        said.append("a model graded the reward")
    return f"Grader: {'; '.join(said)}." if said else None


def _question_0(trace: list[Any]) -> Any:
    """The trace's grader step (None where the route had none)."""
    return next((t for t in trace if t.name == "grader"), None)


def grader_caption(trace: list[Any]) -> str | None:
    """The picture's whole caption where question 0 decided the route (None where it did not)."""
    q0 = _question_0(trace)
    if q0 is None or not q0.decided:
        return None
    fix = fix_why(dict.fromkeys(q0.answer.split(", "))).removeprefix("Fix the grader: ")
    return (f"Route: fix_reward. {caption_line(trace)} The grader, not the model, decides the pass rates, so they are "
            f"not drawn. Fix the grader: {fix}")
