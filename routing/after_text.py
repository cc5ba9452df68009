"""The words of `after`: the summary (which never contradicts the evidence), the rule that decided, and the next step
a user can run for each verdict."""

from __future__ import annotations

from typing import Any

from . import defaults as D
from .after_verdicts import After, ControlComparison, Difference
from .questions import rows_arguments
from .rows import GradedRows
from .verdicts import NextStep

WORDS = {"random_selection": "random-selection", "random_reward": "random-reward"}


def ci(d: Difference) -> str:
    interval = f" [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else " (no interval: under 3 tasks)"
    return f"{d.of} {d.mean_diff:+.3f}{interval}"


def finish(verdict: str, rows: dict[str, GradedRows], **fields: Any) -> After:
    """The verdict model with its summary, the rule that decided and the next step."""
    out = After(verdict=verdict, summary="", decided_by="", next_step=NextStep(why=""), **fields)
    rule = decided_by(out)
    return out.model_copy(update={"decided_by": rule, "summary": summary(out, rule),
                                  "next_step": next_step(out, rows)})


def _controls(v: After) -> list[tuple[str, ControlComparison]]:
    return [(name, c) for name, c in (("random_selection", v.random_selection), ("random_reward", v.random_reward))
            if c is not None]


def decided_by(v: After) -> str:
    """The condition that gave the verdict, with its numbers."""
    p = v.paired
    if v.verdict == "not_comparable":
        return "; ".join(v.not_comparable)
    assert p is not None
    if v.verdict == "worse":
        bad = [g for g in v.guards if g.regressed]
        if p.ci95 and p.ci95[1] < 0:
            return f"{ci(p)} lies below 0"
        tested = lambda g: g.model_copy(update={"ci95": g.tested_ci})  # noqa: E731  (the interval Holm tested)
        return "; ".join(f"guard {g.name}: {ci(tested(g))} lies below 0 at level {g.tested_at:.4g} (Holm across "
                         f"{len(v.guards)} guards)" for g in bad)
    if v.verdict == "contamination":
        rr = v.random_reward
        assert rr is not None
        if rr.gain.ci95 and rr.gain.ci95[0] > 0:
            return f"the random-reward arm gains by itself: {ci(rr.gain)} lies above 0"
        return (f"the real arm gains ({ci(p)}) but the random-reward arm gained at least as much "
                f"({rr.gain.mean_diff:+.3f})")
    if v.verdict == "selection_problem":
        rs = v.random_selection
        assert rs is not None
        how = "gained significantly" if rs.gain.ci95 and rs.gain.ci95[0] > 0 else "gained at least as much"
        return (f"the real arm gains ({ci(p)}) but not over its random selection ({ci(rs)}), which {how} "
                f"({ci(rs.gain)})")
    if v.verdict == "proven":
        beyond = "".join(f", and {ci(c)} lies above 0" for _, c in _controls(v))
        return f"{ci(p)} lies above 0{beyond}"
    if v.verdict == "no_gain":
        return f"{ci(p)} lies below the registered effect {v.effect:g}"
    if p.ci95 is None:
        return f"{ci(p)}: too few tasks for an interval"
    if p.ci95[0] > 0:
        open_ = [f"{ci(c)} reaches 0 and the {WORDS[n]} arm's own gain is noise ({ci(c.gain)})" for n, c in _controls(v)
                 if not (c.ci95 and c.ci95[0] > 0)]
        return f"{ci(p)} lies above 0, but " + "; ".join(open_)
    return f"{ci(p)} holds both 0 and the registered effect {v.effect:g}"


def summary(v: After, rule: str) -> str:
    s = v.sizing
    if v.verdict == "not_comparable":
        return f"Not comparable: {rule}."
    if v.verdict == "worse":
        return f"Worse: {rule}. Roll back; read the tasks that flipped pass -> fail and the cut-off change (evidence)."
    if v.verdict == "contamination":
        return (f"Contamination: {rule}. A reward that carries no information should teach nothing; a gain under it "
                f"means the eval measures what the base already knows (Shao et al. 2025, arXiv:2506.10947). Judge on "
                f"a clean set.")
    if v.verdict == "selection_problem":
        return (f"Selection problem: {rule}. Training on a random selection of the same size did as well: the "
                f"selection (or the reward) was the problem, not the optimizer.")
    if v.verdict == "proven":
        small = (f" The gain is smaller than the registered {v.effect:g}." if v.paired and v.paired.mean_diff < v.effect
                 else "")
        hack = (" More replies hit the token cap after training: check for length hacking." if v.cut_offs and
                v.cut_offs.length_hacking else "")
        controls = "" if _controls(v) else " No control arm was given, so the gain is not yet attributed to the method."
        return f"Proven on {v.n_tasks} held-out tasks: {rule}.{small}{hack}{controls}"
    if v.verdict == "no_gain":
        return (f"No gain of the registered size: {rule}, so any real gain is smaller (these tasks detect "
                f"{s.detectable_effect:.3f} at power 0.8)." if s else f"No gain: {rule}.")
    assert s is not None
    more = (f"; or k={s.k_needed} rollouts a task on these {v.n_tasks}" if s.k_needed and s.k_needed > s.k else "")
    if s.basis == "observed":
        return (f"Underpowered: {rule}. The observed gain sits between 0 and the registered {v.effect:g}: about "
                f"{s.n_tasks} held-out tasks at k={s.k} would tell it apart ({s.of}), if it holds.")
    return (f"Underpowered: {rule}. These {v.n_tasks} tasks at k={s.k} detect a gain of {s.detectable_effect:.3f}; "
            f"{s.n_tasks} held-out tasks at k={s.k} would detect {v.effect:g} ({s.of}){more}.")


def _again(v: After, arms: dict[str, GradedRows]) -> tuple[dict[str, Any], list[str]]:
    """`after`'s arguments that ask again on the same files (one `fields` serves every arm)."""
    args: dict[str, Any] = {}
    needs: list[str] = []
    mappings = []
    for name, rows in arms.items():
        back, _ = rows_arguments(rows)
        if "rows_path" in back:
            args[f"{name}_rows_path"] = back["rows_path"]
        else:
            needs.append(f"{name}_rows")
        mappings.append(back.get("fields"))
    if any(mappings) and all(m == mappings[0] for m in mappings):
        args["fields"] = mappings[0]
    if v.frozen is not None and v.frozen.path:
        args["frozen_path"] = v.frozen.path
    elif v.effect != D.PROVE_EFFECT:
        args["effect"] = v.effect
    return args, needs


def next_step(v: After, arms: dict[str, GradedRows]) -> NextStep:
    args, needs = _again(v, arms)
    s = v.sizing
    if v.verdict == "not_comparable":
        return NextStep(tool="after", arguments=args, needs=needs + ["every arm scored on the same (frozen) tasks at "
                                                                     "the same max_tokens"],
                        why="Re-score the arms on one task set at one token cap, then ask again.")
    if v.verdict == "worse":
        lost = v.flips.pass_to_fail_tasks if v.flips else []
        return NextStep(tool=None, arguments={"pass_to_fail": lost},
                        why="Roll back to the base checkpoint; read the tasks that flipped to fail and the cut-off "
                            "change before changing the reward or the method.")
    if v.verdict == "contamination":
        return NextStep(tool="after", arguments={k: a for k, a in args.items() if k != "frozen_path"},
                        needs=needs + ["before/after rows on a clean held-out set (tasks the base cannot have seen: "
                                       "written after its cut-off, or decontaminated)"],
                        why="A random reward gained on this set, so its gains show what the base already knew "
                            "(Wu et al. 2025, arXiv:2507.10532); only a clean set can show what training taught.")
    route = NextStep(tool="route", arguments={k: a for k, a in args.items() if k == "fields"},
                     needs=["rows (the base's training-set rows)", "model"], why="")
    if v.verdict == "selection_problem":
        return route.model_copy(update={"why": "The selected data did no better than a random selection of the same "
                                               "size: train on all tasks (or fix the reward that picked them), and "
                                               "route again on the base's rows."})
    if v.verdict == "proven":
        return NextStep(tool="after", arguments=args,
                        needs=needs + ["guards (before/after rows of behaviours that must not regress)",
                                       "after rows of a second training seed"],
                        why="Check the guards (a general or safety suite) and a second seed before shipping: one "
                            "seed's gain can flip sign at another.")
    if v.verdict == "no_gain":
        return route.model_copy(update={"why": "The run did not deliver the registered gain: route again (the "
                                               "runner-up method, more signal per step) or fix the reward before "
                                               "another run."})
    assert s is not None
    if s.basis == "observed":
        return NextStep(tool="after", arguments=args, needs=needs + [f"every arm scored on about {s.n_tasks} held-out "
                                                                     f"tasks at k={s.k}"],
                        why=(f"The gain sits between 0 and the registered {v.effect:g}; about {s.n_tasks} tasks would "
                             f"tell which, if it holds. Score every arm on them and ask again."))
    k_text = f", or k={s.k_needed} on these tasks" if s.k_needed and s.k_needed > s.k else ""
    return NextStep(tool="after", arguments=args, needs=needs + [f"every arm scored on {s.n_tasks} held-out tasks at "
                                                                 f"k={s.k}{k_text}"],
                    why=(f"{s.n_tasks} tasks at k={s.k} detect {v.effect:g} from the measured spread (holdout_size's "
                         f"formula){k_text}; score every arm on them and ask again."))
