"""The band as a picture, as data: what the text sketch (server/sketch.py) and the drawn figure (server/plot.py)
show, read off the same table the verdict read, so every bar is one of the verdict's counts.

Two panels: the band (a histogram of per-task pass rates with all-fail, split and all-pass apart, and the
predicted split share against k with the advised k marked), and, for a teacher, the paired per-task difference
(teacher minus student on the tasks both scored). Where the route is fix_reward, truncation decides the rates, so
neither is drawn: the one panel counts the rollouts cut off at the token cap that passed, as question 1 does.
`after`'s picture is its own two panels (routing/pictures/after.py). numpy and pydantic only: no plotting library
here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from .. import defaults as D
from .after import DiffPanel, PerTaskPanel, after_caption, diff_panel, per_task_panel
from ..after_training import After
from ..before_training import split_samplers
from ..before_training import paired, shared_rates
from pick_a_method.common.errors import InputError
from .grader import GraderPanel, caption_line, grader_caption, grader_panel
from ..before_training import band
from ..shared import groups, plural, unit
from ..readers import as_rows
from ..rows import GradedRows, RowsLike, display_name
from ..table import table_of
from ..verdicts import Band, Interval, PassAt, Route, TeacherClears

# Presentation only (nothing here changes a verdict): up to this many distinct rates (or differences) each get
# their own bar, so k = 8 shows 1/8 ... 7/8 exactly; past it, equal-width bins of these many.
EXACT_BARS = 16
RATE_BINS = 10
DIFF_BINS = 20

# The band's bars: rate 0, strictly between, rate 1. The paired bars: the student ahead, a tie, the teacher ahead.
TEACHER_ANSWERS = ("clears", "does_not_clear", "tokenizer_mismatch", "undecided")  # TeacherClears.verdict
Kind = Literal["all_fail", "split", "all_pass", "student_ahead", "tie", "teacher_ahead", "cut_passed",
               "cut_failed", "whole_passed", "whole_failed"]
KIND_NAMES = {"all_fail": "all fail", "split": "split", "all_pass": "all pass", "student_ahead": "student ahead",
              "tie": "tie", "teacher_ahead": "teacher ahead", "cut_passed": "cut off, passed",
              "cut_failed": "cut off, failed", "whole_passed": "not cut off, passed",
              "whole_failed": "not cut off, failed"}  # as the sketch and the figure label the bars
# Under this predicted share at every k, nothing splits however many rollouts a task gets: said, not drawn as a curve.
FLAT_SHARE = 0.005
# What the curve predicts, in the words the caption, the sketch and the figure use: each task's rate is drawn from
# its posterior under the prior fitted to these rates, so at the rows' own k the prediction is a fresh draw's
# expectation and can differ from the share this draw measured.
PREDICTED_FOR = "a fresh draw of k rollouts per task"


class Bar(BaseModel):
    kind: Kind
    low: float = Field(description="The lowest pass rate the bar counts (equal to high for one exact rate).")
    high: float
    label: str = Field(description="The rate as the axis shows it: 3/8, or 0.30-0.40 for a bin.")
    count: int


class SplitPoint(BaseModel):
    k: int
    share: float = Field(description="Predicted share of groups of k that split (the band's prior).")
    ci95: Interval | None = None


class BandPanel(BaseModel):
    unit: Literal["tasks", "groups"] = Field(description="groups where a task's rollouts of several samplers/arms are "
                                                         "kept apart.")
    bars: list[Bar] = Field(description="Per-task pass rates, lowest first; the counts are the band's.")
    n_groups: int
    n_all_fail: int
    n_split: int = Field(description="The band's split count, by split_definition.")
    split_definition: str = Field(description="The band's: pass/fail, or reward spread when rewards are not 0/1 (then "
                                              "the bars, which read pass/fail, can differ from n_split).")
    n_all_pass: int
    k: int = Field(description="The rows' rollouts per task (the smallest group of two or more).")
    uneven: bool = Field(description="Groups differ in size, so rates are binned rather than exact j/k.")
    measured_split_share: float | None
    curve: list[SplitPoint] = Field(description=f"Predicted split share against k, for {PREDICTED_FOR} (empty when "
                                                f"no prior was fitted); at k it can differ from measured_split_share.")
    advised_k: int | None = Field(description="The group size the verdict sizes the batch for (grouped routes only).")
    best_k: int | None = Field(description="The k with the most groups with signal per rollout.")

    @property
    def flat(self) -> bool:
        """A curve under FLAT_SHARE at every k: more rollouts per task do not make these tasks split."""
        return bool(self.curve) and max(p.share for p in self.curve) < FLAT_SHARE

    @property
    def measured_at_k(self) -> float | None:
        """The measured split share where it is a share at the curve's point k (every group has k rollouts and the
        split is pass/fail): there the picture shows the measurement, the prediction beside it."""
        if self.measured_split_share is None or self.uneven or self.k < 2 or not self.curve or self.flat:
            return None
        return self.measured_split_share if any(p.k == self.k for p in self.curve) else None

    def predicted(self, k: int) -> float | None:
        return next((p.share for p in self.curve if p.k == k), None)


class PairedPanel(BaseModel):
    bars: list[Bar] = Field(description="Teacher minus student pass rate per shared task, lowest first.")
    n_shared: int
    mean_diff: float
    ci95: Interval | None
    effect: float
    verdict: str | None = Field(description="teacher_clears' answer, when it was asked.")


class CutOffPanel(BaseModel):
    """Question 1's count drawn: graded rollouts by whether they were cut off at the token cap and whether they
    passed (the rows that do not say whether they were cut off are left out)."""

    bars: list[Bar] = Field(description="cut off and passed, cut off and failed, not cut off and passed, and failed.")
    n_truncated_passes: int = Field(description="The route's count: rollouts cut off at the token cap that passed.")
    n_stated: int = Field(description="Graded rows that say whether they were cut off.")


class Picture(BaseModel):
    title: str
    caption: str = Field(description="The route (or the question's answer) and the numbers the panels show.")
    route: str | None
    band: BandPanel | None = None
    paired: PairedPanel | None = None
    cut_off: CutOffPanel | None = Field(None, description="For fix_reward, in place of the band: truncation decides "
                                                          "the rates, so they are not drawn.")
    grader: GraderPanel | None = Field(None, description="For a route question 0 stopped, in place of the cut-off "
                                                         "counts: what it found in the grades.")
    per_task: PerTaskPanel | None = Field(None, description="after: each task's pass rate before against after.")
    diffs: DiffPanel | None = Field(None, description="after: each paired difference beside the registered effect.")


def picture(rows: RowsLike, verdict: Route | Band | PassAt | TeacherClears | After | None = None, *,
            model: str | None = None, teacher_rows: RowsLike | None = None, after_rows: RowsLike | None = None,
            pass_threshold: float = D.PASS_THRESHOLD, effect: float = D.PROVE_EFFECT) -> Picture:
    """The picture of a verdict. `rows` are the rows it read (the student's for teacher_clears, the base's for
    after, with the checkpoint's as `after_rows`); `model` picks the trained model's own rows as route does;
    `teacher_rows` adds the paired panel (teacher_clears has only it)."""
    rows = as_rows(rows)
    source = _name(rows)
    if isinstance(verdict, After):
        if after_rows is None:
            raise InputError("an after picture needs the trained checkpoint's rows: pass after_rows",
                             field="after_rows")
        trained = as_rows(after_rows, what="after_rows")
        per_task = per_task_panel(rows, trained, verdict, pass_threshold)
        caveat = (" (not yet attributed: no control arm)" if verdict.verdict == "proven"
                  and verdict.random_selection is None and verdict.random_reward is None else "")
        return Picture(title=f"{_arms_named(verdict, trained, rows)}: {verdict.verdict.replace('_', ' ')}{caveat}",
                       caption=after_caption(verdict, per_task), route=None, per_task=per_task,
                       diffs=diff_panel(verdict))
    if isinstance(verdict, TeacherClears):
        if teacher_rows is None:
            raise InputError("a teacher_clears picture needs the teacher's rows: pass teacher_rows", field="teacher_rows")
        teacher = as_rows(teacher_rows, what="teacher_rows")
        panel = paired_panel(teacher, rows, pass_threshold, verdict.effect, verdict)
        return Picture(title=f"{_name(teacher)} vs {source}: teacher {verdict.verdict.replace('_', ' ')}",
                       caption=_paired_caption(panel), route=None, paired=panel)
    if isinstance(verdict, Route) and verdict.route == "fix_reward" and grader_caption(verdict.trace):
        q0 = next(t for t in verdict.trace if t.name == "grader")  # question 0 decided: draw what it found
        return Picture(title=f"{source}: route fix_reward (the grader)", caption=grader_caption(verdict.trace),
                       route=verdict.route, grader=grader_panel(rows, q0.evidence, pass_threshold))
    if isinstance(verdict, Route) and verdict.route == "fix_reward":
        panel = cut_off_panel(rows, pass_threshold)
        caption = grader_caption(verdict.trace) or " ".join(filter(None, [_cut_off_caption(panel),
                                                                         caption_line(verdict.trace)]))
        return Picture(title=f"{source}: route fix_reward", caption=caption, route=verdict.route, cut_off=panel)
    own, others = split_samplers(rows, model)
    in_file, about_given = judged_teacher(verdict, others) if isinstance(verdict, Route) else (None, False)
    if in_file is not None:  # the route weighed another sampler of the file as the teacher: that is the panel
        teacher_rows = in_file
    b = verdict if isinstance(verdict, Band) else band(own, pass_threshold=pass_threshold)
    grouped = verdict.rollouts if isinstance(verdict, Route) else (b.rollouts if b.verdict == "mixed" else None)
    panel = band_panel(own, b, pass_threshold, advised_k=grouped.group_size if grouped else None)
    pair = None
    if teacher_rows is not None:
        pair = paired_panel(as_rows(teacher_rows, what="teacher_rows"), own, pass_threshold, effect, None)
    if pair is not None and (in_file is not None or about_given):  # question 5's answer, about the teacher drawn
        answer = next((t.answer for t in verdict.trace if t.name == "teacher_clears"), None)
        pair.verdict = answer if answer in TEACHER_ANSWERS else None
    if isinstance(verdict, Route):
        head, route = f"route {verdict.route}", verdict.route
        lead = f"Route: {verdict.route}" + (f" ({', '.join(verdict.methods)})." if verdict.methods else ".")
        lead += f" {caption_line(verdict.trace)}" if caption_line(verdict.trace) else ""  # question 0's finding
    elif isinstance(verdict, PassAt) and verdict.pass_at_1 is not None:
        head, route, lead = f"pass@1 {verdict.pass_at_1:.3f}", None, f"pass@1 {verdict.pass_at_1:.3f}."
    else:
        head, route, lead = f"band {b.verdict}", None, f"Band: {b.verdict}."
    caption = " ".join([lead, _band_caption(panel)] + ([_paired_caption(pair)] if pair else []))
    return Picture(title=f"{source}: {head}", caption=caption, route=route, band=panel, paired=pair)


def judged_teacher(verdict: Route, others: dict[str, GradedRows]) -> tuple[GradedRows | None, bool]:
    """Whose rows question 5's answer is about: another sampler of the file (its rows), or the caller's teacher rows
    (True); (None, False) where it judged none."""
    q5 = next((t for t in verdict.trace if t.name == "teacher_clears"), None)
    judged = q5.evidence.get("judged") if q5 is not None else None
    if judged is None or judged == "teacher_rows":
        return None, judged is not None
    return next((r for name, r in others.items() if display_name(name) == judged), None), False


def band_panel(rows: GradedRows, b: Band, pass_threshold: float, *, advised_k: int | None) -> BandPanel:
    """The histogram from the table's graded groups, the curve from the band's prior."""
    g = groups(rows, pass_threshold)
    rates = g.rates if len(g) else np.zeros(0)
    middle = rates[(rates > 0) & (rates < 1)]
    sizes = np.unique(g.n[g.n >= 2]) if len(g) else np.zeros(0, np.int64)
    uneven = len(sizes) > 1
    bars = [Bar(kind="all_fail", low=0.0, high=0.0, label="0", count=int((rates == 0).sum()))]
    if len(sizes) == 1 and sizes[0] - 1 <= EXACT_BARS:  # every group has k rollouts: one bar per j/k, empty ones too
        k = int(sizes[0])
        passes = np.rint(middle * k).astype(np.int64)
        bars += [Bar(kind="split", low=j / k, high=j / k, label=f"{j}/{k}", count=int((passes == j).sum()))
                 for j in range(1, k)]
    elif len(sizes):  # binned; where every task was sampled once none can split, and no split bar is drawn
        bars += _bins(middle, 0.0, 1.0, RATE_BINS, "split")
    bars.append(Bar(kind="all_pass", low=1.0, high=1.0, label="1", count=int((rates == 1).sum())))
    curve = {}
    if b.rollouts is not None:
        curve = {p.k: SplitPoint(k=p.k, share=p.split_share, ci95=p.ci95) for p in b.rollouts.per_k}
    for kk, share in b.predicted_split_share.items():  # the rows' own k, where it is not a candidate
        curve.setdefault(int(kk), SplitPoint(k=int(kk), share=share, ci95=b.predicted_split_ci95.get(kk)))
    return BandPanel(unit=f"{unit(g)}s", bars=bars, n_groups=b.n_groups, n_all_fail=b.n_all_fail,
                     n_split=b.n_split, split_definition=b.split_definition, n_all_pass=b.n_all_pass, k=b.k,
                     uneven=uneven,
                     # the curve predicts pass/fail splits: the measured point is one only by that definition
                     measured_split_share=b.split_share if b.split_definition == D.SIGNAL_DEFINITIONS["binary"]
                     else None, curve=[curve[k] for k in sorted(curve)], advised_k=advised_k,
                     best_k=b.rollouts.best_k if b.rollouts else None)


def paired_panel(teacher: GradedRows, student: GradedRows, pass_threshold: float, effect: float,
                 verdict: TeacherClears | None) -> PairedPanel | None:
    """Teacher minus student per shared task, with the mean and interval the verdict reports (compare.paired)."""
    _, tr, sr = shared_rates(table_of(teacher, pass_threshold), table_of(student, pass_threshold))
    summary = verdict.paired if verdict is not None else paired(teacher, student, pass_threshold)
    if summary is None:
        return None
    diffs = np.round(tr - sr, 9)  # rates j/k subtract to float noise around the exact difference
    values = np.unique(diffs)
    if len(values) <= EXACT_BARS + 1:
        bars = [Bar(kind="student_ahead" if v < 0 else "tie" if v == 0 else "teacher_ahead", low=float(v),
                    high=float(v), label=f"{v:+.2f}" if v else "0", count=int((diffs == v).sum())) for v in values]
    else:  # a tie keeps its own bar between the bins on either side
        bars = (_bins(diffs[diffs < 0], -1.0, 0.0, DIFF_BINS // 2, "student_ahead")
                + [Bar(kind="tie", low=0.0, high=0.0, label="0", count=int((diffs == 0).sum()))]
                + _bins(diffs[diffs > 0], 0.0, 1.0, DIFF_BINS // 2, "teacher_ahead"))
    return PairedPanel(bars=bars, n_shared=summary.n_shared, mean_diff=summary.mean_diff, ci95=summary.ci95,
                       effect=effect, verdict=verdict.verdict if verdict is not None else None)


def cut_off_panel(rows: GradedRows, pass_threshold: float) -> CutOffPanel:
    """Every row's count, as question 1 reads them (one grader scored them all)."""
    if rows.counts is not None:  # a summary's counts (at its own threshold: counts.passes_at checked it)
        s = rows.counts
        cut_passed, stated_passed = int(s.truncated_passes.sum()), int(s.stated_passes.sum())
        cut_failed = int(s.truncated_graded.sum()) - cut_passed
        n = {"cut_passed": cut_passed, "cut_failed": cut_failed, "whole_passed": stated_passed - cut_passed,
             "whole_failed": int(s.stated_graded.sum()) - stated_passed - cut_failed}
        bars = [Bar(kind=kind, low=0.0, high=0.0, label="", count=v) for kind, v in n.items()]
        return CutOffPanel(bars=bars, n_truncated_passes=cut_passed, n_stated=int(s.stated_graded.sum()))
    graded = rows.stated & ~np.isnan(rows.reward)
    passed = rows.reward >= pass_threshold  # NaN compares false
    cut = rows.truncated
    counts = {"cut_passed": cut & passed, "cut_failed": cut & ~passed & graded,
              "whole_passed": ~cut & passed & graded, "whole_failed": ~cut & ~passed & graded}
    bars = [Bar(kind=kind, low=0.0, high=0.0, label="", count=int(mask.sum())) for kind, mask in counts.items()]
    return CutOffPanel(bars=bars, n_truncated_passes=int((cut & passed).sum()), n_stated=int(graded.sum()))


def _bins(values: np.ndarray, low: float, high: float, n: int, kind: Kind) -> list[Bar]:
    edges = np.linspace(low, high, n + 1)
    counts, _ = np.histogram(values, edges)
    return [Bar(kind=kind, low=float(a), high=float(b), label=f"{a:.2f}-{b:.2f}", count=int(c))
            for a, b, c in zip(edges[:-1], edges[1:], counts)]


def _name(rows: GradedRows) -> str:
    """The rows as a title names them: the file, a folder with its parent (`verl/0.9.1`), two files both."""
    if isinstance(rows.read_from, list):
        names = [_short(w) for w in rows.read_from]
        return " + ".join(names) if len(names) <= 2 else f"{len(names)} files"
    where = rows.read_from or rows.source
    return _short(where) if where else "rows"


def _arms_named(verdict: After, trained: GradedRows, base: GradedRows) -> str:
    """"after vs before" by the models that sampled them where those differ, else by their files (with the folders
    that tell two files of one name apart)."""
    models = {a.name: a.model for a in verdict.arms}
    if models.get("after") and models.get("before") and models["after"] != models["before"]:
        return f"{models['after']} vs {models['before']}"
    a, b = _name(trained), _name(base)
    if a == b and isinstance(trained.read_from, str) and isinstance(base.read_from, str) and \
            trained.read_from != base.read_from:
        a, b = (str(Path(w).relative_to(Path(os.path.commonpath([trained.read_from, base.read_from]))))
                for w in (trained.read_from, base.read_from))
    return f"{a} vs {b}"


def _short(where: str) -> str:
    """A path's name, with its parent's before it where the name alone says nothing: a folder (a run folder is
    often named by a version or a date) or a file whose name has no letters (`1.jsonl`, a step's dump)."""
    p = Path(str(where))
    name = p.name or str(p)
    if p.parent.name and (p.is_dir() or not any(c.isalpha() for c in p.stem)):
        return f"{p.parent.name}/{name}"
    return name


def _band_caption(p: BandPanel) -> str:
    if not p.n_groups:
        return "No graded rows."
    if p.k < 2:
        return (f"One graded rollout per {p.unit[:-1]}: {p.n_all_fail} failed, {p.n_all_pass} passed; a group of one "
                f"cannot split.")
    text = (f"{p.n_split} of {p.n_groups} {p.unit} split at k={p.k}, {p.n_all_fail} all fail, "
            f"{p.n_all_pass} all pass.")
    if p.split_definition != D.SIGNAL_DEFINITIONS["binary"]:
        text += " Rewards are not all 0/1: a group counts as split when its rewards differ; the bars read a pass at " \
                "reward >= the threshold."
    at = {s.k: s.share for s in p.curve}
    if p.advised_k is not None and p.advised_k in at:
        text += f" Advised k={p.advised_k}: {at[p.advised_k]:.0%} predicted to split."
    elif p.flat:
        text += " No k makes them split."
    if p.measured_at_k is not None:
        now = at[p.k]
        text += f" The curve predicts {PREDICTED_FOR}"
        text += (f": {now:.0%} at k={p.k}, where these rows measured {p.measured_at_k:.0%}."
                 if round(100 * now) != round(100 * p.measured_at_k) else ".")
    return text


def _cut_off_caption(p: CutOffPanel) -> str:
    cut = sum(b.count for b in p.bars if b.kind.startswith("cut_"))
    replies = "reply" if cut == 1 else "replies"
    return (f"Route: fix_reward. {p.n_truncated_passes} of {cut} {replies} cut off at the token cap passed "
            f"({p.n_stated} graded rows say whether they were cut off). Truncation, not the model, decides the pass "
            f"rates, so they are not drawn: make a cut-off reply fail (or raise max_tokens), re-grade, and ask again.")


def _paired_caption(p: PairedPanel | None) -> str:
    if p is None:
        return "No shared tasks to pair."
    ci = f" [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}]" if p.ci95 else " (no interval)"
    said = f": {p.verdict.replace('_', ' ')}" if p.verdict else ""
    return (f"Teacher minus student {p.mean_diff:+.3f}{ci} over {plural(p.n_shared, 'shared task')} (effect to prove "
            f"{p.effect:g}){said}.")
