"""The picture (routing.picture) as text under a verdict in the terminal: bars of unicode blocks, in colour only
when asked (the command line asks when stdout is a terminal and NO_COLOR is unset)."""

from __future__ import annotations

import os
from typing import Any, TextIO

from pick_a_method.routing.picture import KIND_NAMES, PREDICTED_FOR

WIDTH = 32  # characters of the longest bar
EIGHTHS = " ▏▎▍▌▋▊▉"  # a bar's last character: its remaining eighths of a block
COLOURS = {"all_fail": "31", "student_ahead": "31", "split": "32", "teacher_ahead": "32", "all_pass": "34",
           "tie": "90", "cut_passed": "31", "cut_failed": "90", "whole_passed": "34", "whole_failed": "90"}


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
    """The picture's panels as lines of text (`picture`: routing.picture.Picture)."""
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
    c = picture.cut_off
    if c is not None:
        lines.append("graded rollouts, cut off at the token cap or not (truncation decides the pass rates):")
        lines += _bars(c.bars, paint)
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
