"""`track`'s answer in words for a terminal: the verdict, the alarms with their steps, then one line a window (what
`--follow` prints as each window lands)."""

from __future__ import annotations

from typing import Any

from .models import Track, Window


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{x:4.0%}"


def _num(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


HEADER = "  steps          groups  all-pass split all-fail  reward [95%]            cut-off  length (p90)   distinct"


def window_line(w: Window) -> str:
    reward = f"{_num(w.reward)} [{_num(w.reward_ci95[0])}, {_num(w.reward_ci95[1])}]" if w.reward_ci95 else \
        _num(w.reward)
    length = (f"{w.length_mean:,.0f} ({w.length_p90:,.0f})" if w.length_mean is not None and w.length_p90 is not None
              else f"{w.length_mean:,.0f}" if w.length_mean is not None else "-")
    flags = []
    if w.blank_passes:
        flags.append(f"{w.blank_passes} blank passed")
    if w.cut_off_passes:
        flags.append(f"{w.cut_off_passes} cut-off passed")
    if w.graded_both_ways:
        flags.append(f"{w.graded_both_ways} graded both ways")
    if w.partial:
        flags.append(f"partial: {w.steps} steps")
    return (f"  {w.first_step:>6}-{w.last_step:<6} {w.groups:>6}  {_pct(w.all_pass_share)}    {_pct(w.split_share)} "
            f"{_pct(w.all_fail_share)}     {reward:<24} {_pct(w.cut_off_share)}   {length:<14} "
            f"{_pct(w.distinct_share)}" + (f"  ({'; '.join(flags)})" if flags else ""))


def step_lines(label: str, step: Any) -> list[str]:
    if step is None:
        return []
    head = f"{label}: {step.command}" if step.command else f"{label}: {step.tool}({step.arguments})"
    out = [head, f"      {step.why}"]
    if step.needs:
        out.append(f"      fill in: {', '.join(step.needs)}")
    return out


def track_text(t: Track) -> str:
    lines = [f"{t.verdict}: {t.summary}"]
    lines += [f"warning: {w}" for w in t.warnings]
    lines += step_lines("next", t.next_step)
    for alt in t.alternatives:
        lines += step_lines("or", alt)
    r = t.run
    span = f"steps {r.first_step}-{r.last_step}" if r.first_step is not None else "no steps"
    lines.append(f"read: {r.trainer or 'unknown'} {r.source}, {r.steps_read} steps ({span}), windows of "
                 f"{r.window_steps}" + (f"; held back (being written): {', '.join(map(str, r.held_back))}"
                                        if r.held_back else ""))
    for a in t.alarms:
        now = "" if a.holds_now else " (not in the newest window)"
        where = ", ".join(f"{r.get('file', '')}:{r.get('line', r.get('row'))}" for r in a.rows[:3])
        lines.append(f"alarm {a.name} at step {a.first_step}{now}: {a.evidence}" + (f" [rows: {where}]" if where
                                                                                      else ""))
    for tr in r.trends:
        if tr.ci95:
            lines.append(f"trend {tr.what}: {tr.per_100_steps:+.4g} per 100 steps [{tr.ci95[0]:+.4g}, "
                         f"{tr.ci95[1]:+.4g}]")
    for c in r.cannot_judge:
        lines.append(f"cannot judge: {c}")
    for e in r.evals:
        diff = (f", {e.diff_from_first:+.3f} from the first [{e.diff_ci95[0]:+.3f}, {e.diff_ci95[1]:+.3f}]"
                if e.diff_ci95 else "")
        lines.append(f"held-out step {e.step}: pass@1 {_num(e.pass_at_1)} over {e.tasks} tasks{diff}")
    if t.windows:
        if r.windows_omitted:
            lines.append(f"windows ({r.windows_omitted} earlier not shown):")
        lines.append(HEADER)
        lines += [window_line(w) for w in t.windows]
    return "\n".join(lines)
