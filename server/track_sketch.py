"""track's picture (routing/during_training/picture.py) as text under the verdict: per window, the band's shares as
one stacked bar (all fail, split, all pass), the reward and the reply length, alarms marked at their window."""

from __future__ import annotations

from typing import Any

from .sketch import COLOURS, WIDTH

KINDS = (("all_fail", "▓"), ("split", "█"), ("all_pass", "░"))


def track_sketch(p: Any, colour: bool = False) -> str:
    def paint(kind: str, text: str) -> str:
        return f"\x1b[{COLOURS[kind]}m{text}\x1b[0m" if colour and text else text

    if not p.points:
        return "(no whole window to draw)"
    lines = [f"band per window ({KINDS[0][1]} all fail, {KINDS[1][1]} split, {KINDS[2][1]} all pass), reward, "
             f"reply length ({p.length_unit or 'not read'}); ! marks an alarm:"]
    marks = sorted(p.marks, key=lambda m: m.step)
    half = (p.points[1].step - p.points[0].step) / 2 if len(p.points) > 1 else 0.5
    for pt in p.points:
        bar = ""
        if pt.split is not None:
            cells = [round((getattr(pt, kind) or 0.0) * WIDTH) for kind, _ in KINDS]
            cells[1] = max(0, WIDTH - cells[0] - cells[2])
            bar = "".join(paint(kind, ch * n) for (kind, ch), n in zip(KINDS, cells))
        here = [m.name for m in marks if pt.step - half < m.step <= pt.step + half]
        reward = "-" if pt.reward is None else f"{pt.reward:.3f}"
        length = "-" if pt.length is None else f"{pt.length:,.0f}"
        lines.append(f"  step {pt.step:>8,.0f}  {bar or '(band not read)':<{WIDTH}}  reward {reward:>6}  length "
                     f"{length:>7}" + (f"  ! {', '.join(here)}" if here else ""))
    return "\n".join(lines)
