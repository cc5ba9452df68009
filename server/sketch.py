"""The picture (routing.pictures.route) as text under a verdict in the terminal: bars of unicode blocks, in colour only
when asked (the command line asks when stdout is a terminal and NO_COLOR is unset)."""

from __future__ import annotations

import os
from typing import Any, TextIO

from pick_a_method.routing.pictures.route import KIND_NAMES, PREDICTED_FOR

WIDTH = 32  # characters of the longest bar
EIGHTHS = " ▏▎▍▌▋▊▉"  # a bar's last character: its remaining eighths of a block
COLOURS = {"all_fail": "31", "student_ahead": "31", "split": "32", "teacher_ahead": "32", "all_pass": "34",
           "tie": "90", "cut_passed": "31", "cut_failed": "90", "whole_passed": "34", "whole_failed": "90",
           "higher": "32", "lower": "31", "same": "90", "above_0": "32", "below_0": "31", "open": "90"}


def wants_colour(stream: TextIO) -> bool:
    """Colour for a person at a terminal; never in a pipe or a file, nor where NO_COLOR is set (no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def block(value: float, top: float, width: int = WIDTH) -> str:
    """A bar `value / top` of `width` characters long, to an eighth of a character; a nonzero value shows."""
    if top <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / top * width * 8))
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")


def sketch(picture: Any, colour: bool = False) -> str:
    """The picture's panels as lines of text (`picture`: routing.pictures.route.Picture)."""
    def paint(kind: str, text: str) -> str:
        return f"\x1b[{COLOURS[kind]}m{text}\x1b[0m" if colour and text else text

    lines: list[str] = []
    b = picture.band
    if b is not None and b.n_groups:
        k = f"{b.k} rollouts each" if not b.uneven else f"{b.k}+ rollouts each"
        lines.append(f"pass rate per {b.unit[:-1]} ({b.n_groups} {b.unit}, {k}):")
        lines += _bars(b.bars, paint)
        if b.flat:
            lines.append(f"split share against k: 0% predicted at every k from {b.curve[0].k} to {b.curve[-1].k} "
                         f"(more rollouts per task do not make these tasks split)")
        elif b.curve:
            # at the rows' own k the row shows what was measured, the prediction beside it (they differ: the
            # prediction is a fresh draw's)
            here = b.measured_at_k
            measured = (f"; measured {b.measured_split_share:.0%} at k={b.k}"
                        if b.measured_split_share is not None and here is None else "")
            lines.append(f"split share against k (predicted for {PREDICTED_FOR}{measured}):")
            for point in b.curve:
                marks = [m for m, on in (("advised", point.k == b.advised_k), ("now", point.k == b.k)) if on]
                mine = here is not None and point.k == b.k
                share = here if mine else point.share
                said = f" measured ({point.share:.0%} predicted)" if mine else ""
                lines.append(f"  k={point.k:<4} {block(share, 1.0):<{WIDTH + 1}}{share:4.0%}{said}"
                             + (f"  <- {', '.join(marks)}" if marks else ""))
    if getattr(picture, "grader", None) is not None:  # question 0 stopped the route: what it found
        from pick_a_method.routing.pictures.grader import grader_lines

        lines += grader_lines(picture.grader)
    c = picture.cut_off
    if c is not None:
        lines.append("graded rollouts, cut off at the token cap or not (truncation decides the pass rates):")
        lines += _bars(c.bars, paint)
    if picture.per_task is not None:
        lines += _per_task(picture.per_task, paint)
    if picture.diffs is not None:
        lines += _diffs(picture.diffs, paint)
    p = picture.paired
    if p is not None:
        lines.append(f"teacher minus student per shared task ({p.n_shared} tasks; mean {p.mean_diff:+.3f}"
                     + (f" [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}]" if p.ci95 else "") + f", effect {p.effect:g}):")
        lines += _bars(p.bars, paint)
    return "\n".join(lines)


def _bars(bars: list[Any], paint: Any) -> list[str]:
    top = max((bar.count for bar in bars), default=0)
    label = max((len(bar.label) for bar in bars), default=0)
    name = max((len(KIND_NAMES[bar.kind]) for bar in bars), default=1)
    out = []
    for bar in bars:
        drawn = block(bar.count, top)
        shown = f"{bar.label:>{label}}  " if label else ""  # the cut-off bars have only their names
        out.append(f"  {shown}{KIND_NAMES[bar.kind]:<{name}}  {paint(bar.kind, drawn)}"
                   f"{' ' * (WIDTH + 1 - len(drawn))}{bar.count}")
    return out


def _per_task(t: Any, paint: Any) -> list[str]:
    """The tasks counted by their pass rate before (a row each) and after (a column each)."""
    k = f"k={t.k_before}" if t.k_before == t.k_after else f"k={t.k_before} before, k={t.k_after} after"
    cell = max(len(lv.label) for lv in t.after_levels) + 2
    head = "before \\ after"
    first = max(len(head), *(len(lv.label) for lv in t.before_levels))
    lines = [f"pass rate per task, before (rows) against after (columns) ({t.n_tasks} tasks, {k}):",
             f"  {head:>{first}}" + "".join(f"{lv.label:>{cell}}" for lv in t.after_levels)]
    for i, (lv, row) in enumerate(zip(t.before_levels, t.counts)):
        cells = "".join(" " * (cell - len(str(c) if c else ".")) + (paint(t.side(i, j), str(c)) if c else ".")
                        for j, c in enumerate(row))
        lines.append(f"  {lv.label:>{first}}{cells}")
    same = " (or in the same bin)" if t.binned else ""
    lines.append(f"  {t.total('higher')} higher after, {t.total('lower')} lower, {t.total('same')} the same{same}; "
                 f"{t.fail_to_pass} fail -> pass, {t.pass_to_fail} pass -> fail")
    return lines


def _diffs(d: Any, paint: Any) -> list[str]:
    """Each paired difference as a line on one axis: the interval, its mean (o), 0 (|) and the effect (:)."""
    lo, hi = d.span()
    pad = 0.05 * (hi - lo) or 0.05
    lo, hi = lo - pad, hi + pad
    at = lambda x: round((x - lo) / (hi - lo) * (WIDTH - 1))  # noqa: E731
    label = max(len(r.label) for r in d.rows)
    lines = [f"paired differences with 95% intervals over {d.n_tasks} tasks (| is 0, : the registered effect "
             f"{d.effect:g}; axis {lo:+.2f} to {hi:+.2f}):"]
    for r in d.rows:
        axis = [" "] * WIDTH
        if r.ci95:
            for x in range(at(r.ci95[0]), at(r.ci95[1]) + 1):
                axis[x] = "─"
        axis[at(0.0)], axis[at(d.effect)] = "|", ":"
        axis[at(r.mean_diff)] = "o"
        ci = f" [{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]" if r.ci95 else " (no interval)"
        number = f"{r.mean_diff:+.3f}{ci}"
        lines.append(f"  {r.label:<{label}}  {paint(r.reading, ''.join(axis))}  {number}")
    return lines
