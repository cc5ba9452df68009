"""What route says beside its verdict: the other samplers in a file as teachers, and the checks to run before the
GPU (step 7), each from what the rows measured."""

from __future__ import annotations

import re
from typing import Any

from .. import defaults as D
from .compare import teacher_clears
from ..after_training import Frozen
from ..forecasting import holdout_size
from ..rows import GradedRows, display_name
from ..table import Table
from ..verdicts import TeacherClears

_QWEN_BASE = re.compile(r"qwen[-_]?(2\.5|3)", re.IGNORECASE)
FREEZE_EXAMPLE = "holdout.json"  # the file name the advice shows


def score_others(others: dict[str, GradedRows], student: GradedRows, effect: float, pass_threshold: float,
                 tokenizers_match: bool | None) -> dict[str, TeacherClears]:
    """Each other sampler in the file, scored as an OPD teacher against the trained model's rows."""
    return {name: teacher_clears(rows, student, effect, pass_threshold=pass_threshold,
                                 tokenizers_match=tokenizers_match) for name, rows in others.items()}


def candidate_evidence(scored: dict[str, TeacherClears]) -> list[dict[str, Any]]:
    return [{"model": display_name(name), "verdict": tc.verdict, "decided_by": tc.decided_by,
             "teacher_pass_at_1": tc.teacher_pass_at_1, "gap": tc.gap,
             "paired": tc.paired.model_dump() if tc.paired else None} for name, tc in scored.items()]


def others_line(scored: dict[str, TeacherClears], model: str | None) -> str:
    """One sentence naming the other samplers and what each is as a teacher."""
    parts = []
    for name, tc in scored.items():
        p1 = f"pass@1 {tc.teacher_pass_at_1:.3f}" if tc.teacher_pass_at_1 is not None else "no graded rows"
        paired = (f", paired gap {tc.paired.mean_diff:+.3f} on {tc.paired.n_shared} shared tasks"
                  if tc.paired is not None else ", no shared tasks")
        word = {"clears": "clears as an OPD teacher", "does_not_clear": "does not clear as a teacher",
                "tokenizer_mismatch": "scores higher but has another tokenizer"}.get(tc.verdict, "undecided as a teacher")
        parts.append(f"{display_name(name)} ({p1}{paired}: {word})")
    return f"The file also holds rows of {'; '.join(parts)}; routed on {model}'s own rows."


def _tasks(n: int) -> str:
    return f"{n} task" if n == 1 else f"{n} tasks"


def before_gpu(g: Table, model: str | None, effect: float, frozen: Frozen | None = None) -> list[str]:
    """Step 7: the held-out size measured from the rows (against the suite's own task count), drawn and written when
    route was asked to freeze (`frozen`), the random-selection control, the random-reward arm on Qwen bases, and the
    `after` call that judges the trained checkpoint on those tasks."""
    rates = g.rates if len(g) else None
    suite = g.n_tasks
    measured = float(rates.mean()) if rates is not None and len(rates) else None
    k = int(g.n.min()) if len(g) else D.HOLDOUT_K
    if measured is None or measured >= D.HOLDOUT_CEILING or measured <= 0.0:
        base = D.HOLDOUT_BASE
        where = ("no base was measured" if measured is None else
                 f"the measured base {measured:.2f} sits at the {'ceiling' if measured > 0 else 'floor'}, where no "
                 f"gain can be shown")
        base_text = f"an assumed base {base:.2f} ({where}: measure again on a set that is not saturated or floored)"
    else:
        base, base_text = measured, f"the measured base {measured:.2f}"
    h = holdout_size(effect, base=base, k=max(k, 1))
    held = frozen.n_tasks if frozen is not None else h.n_tasks
    if frozen is not None:
        first = (f"Froze {held} held-out tasks (seed {frozen.seed}) into {frozen.path} to show a {effect:g} gain at "
                 f"k={frozen.k} from {base_text} (holdout_size); train on none of them.")
    else:
        first = (f"Freeze {held} held-out tasks to show a {effect:g} gain at k={h.k} from {base_text} "
                 f"(holdout_size); train on none of them.")
    if frozen is not None and h.n_tasks > held and frozen.pool_tasks is not None:
        first += (f" holdout_size asks {h.n_tasks} for that gain, but a freeze holds out at most "
                  f"{D.FREEZE_MAX_SHARE:.0%} of the suite, so {frozen.pool_tasks} stay to train on: for the registered "
                  f"gain, freeze from a separate eval suite's rows instead (the warnings say what {held} detect).")
    elif suite and held > suite:
        bigger = _provable(base, k, suite)
        first += (f" The suite has {_tasks(suite)}, fewer than that: add tasks, sample more rollouts per task, or "
                  + (f"prove a larger gain (about {bigger:g} is provable on all {suite})." if bigger else
                     "prove a much larger gain."))
    elif suite and held > suite // 2:
        first += (f" The suite has {_tasks(suite)}: freezing {held} leaves {suite - held} to train on; "
                  f"add tasks if that is too few.")
    elif suite:
        first += f" The suite has {_tasks(suite)}, so {suite - held} remain to train on."
    if frozen is None and suite and held <= suite:
        first += f" Route with freeze='{FREEZE_EXAMPLE}' draws them (seeded) and writes their manifest."
    qwen = bool(model and _QWEN_BASE.search(model))
    checks = [first,
              "Train a random selection of the same size beside the real one: if the method does not beat its random "
              "control, the selection or the reward was the problem, not the optimizer."]
    if qwen:
        checks.append("On a Qwen 2.5/3 base add a random-reward arm: gains under random rewards signal contamination "
                      "(Lambert 2025, chapter Evaluation).")
    checks.append(after_line(frozen, effect, frozen.k if frozen is not None else h.k, qwen))
    return checks


def after_line(frozen: Frozen | None, effect: float, k: int, random_reward: bool) -> str:
    """The `after` call to make once trained, with the manifest when one was written (each rows argument a
    placeholder: the checkpoints do not exist yet)."""
    args = ["before_rows_path=<base_rows>", "after_rows_path=<trained_rows>",
            "random_selection_rows_path=<random_selection_rows>"]
    args += ["random_reward_rows_path=<random_reward_rows>"] if random_reward else []
    if frozen is not None and frozen.path:
        args.append(f"frozen_path='{frozen.path}'")
    elif effect != D.PROVE_EFFECT:
        args.append(f"effect={effect:g}")
    where = "the frozen tasks" if frozen is not None else "the held-out tasks"
    return (f"After training, ask after({', '.join(args)}), every arm scored on {where} at k={k} or more: did the "
            f"checkpoint gain beyond noise and beyond its controls?")


def _provable(base: float, k: int, n_tasks: int) -> float | None:
    """The smallest gain on a 0.05 grid that n_tasks held-out tasks can show, or None."""
    for step in range(2, 20):
        effect = step * 0.05
        if base + effect > 1:
            return None
        if holdout_size(effect, base=base, k=max(k, 1)).n_tasks <= n_tasks:
            return round(effect, 2)
    return None
