"""Two or more arms on the tasks they share, and what a paired spread asks for: the arithmetic `after`
(after_training/judge.py, stats.py), `teacher_clears` (before_training/compare.py) and `holdout_size`
(forecasting/holdout.py) share, written once.

Pairing. Arms pair by task id where the ids meet. Where they do not (two tools name one task their own way: vf-eval
`0`, lm-eval `standin_sums/0`, inspect `sum-0`), or where the shared ids carry different prompts (vf-eval's
`example_id` is a row index, so two environments share ids), they pair by the prompt each task was asked with
(rows.task_prompts, readers/prompts.py), each arm's tasks renamed to the first arm's ids. Which key paired them is
said; where neither does, the reason names one id from each side.

Sizing. One task's paired-difference sd, measured from the arms (`diff_sd`) or, where there is none, the binomial
model at a base rate (`model_sd`); stats.tasks_needed turns it into held-out tasks (Miller 2024, arXiv:2411.00640).

Imports rows / stats / defaults only: the jobs import this, never the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from . import defaults as D
from .rows import GradedRows, display_name

BY_ID, BY_PROMPT = "task id", "prompt"


# -- shared tasks ----------------------------------------------------------------------------------------------------

def shared(first: Sequence[str], *others: Iterable[str]) -> list[str]:
    """The names of `first` (in its order) that every one of `others` holds."""
    sets = [o if isinstance(o, (set, frozenset, Mapping)) else set(o) for o in others]
    if len(sets) == 1:  # the common case, two arms: one membership test a name
        held = sets[0]
        return [n for n in first if n in held]
    return [n for n in first if all(n in s for s in sets)]


def shared_index(a: Sequence[str], b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions in `a` and in `b` of the names both hold, in a's order."""
    where = {name: i for i, name in enumerate(b)}
    pairs = [(i, where[n]) for i, n in enumerate(a) if n in where]
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ai, bi = np.array(pairs, dtype=np.int64).T
    return ai, bi


# -- the paired spread and the size it asks for ------------------------------------------------------------------------

def diff_sd(diff: np.ndarray) -> float:
    """One task's paired-difference sd, measured (ddof 1); 0 under MIN_CI_TASKS tasks (unmeasured)."""
    return float(np.std(diff, ddof=1)) if len(diff) >= D.MIN_CI_TASKS else 0.0


def model_sd(base: float, effect: float, k: int) -> float:
    """The binomial model's sd of one task's paired difference: sqrt((p(1-p) + q(1-q)) / k), q = p + effect, both
    held in [0, 1]."""
    p, q = min(max(base, 0.0), 1.0), min(max(base + effect, 0.0), 1.0)
    return math.sqrt((p * (1 - p) + q * (1 - q)) / k)


# -- pairing arms ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Paired:
    """The arms on their compared tasks: each arm's rows with its tasks named as the first arm names them."""

    arms: dict[str, GradedRows]
    tasks: list[str]  # the compared tasks, in the first arm's order and names
    key: str  # BY_ID or BY_PROMPT
    union: int  # tasks any arm scored, counted by that key
    problems: list[str] = field(default_factory=list)  # why the arms do not compare (empty: they do)
    note: str | None = None  # how they paired, where it was not by their ids


def prompts_of(rows: GradedRows, names: Sequence[str]) -> dict[str, str | None]:
    """Task name -> its prompt key, for `names` (None where the rows carry none)."""
    if rows.task_prompts is None:
        return {n: None for n in names}
    index = {n: i for i, n in enumerate(rows.task_names)}
    return {n: rows.task_prompts[index[n]] if n in index else None for n in names}


def _by_prompt(rows: GradedRows, names: Sequence[str]) -> dict[str, str]:
    """Prompt key -> the task among `names` asked with it (prompts two tasks share are left out: ambiguous)."""
    seen: dict[str, str | None] = {}
    for name, key in prompts_of(rows, names).items():
        if key is not None:
            seen[key] = None if key in seen else name
    return {k: n for k, n in seen.items() if n is not None}


def renamed(rows: GradedRows, names: Mapping[str, str]) -> GradedRows:
    """The rows with task `a` named `names[a]`; a task not in `names` gets a name no other arm holds."""
    if not names:
        return replace(rows, task_names=[f"{n}\x00unpaired" for n in rows.task_names], _tables={})
    return replace(rows, task_names=[names.get(n, f"{n}\x00unpaired") for n in rows.task_names], _tables={})


def to_names(rows: GradedRows, graded: Sequence[str], names: Sequence[str],
             prompts: Sequence[str | None]) -> GradedRows | None:
    """The rows with each task renamed to the one of `names` asked with the same prompt (`prompts`, aligned), or None
    where the rows or the names carry no prompts."""
    if rows.task_prompts is None or not any(p is not None for p in prompts):
        return None
    mine = _by_prompt(rows, graded)
    return renamed(rows, {mine[p]: n for n, p in zip(names, prompts) if p is not None and p in mine})


def pair_arms(arms: Mapping[str, GradedRows], graded: Mapping[str, list[str]],
              min_share: float = D.AFTER_MIN_SHARED) -> Paired:
    """The arms paired on their shared tasks, by id where the ids meet (at least `min_share` of the tasks any arm
    scored, and no shared id asked with two prompts), else by prompt; where neither pairs them, the problems."""
    names = list(arms)
    first = names[0]
    ids = shared(graded[first], *(graded[n] for n in names[1:]))
    union_ids = len(set().union(*map(set, graded.values())))
    clashes = _clashes(arms, graded, ids)
    if ids and len(ids) >= min_share * union_ids and not clashes:
        return Paired(dict(arms), ids, BY_ID, union_ids)
    by_prompt = _pair_by_prompt(arms, graded, min_share)
    if by_prompt is not None:
        why = (f"{len(clashes)} of the {len(ids)} shared task ids carry different prompts in the arms" if clashes
               else f"the task ids do not meet ({_examples(graded)})")
        return replace(by_prompt, note=f"paired by prompt on {len(by_prompt.tasks)} tasks: {why}")
    if clashes:
        name, other, a, b = clashes[0]
        suites = _suites(arms)
        return Paired(dict(arms), ids, BY_ID, union_ids, problems=[
            f"the arms share task ids but not the tasks: {len(clashes)} of the {len(ids)} shared ids carry a "
            f"different prompt (e.g. task {display_name(name)}: prompt {a} in {first}, {b} in {other}){suites}; "
            f"these are two evaluations: score every arm on the same one"])
    no_prompts = [n for n in names if arms[n].task_prompts is None]
    prompt_word = (f"; nor by prompt: {', '.join(no_prompts)} carr{'ies' if len(no_prompts) == 1 else 'y'} no "
                   f"prompt to pair on" if no_prompts else "; nor by prompt")
    counts = ", ".join(f"{n} {len(t)}" for n, t in graded.items())
    return Paired(dict(arms), ids, BY_ID, union_ids, problems=[
        f"the arms share {len(ids)} of the {union_ids} tasks any of them scored ({counts}), fewer than half, by "
        f"task id ({_examples(graded)}){prompt_word}: score every arm on the same held-out tasks"])


def _clashes(arms: Mapping[str, GradedRows], graded: Mapping[str, list[str]], ids: list[str]
             ) -> list[tuple[str, str, str, str]]:
    """Shared ids whose prompt differs between the first arm and another: (id, that arm, first's key, its key)."""
    names = list(arms)
    mine = prompts_of(arms[names[0]], ids)
    out = []
    for other in names[1:]:
        theirs = prompts_of(arms[other], ids)
        out += [(t, other, mine[t], theirs[t]) for t in ids
                if mine[t] is not None and theirs[t] is not None and mine[t] != theirs[t]]
    return out


def _pair_by_prompt(arms: Mapping[str, GradedRows], graded: Mapping[str, list[str]], min_share: float
                    ) -> Paired | None:
    names = list(arms)
    if any(arms[n].task_prompts is None for n in names):
        return None
    maps = {n: _by_prompt(arms[n], graded[n]) for n in names}
    first = names[0]
    keys = prompts_of(arms[first], graded[first])
    tasks = [t for t in graded[first] if keys[t] is not None and all(keys[t] in maps[n] for n in names[1:])]
    union = len(set().union(*(set(m) for m in maps.values())))
    if not tasks or len(tasks) < min_share * union:
        return None
    out = {first: arms[first]}
    for n in names[1:]:
        out[n] = renamed(arms[n], {maps[n][keys[t]]: t for t in tasks})
    return Paired(out, tasks, BY_PROMPT, union)


def _examples(graded: Mapping[str, list[str]]) -> str:
    """One task id from each arm, so a person sees how each names its tasks."""
    return ", ".join(f"{n} names one `{display_name(t[0])}`" for n, t in graded.items() if t)


def _suites(arms: Mapping[str, GradedRows]) -> str:
    said = ["{}: {}".format(n, ", ".join(r.suites)) for n, r in arms.items() if r.suites]
    return f" ({'; '.join(said)})" if said else ""
