"""The words of `after`: the summary (which never contradicts the evidence), the rule that decided, and the next step
a user can run for each verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import defaults as D
from .verdicts import After, ControlComparison, Difference, Sizing
from ..shared import rows_arguments
from ..rows import GradedRows
from ..verdicts import NextStep
from pick_a_method.common.next_step import Tool, placeholder

WORDS = {"random_selection": "random-selection", "random_reward": "random-reward"}
GUARD = "<name>=<before_rows>,<after_rows>"  # a guard to fill in: a suite's name and its two rows files


def ci(d: Difference) -> str:
    interval = f" [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else " (no interval: under 3 tasks)"
    return f"{d.of} {d.mean_diff:+.3f}{interval}"


def finish(verdict: str, rows: dict[str, GradedRows], mapping: Mapping[str, str] | None = None, **fields: Any
           ) -> After:
    """The verdict model with its summary, the rule that decided and the next step (`mapping`: the caller's
    `fields`, which the next call passes again)."""
    out = After(verdict=verdict, summary="", decided_by="", next_step=NextStep(why=""), **fields)
    rule = decided_by(out)
    return out.model_copy(update={"decided_by": rule, "summary": summary(out, rule),
                                  "next_step": next_step(out, rows, mapping)})


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


def detects(v: After, s: Sizing) -> str:
    """What the tasks in hand detect, in words ("These 24 tasks at k=4 detect a gain of 0.123"): past 1, the whole
    scale, no gain can be shown."""
    subject, verb = ("This task", "detects") if v.n_tasks == 1 else (f"These {v.n_tasks} tasks", "detect")
    gain = ("no gain (a pass rate can rise by 1 at most)" if s.detectable_effect >= 1 else
            f"a gain of {s.detectable_effect:.3f}")
    return f"{subject} at k={s.k} {verb} {gain}"


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
        guards = (f" No guard regressed ({', '.join(g.name for g in v.guards)}; Holm across {len(v.guards)})."
                  if v.guards else "")
        return f"Proven on {v.n_tasks} held-out tasks: {rule}.{small}{hack}{controls}{guards}"
    if v.verdict == "no_gain":
        if s is None:
            return f"No gain: {rule}."
        said = detects(v, s)
        return (f"No gain of the registered size: {rule}, so any real gain is smaller ({said[0].lower()}{said[1:]} at "
                f"power 0.8).")
    assert s is not None
    more = (f"; or k={s.k_needed} rollouts a task on these {v.n_tasks}" if s.k_needed and s.k_needed > s.k else "")
    if s.basis == "observed":
        return (f"Underpowered: {rule}. The observed gain sits between 0 and the registered {v.effect:g}: about "
                f"{s.n_tasks} held-out tasks at k={s.k} would tell it apart ({s.of}), if it holds.")
    return (f"Underpowered: {rule}. {detects(v, s)}; {s.n_tasks} held-out tasks at k={s.k} would detect "
            f"{v.effect:g} ({s.of}){more}.")


def _again(v: After, arms: dict[str, GradedRows], mapping: Mapping[str, str] | None, keep: tuple[str, ...] = (),
           frozen: bool = True) -> tuple[dict[str, Any], list[str]]:
    """`after`'s arguments for the next call: the arms in `keep` read again from the same files, every other arm given
    a placeholder to fill (new rows: a re-scored arm, another checkpoint), the caller's `fields` (not the mapping a
    reader found for its own format: it finds it again), the manifest unless the next call needs another task set
    (`frozen=False`)."""
    args: dict[str, Any] = {"fields": dict(mapping)} if mapping else {}
    needs: list[str] = []
    for name, rows in arms.items():
        back, _ = rows_arguments(rows)
        argument = f"{name}_rows_path"
        if name in keep and "rows_path" in back:
            args[argument] = back["rows_path"]
        elif name in keep:
            needs.append(f"{name}_rows")  # given inline: pass them again
        else:
            args[argument] = placeholder(argument)
            needs.append(argument)
    if frozen and v.frozen is not None and v.frozen.path:
        args["frozen_path"] = v.frozen.path
    elif v.effect != D.PROVE_EFFECT:
        args["effect"] = v.effect
    return args, needs


CONTROLS = ("random_selection", "random_reward")


def _new_after(needs: list[str], what: str) -> list[str]:
    """`needs` with the after arm's placeholder saying what its new rows must be (an arm given inline, to pass
    again, says nothing more)."""
    return [f"{n} ({what})" if n == "after_rows_path" else n for n in needs]


def next_step(v: After, arms: dict[str, GradedRows], mapping: Mapping[str, str] | None = None) -> NextStep:
    """The call (or the instruction) each verdict leads to, every rows argument either the same file or a placeholder
    named in `needs` with what it must hold."""
    s, p = v.sizing, v.paired
    if v.verdict == "not_comparable":
        args, needs = _again(v, arms, mapping)
        where = f"the {v.frozen.n_tasks} frozen tasks" if v.frozen is not None else "one set of held-out tasks"
        return NextStep(tool=Tool.AFTER, arguments=args, needs=needs,
                        why=f"Score every arm on {where} at one token cap (max_tokens), then ask again: "
                            f"{v.not_comparable[0]}.")
    assert p is not None
    if v.verdict == "worse":
        lost = v.flips.pass_to_fail_tasks if v.flips else []
        cut = v.cut_offs
        said = cut is not None and cut.before_share is not None and cut.after_share is not None
        cuts = ("" if not said else f"; the share cut off at the token cap is unchanged ({cut.after_share:.1%})"
                if round(cut.before_share, 3) == round(cut.after_share, 3) else
                f"; replies cut off at the token cap went from {cut.before_share:.1%} to {cut.after_share:.1%}")
        guards = [g.name for g in v.guards if g.regressed]
        what = "; ".join(([f"{ci(p)} lies below 0"] if p.ci95 and p.ci95[1] < 0 else [])
                         + [f"guard {g} regressed" for g in guards])
        main_worse = bool(p.ci95 and p.ci95[1] < 0)
        flipped = ""
        if main_worse:
            flipped = (f" {v.flips.pass_to_fail} tasks flipped pass -> fail (e.g. {', '.join(lost[:5])})" if lost
                       else " No task flipped pass -> fail: the loss is spread thin")
        for g in (g for g in v.guards if g.regressed):  # each guard's own flipped tasks, not the main suite's
            flipped += (f"{';' if flipped else ''} guard {g.name}: {g.pass_to_fail} of its tasks flipped pass -> "
                        f"fail (e.g. {', '.join(g.pass_to_fail_tasks[:5])})" if g.pass_to_fail_tasks else
                        f"{';' if flipped else ''} guard {g.name}: none of its tasks flipped pass -> fail, the loss is "
                        f"spread thin")
        flipped = flipped if flipped.startswith(" ") else " " + flipped
        lost = lost if main_worse else [t for g in v.guards if g.regressed for t in g.pass_to_fail_tasks]
        return NextStep(tool=None, arguments={"pass_to_fail": lost},
                        why=f"Roll back to the base checkpoint ({what}).{flipped}{cuts}: read those replies before "
                            f"changing the reward or the method.")
    if v.verdict == "contamination":
        args, needs = _again(v, arms, mapping, frozen=False)
        return NextStep(tool=Tool.AFTER, arguments=args, needs=[f"{n} (on a clean held-out set)" for n in needs],
                        why="A reward that carries no information gained on this set, so the set measures what the "
                            "base already knew (Wu et al. 2025, arXiv:2507.10532): score every arm again on a clean "
                            "held-out set (tasks written after the base's data cut-off, or decontaminated) and ask "
                            "again.")
    if v.verdict == "selection_problem":
        args, needs = _again(v, arms, mapping, keep=("before", *CONTROLS))
        return NextStep(tool=Tool.AFTER, arguments=args,
                        needs=_new_after(needs, "a checkpoint trained on all the training tasks, or with the "
                                                "reward fixed"),
                        why=f"The selected data did no better than a random selection of the same size "
                            f"({ci(v.random_selection)}): train on all the training tasks (or fix the reward that "
                            f"scored the selection), score that checkpoint on the same held-out tasks and ask again "
                            f"against the same base and random selection.")
    if v.verdict == "proven" and v.guards:  # the guards held: a second seed is what is left to check
        args, needs = _again(v, arms, mapping, keep=("before", *CONTROLS))
        return NextStep(tool=Tool.AFTER, arguments=args,
                        needs=_new_after(needs, "a second training seed's checkpoint on the same held-out tasks"),
                        why=f"No guard regressed ({', '.join(g.name for g in v.guards)}): ask again with a second "
                            f"training seed's checkpoint as after_rows_path: one seed's gain can flip sign at another.")
    if v.verdict == "proven":
        args, needs = _again(v, arms, mapping, keep=("before", "after", *CONTROLS))
        args["guards"] = [GUARD]
        return NextStep(tool=Tool.AFTER, arguments=args,
                        needs=needs + ["guards (a general or safety suite scored before and after training: "
                                       "name=before_rows,after_rows)"],
                        why="Check that nothing else regressed (the guards, a general or safety suite), then ask "
                            "again with a second training seed's checkpoint as after_rows_path: one seed's gain can "
                            "flip sign at another.")
    if v.verdict == "no_gain":
        model = next((a.model for a in v.arms if a.name == "before" and a.model), None)
        args = {"rows_path": placeholder("rows_path"), **({"model": model} if model else {})}
        return NextStep(tool=Tool.ROUTE, arguments=args,
                        needs=["rows_path (the base model's graded rows on the training tasks)"] + (
                            [] if model else ["model"]),
                        why=f"The run did not deliver the registered gain ({ci(p)} lies below {v.effect:g}): route "
                            f"again on the base's training rows (the runner-up method, more signal per step) or fix "
                            f"the reward before another run.")
    assert s is not None
    more_k = s.k_needed is not None and s.k_needed > s.k
    if more_k:  # the cheaper fix: more rollouts on the tasks in hand
        args, needs = _again(v, arms, mapping)
        return NextStep(tool=Tool.AFTER, arguments=args, needs=[f"{n} (re-scored at k={s.k_needed})" for n in needs],
                        why=f"{detects(v, s)}: score every arm again on them at k={s.k_needed} rollouts a task (or "
                            f"on {s.n_tasks} held-out tasks at k={s.k}) and ask again.")
    args, needs = _again(v, arms, mapping, frozen=False)
    if s.basis == "observed":
        why = (f"The gain sits between 0 and the registered {v.effect:g}: about {s.n_tasks} held-out tasks at k={s.k} "
               f"would tell which, if it holds; score every arm on that many (none of them trained on) and ask "
               f"again.")
    else:
        spread = ("the measured spread" if s.sd_source == "rows" else
                  "the binomial model at the base's pass rate (no spread was measured)")
        why = (f"{detects(v, s)}; {s.n_tasks} held-out tasks at k={s.k} detect {v.effect:g} from {spread} "
               f"(holdout_size's formula): score every arm on that many (none of them trained on) and ask again.")
    return NextStep(tool=Tool.AFTER, arguments=args,
                    needs=[f"{n} (scored on {s.n_tasks} held-out tasks at k={s.k})" for n in needs], why=why)
