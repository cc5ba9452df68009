"""After the GPU: did the trained checkpoint improve on the frozen held-out tasks, beyond noise and beyond its
random-selection and random-reward controls? `after` reads each arm once, checks the arms are comparable, pairs
them on the tasks all of them scored (the frozen ones where a manifest is given), and applies rules.py's verdict.
The words (summary, next step) are text.py's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import defaults as D
from pick_a_method.common.errors import InputError
from .checks import identical, rollouts_differ, swapped, two_evaluations
from .rules import Control, decide, explains
from .stats import (ArmNumbers, Diff, arm_numbers, compare, flips, graded_tasks, holm_regressed, paired_diff,
                          size)
from .text import finish
from .verdicts import (After, Arm, ControlComparison, CutOffs, Difference, Flips, FrozenCheck, Guard,
                             Sizing)
from ..shared import median_budget, dominant_model
from .frozen import Frozen, read_frozen
from ..paired import BY_ID, BY_PROMPT, Paired, pair_arms, to_names
from ..shared import check_threshold, grading_warnings
from ..readers import read_rows
from ..rows import GradedRows, RowsLike, display_name
from ..table import table_of

Rows = RowsLike | str | os.PathLike[str] | Sequence[str]


def after(before: Rows, after: Rows, *, random_selection: Rows | None = None, random_reward: Rows | None = None,
          effect: float | None = None, frozen: Frozen | Mapping[str, Any] | str | os.PathLike[str] | None = None,
          guards: Mapping[str, tuple[Rows, Rows]] | None = None, pass_threshold: float = D.PASS_THRESHOLD,
          fields: Mapping[str, str] | None = None, roots: Sequence[Path] | None = None) -> After:
    """Judge a trained checkpoint: `before` (the base) and `after` (the checkpoint) scored on the same held-out
    tasks, and where trained, the random-selection and random-reward control arms. Each takes what read_rows
    takes (a file, a run folder, a glob, a list of them, or row dicts); `fields` maps names for all of them.

    `effect` is the registered gain (the frozen manifest's when one is given; else D.PROVE_EFFECT). `frozen` is the
    manifest `freeze` wrote: every arm must cover its tasks, and only those are compared. `guards` maps a name to
    a (before, after) pair of another behaviour that must not regress (Holm across them); the main pair is the
    declared primary. `roots` confines every path read (None: the library reads anywhere).

    `.verdict` is one of not_comparable, worse, contamination, selection_problem, proven, no_gain, underpowered
    (after_training/rules.py has the rule); `.paired` is after - before with its 95% paired interval."""
    pass_threshold = check_threshold(pass_threshold)
    given = {"before": before, "after": after, "random_selection": random_selection, "random_reward": random_reward}
    for name in ("before", "after"):
        if given[name] is None:
            raise InputError(f"no {name} rows: pass the {name} arm's eval rows on the held-out tasks", field=name)
    read = lambda value, what: read_rows(value, fields=fields, argument=what, roots=roots)  # noqa: E731
    arms = {name: read(value, name) for name, value in given.items() if value is not None}
    pairs = _guard_pairs(guards, read)
    manifest, warnings = (read_frozen(frozen, roots) if frozen is not None else (None, []))
    effect = _effect(effect, manifest)
    warnings += _arm_warnings(arms, pass_threshold)
    warnings = list(dict.fromkeys(warnings))
    mistakes = identical(arms) + two_evaluations(arms)
    wrong_way, said = swapped(arms, manifest.model if manifest else None)
    mistakes, warnings = mistakes + wrong_way, warnings + said
    arms, tasks, reasons, check, pairing = _tasks(arms, manifest, pass_threshold)
    reasons = mistakes + reasons
    if pairing.note:
        warnings.insert(0, pairing.note)
    reasons += _budgets({**arms, **({"frozen manifest": manifest.max_tokens} if manifest else {})})
    for name, (b, a) in pairs.items():
        why = identical({"before": b, "after": a}) + two_evaluations({"before": b, "after": a})
        pair, _, why_not, _, _ = _tasks({"before": b, "after": a}, None, pass_threshold)
        pairs[name] = (pair["before"], pair["after"])
        reasons += [f"guard {name}: {r}" for r in why + why_not + _budgets({"before": b, "after": a})]
    if reasons:
        evidence = [_arm(name, rows, graded_tasks(rows, pass_threshold), pass_threshold) for name, rows in arms.items()]
        out = finish("not_comparable", arms, fields, effect=effect, arms=evidence, frozen=check,
                     not_comparable=reasons, warnings=warnings, n_tasks=len(tasks))
        out._paired_by = pairing.key
        return out
    index = {name: i for i, name in enumerate(tasks)}
    nums = {name: arm_numbers(rows, tasks, pass_threshold, index) for name, rows in arms.items()}
    warnings += rollouts_differ({n: v.k for n, v in nums.items()},
                                {n: float(v.worth.mean()) if v.n else 0.0 for n, v in nums.items()})
    short = [name for name in arms if manifest is not None and nums[name].k < manifest.k]
    if short:
        warnings.append(f"the manifest was sized at k={manifest.k}; {', '.join(short)} scored some task fewer times, "
                        f"so the comparison has less power than registered")
    gain = compare(nums["after"], nums["before"])
    controls = {name: Control(gain=compare(nums[name], nums["before"]), beaten=compare(nums["after"], nums[name]))
                for name in ("random_selection", "random_reward") if name in nums}
    guard_out, regressed = _guards(pairs, pass_threshold)
    verdict = str(decide(gain, effect, random_reward=controls.get("random_reward"),
                         random_selection=controls.get("random_selection"),
                         guard_regressed=np.array([any(regressed)]))[0])
    paired = _difference("after - before", gain, len(tasks))
    control_out = {name: _control(name, c, gain, len(tasks)) for name, c in controls.items()}
    sized = _sizing(nums, controls, gain, effect, verdict)
    cuts = _cut_offs(nums["before"], nums["after"], gain)
    if cuts.length_hacking:
        warnings.append(f"possible length hacking: the gain came with more replies cut off at the token cap "
                        f"({cuts.before_share:.1%} -> {cuts.after_share:.1%}); check the replies before trusting it")
    b_model, a_model = dominant_model(arms["before"]), dominant_model(arms["after"])
    if b_model is not None and b_model == a_model:
        warnings.append(f"before and after both name {b_model}: check that after is the trained checkpoint's rows")
    out = finish(verdict, arms, fields, effect=effect, paired=paired, guards=guard_out, frozen=check, sizing=sized,
                 arms=[_arm(name, rows, tasks, pass_threshold, nums[name]) for name, rows in arms.items()],
                 flips=_flips(nums["before"], nums["after"], tasks), cut_offs=cuts, warnings=warnings,
                 n_tasks=len(tasks), **control_out)
    out._tasks = tasks  # the picture reads the same tasks
    out._paired_by = pairing.key
    return out


def _effect(effect: float | None, manifest: Frozen | None) -> float:
    if manifest is not None and effect is not None and abs(effect - manifest.effect) > 1e-12:
        raise InputError(f"effect {effect:g} differs from the frozen manifest's registered effect {manifest.effect:g}; "
                         f"leave effect out (the manifest's is used), or freeze again before training", field="effect")
    effect = manifest.effect if manifest is not None else (D.PROVE_EFFECT if effect is None else effect)
    if not 0 < effect < 1:
        raise InputError(f"effect is {effect}; give a gain in (0, 1), e.g. {D.PROVE_EFFECT}", field="effect")
    return float(effect)


def _arm_warnings(arms: dict[str, GradedRows], pass_threshold: float) -> list[str]:
    """How each arm was graded (questions.grading_warnings), an arm of several samplers, cut-off replies that pass."""
    out = []
    for name, rows in arms.items():
        t = table_of(rows, pass_threshold)
        out += [f"{name}: {w}" for w in grading_warnings(rows, t, pass_threshold)]
        samplers = t.graded().samplers() if t.several else []
        if samplers:
            shown = ", ".join(str(e["model"]) + (f" (arm {e['arm']})" if "arm" in e else "") for e in samplers[:3])
            more = " ..." if len(samplers) > 3 else ""
            out.append(f"{name}: rows from {len(samplers)} samplers or arms ({shown}{more}); each task's rate is the "
                       f"mean of theirs: pass one checkpoint's rows per arm")
        if int(t.truncated_passes.sum()):
            out.append(f"{name}: {int(t.truncated_passes.sum())} replies cut off at the token cap still passed: the "
                       f"grader credits unfinished replies (route's question 1); fix it before trusting rates")
    return out


def _guard_pairs(guards: Mapping[str, tuple[Rows, Rows]] | None, read: Any) -> dict[str, tuple[GradedRows, GradedRows]]:
    if guards is None:
        return {}
    if not isinstance(guards, Mapping):
        raise InputError("guards must map a name to a (before, after) pair of rows", field="guards")
    out = {}
    for name, pair in guards.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(f"guard {name!r} must be a (before, after) pair of rows", field="guards")
        out[str(name)] = (read(pair[0], f"guards.{name}.before"), read(pair[1], f"guards.{name}.after"))
    return out


def _tasks(arms: dict[str, GradedRows], manifest: Frozen | None, pass_threshold: float
           ) -> tuple[dict[str, GradedRows], list[str], list[str], FrozenCheck | None, Paired]:
    """The arms as compared (each arm's tasks named as before, or the manifest, names them: paired.py pairs by id,
    else by prompt), the compared tasks (all arms' shared ones in before's order, or the frozen ones), why not if
    not, the frozen check, and how they paired."""
    graded = {name: graded_tasks(rows, pass_threshold) for name, rows in arms.items()}
    reasons = [f"{name} has no graded rows" for name, tasks in graded.items() if not tasks]
    if manifest is not None:
        return _frozen_tasks(arms, graded, manifest, reasons, pass_threshold)
    pairing = pair_arms(arms, graded)
    return pairing.arms, pairing.tasks, reasons + pairing.problems, None, pairing


def _frozen_tasks(arms: dict[str, GradedRows], graded: dict[str, list[str]], manifest: Frozen, reasons: list[str],
                  pass_threshold: float) -> tuple[dict[str, GradedRows], list[str], list[str], FrozenCheck, Paired]:
    """Every arm on the frozen tasks: an arm that lacks their ids but was asked the same prompts (another tool's
    run of them) is renamed to the manifest's ids."""
    out, missing, by_prompt = {}, {}, []
    frozen_set = set(manifest.tasks)
    for name, rows in arms.items():
        have = set(graded[name])
        if manifest.prompts and any(t not in have for t in manifest.tasks):
            moved = to_names(rows, graded[name], manifest.tasks, manifest.prompts)
            if moved is not None:
                rows, by_prompt = moved, by_prompt + [name]
                graded[name] = graded_tasks(rows, pass_threshold)
                have = set(graded[name])
        out[name] = rows
        lack = [t for t in manifest.tasks if t not in have]
        if lack:
            missing[name] = [display_name(t) for t in lack[: D.LIST_LIMIT]]
            own = f"; {name} names its tasks like `{display_name(graded[name][0])}`" if graded[name] else ""
            reasons.append(f"{name} did not score {len(lack)} of the {manifest.n_tasks} frozen tasks (e.g. "
                           f"{', '.join(missing[name][:3])}{own}): score every arm on the frozen set")
    union = set().union(*map(set, graded.values()))
    check = FrozenCheck(path=manifest.path, n_tasks=manifest.n_tasks, effect=manifest.effect, k=manifest.k,
                        missing=missing, dropped=len(union - frozen_set))
    note = (f"paired with the frozen manifest by prompt ({', '.join(by_prompt)}: the task ids differ from the "
            f"manifest's, the prompts are the same)" if by_prompt else None)
    pairing = Paired(out, list(manifest.tasks), BY_PROMPT if by_prompt else BY_ID, len(union), note=note)
    return out, list(manifest.tasks), reasons, check, pairing


def _budgets(sources: Mapping[str, GradedRows | float | None]) -> list[str]:
    """A different token cap where the rows say one: the comparison would measure the cap, not the checkpoint."""
    caps = {}
    for name, source in sources.items():
        cap = source if not isinstance(source, GradedRows) else median_budget(source)
        if cap is not None:
            caps[name] = cap
    if len(set(caps.values())) < 2:
        return []
    return ["different token caps (" + ", ".join(f"{n} max_tokens {c:g}" for n, c in caps.items()) + "): score every "
            "arm at the same max_tokens"]


def _guards(pairs: dict[str, tuple[GradedRows, GradedRows]], pass_threshold: float) -> tuple[list[Guard], list[bool]]:
    if not pairs:
        return [], []
    nums, lost = [], []
    for b, a in pairs.values():
        _, tasks, _, _, _ = _tasks({"before": b, "after": a}, None, pass_threshold)
        nb, na = arm_numbers(b, tasks, pass_threshold), arm_numbers(a, tasks, pass_threshold)
        nums.append((na, nb))
        lost.append(_flips(nb, na, tasks))  # the guard's own flips, never the main suite's
    h = holm_regressed(nums)
    out = []
    for g, (name, (na, nb)) in enumerate(zip(pairs, nums)):
        d = _difference("after - before", compare(na, nb), na.n)
        tested = (float(h.lo[g, 0]), float(h.hi[g, 0])) if not np.isnan(h.lo[g, 0]) else None
        out.append(Guard(name=name, regressed=bool(h.regressed[g, 0]), tested_at=round(float(h.level[g, 0]), 6),
                         tested_ci=tested, pass_to_fail=lost[g].pass_to_fail,
                         pass_to_fail_tasks=lost[g].pass_to_fail_tasks, **d.model_dump()))
    regressed = h.regressed[:, 0].tolist()
    return out, regressed


def _difference(of: str, diff: Diff, n: int) -> Difference:
    mean, ci = diff.one()
    return Difference(of=of, n_shared=n, mean_diff=mean, ci95=ci)


def _control(name: str, control: Control, gain: Diff, n: int) -> ControlComparison:
    beaten = _difference(f"after - {name}", control.beaten, n)
    return ControlComparison(**beaten.model_dump(), gain=_difference(f"{name} - before", control.gain, n),
                             explains_gain=bool(explains(control, gain)[0]))


def _sizing(nums: dict[str, ArmNumbers], controls: dict[str, Control], gain: Diff, effect: float,
            verdict: str) -> Sizing:
    """Size the primary; where it gains but a control comparison is open, size those instead, and keep the widest."""
    base = float(nums["before"].rates.mean()) if nums["before"].n else D.HOLDOUT_BASE
    todo = [("after - before", nums["after"], nums["before"], gain, False)]
    if verdict == "underpowered" and gain.lo[0] > 0:
        todo = [(f"after - {n}", nums["after"], nums[n], c.beaten, True) for n, c in controls.items()
                if not c.beaten.lo[0] > 0]
    best = None
    for of, upper, lower, diff, above_only in todo:
        s = size(upper, lower, effect, base, diff, above_only=above_only)
        if best is None or s.n_tasks > best[1].n_tasks:
            best = (of, s, min(upper.k, lower.k))
    of, s, k = best  # type: ignore[misc]
    return Sizing(of=of, task_std=round(s.task_std, 4), sd_source=s.sd_source, detectable_effect=round(s.detectable, 4),
                  n_tasks=s.n_tasks, basis=s.basis, k=k, k_needed=s.k_needed, k_why=s.k_why)


def _cut_offs(before: ArmNumbers, after: ArmNumbers, gain: Diff) -> CutOffs:
    said = ~np.isnan(before.cut) & ~np.isnan(after.cut)
    mean_tokens = lambda a: float(np.nanmean(a.tokens)) if (~np.isnan(a.tokens)).any() else None  # noqa: E731
    if not said.any():
        return CutOffs(before_share=None, after_share=None, change=None, length_hacking=None,
                       mean_tokens_before=mean_tokens(before), mean_tokens_after=mean_tokens(after))
    b, a = before.cut[said], after.cut[said]
    diff = paired_diff(a, b, worth_upper=float(said.sum() * after.k), worth_lower=float(said.sum() * before.k))
    change = _difference("after - before (cut-off share)", diff, int(said.sum()))
    hacking = bool(gain.mean[0] > 0 and change.ci95 is not None and change.ci95[0] > 0)
    return CutOffs(before_share=float(b.mean()), after_share=float(a.mean()), change=change, length_hacking=hacking,
                   mean_tokens_before=mean_tokens(before), mean_tokens_after=mean_tokens(after))


def _flips(before: ArmNumbers, after: ArmNumbers, tasks: list[str]) -> Flips:
    f = flips(before.rates, after.rates)
    name = lambda idx: [display_name(tasks[i]) for i in idx[: D.LIST_LIMIT].tolist()]  # noqa: E731
    return Flips(fail_to_pass=len(f.fail_to_pass), pass_to_fail=len(f.pass_to_fail), up=f.up, down=f.down,
                 same=f.same, fail_to_pass_tasks=name(f.fail_to_pass), pass_to_fail_tasks=name(f.pass_to_fail))


def _arm(name: str, rows: GradedRows, tasks: list[str], pass_threshold: float, nums: ArmNumbers | None = None) -> Arm:
    nums = nums if nums is not None else arm_numbers(rows, tasks, pass_threshold)
    p1, ci = nums.pass_at_1()
    model = dominant_model(rows)
    cut = float(np.nanmean(nums.cut)) if (~np.isnan(nums.cut)).any() else None
    tokens = float(np.nanmean(nums.tokens)) if (~np.isnan(nums.tokens)).any() else None
    return Arm(name=name, model=display_name(model) if model else None, n_tasks=nums.n, n_rows=nums.n_rows, k=nums.k,
               pass_at_1=p1, ci95=ci, cut_off_share=cut, mean_tokens=tokens, max_tokens=median_budget(rows))
