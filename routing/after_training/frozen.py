"""The freeze that makes `after` honest: a seeded random draw of the held-out tasks `holdout_size` asks for, with
the registered effect, k and the base pass@1, written as a small JSON manifest before training and read back by
`after` (every arm must cover those tasks, and only those are compared).

The manifest carries a digest of its task list, so a list edited after the draw is named, not trusted in silence.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pick_a_method.common.next_step import Tool

import numpy as np
from pydantic import Field, ValidationError

from .. import defaults as D
from pick_a_method.common.errors import InputError
from pick_a_method.common.paths import confine
from pick_a_method.common.write import check_out, write_config
from .stats import graded_tasks
from .pool import pool_cap
from ..forecasting import holdout_size
from ..paired import prompts_of
from ..shared import dominant_model, median_budget, rows_arguments
from ..readers import read_rows
from ..rows import RowsLike
from ..table import table_of
from ..verdicts import NextStep, Verdict

MANIFEST_FILE = dict(suffixes=(".json",), why="the manifest is JSON", argument="out")  # how it is written
MAX_MANIFEST_BYTES = 256 << 20  # a million task ids take about 20 MiB
MANIFEST_FIELDS = ("format", "version", "tasks", "tasks_sha256", "n_tasks", "suite_tasks", "effect", "k", "base",
                   "power", "alpha", "seed", "pass_threshold", "max_tokens", "model", "source", "prompts", "pool_tasks",
                   "max_share")


def tasks_digest(tasks: Sequence[str]) -> str:
    """sha256 of the task ids in the manifest's order, one per line (what a later edit would change)."""
    return hashlib.sha256("\n".join(tasks).encode("utf-8", "surrogatepass")).hexdigest()


class Frozen(Verdict):
    """The frozen held-out set: which tasks, and what they were sized to show. `after(..., frozen=...)` reads it."""

    verdict: Literal["frozen", "drawn"] = Field(description="frozen: written to `path`; drawn: not written (no out).")
    format: str = D.FREEZE_FORMAT
    version: int = D.FREEZE_VERSION
    tasks: list[str] = Field(description="The held-out task ids, in the rows' order. Train on none of them.")
    tasks_sha256: str = Field(description="sha256 of the task ids joined by newlines: a later edit shows.")
    n_tasks: int
    suite_tasks: int = Field(description="Graded tasks in the rows the draw was made from.")
    effect: float = Field(description="The registered effect: the gain the held-out set was sized to show.")
    k: int = Field(description="Rollouts per task the size assumes: evaluate every arm at k or more.")
    base: float = Field(description="The base pass@1 the size assumes (measured where the rows allow).")
    power: float
    alpha: float
    seed: int
    pass_threshold: float
    max_tokens: float | None = Field(None, description="The token cap the base rows were sampled at, where they say.")
    model: str | None = None
    source: str | list[str] | None = Field(None, description="The rows the draw was made from.")
    # each frozen task's prompt key (readers/prompts.py, aligned to `tasks`): `after` pairs another tool's run of the
    # same tasks on it; the tasks left to train on; the most of the suite a freeze holds out (FREEZE_MAX_SHARE)
    prompts: list[str | None] | None = None
    pool_tasks: int | None = None
    max_share: float | None = None
    path: str | None = Field(None, description="Where the manifest was written; null when not written.")

    def manifest(self) -> dict[str, Any]:
        return self.model_dump(include=set(MANIFEST_FIELDS))


def freeze(rows: RowsLike | str | os.PathLike[str], effect: float = D.PROVE_EFFECT, k: int | None = None,
           seed: int = D.FREEZE_SEED, out: str | os.PathLike[str] | None = None,
           allowed_roots: Sequence[Any] | None = None, *, n_tasks: int | None = None,
           power: float = D.HOLDOUT_POWER, alpha: float = D.HOLDOUT_ALPHA, pass_threshold: float = D.PASS_THRESHOLD,
           model: str | None = None, overwrite: bool = False, fields: Mapping[str, str] | None = None) -> Frozen:
    """Draw the held-out tasks for `effect` from the rows' graded tasks and, with `out`, write the manifest there
    (JSON; atomic, never over a file without `overwrite`, inside `allowed_roots` when given).

    The size is `holdout_size(effect, base, k, power, alpha)`, base the rows' pass@1 (the default base where the
    rows sit at the floor or the ceiling, as the route's advice does), k the rows' smallest group unless given.
    `n_tasks` overrides the size. More tasks than the suite holds is an error that says what to change."""
    graded = read_rows(rows, fields=fields, argument="rows")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed is {seed!r}; give a whole number 0 or more", field="seed")
    suite = graded_tasks(graded, pass_threshold)
    if not suite:
        raise InputError("the rows have no graded task to freeze; grade them first", field="rows")
    g = table_of(graded, pass_threshold).graded()
    measured = float(g.rates.mean())
    base = measured if 0.0 < measured < D.HOLDOUT_CEILING else D.HOLDOUT_BASE
    k = int(g.n.min()) if k is None else k
    warnings: list[str] = []
    if base != measured:
        warnings.append(f"the rows' pass@1 {measured:.3f} sits at the {'floor' if measured <= 0 else 'ceiling'}, where "
                        f"no gain can be shown; sized at the default base {D.HOLDOUT_BASE}: harden the eval first")
    h = holdout_size(effect, base=base, k=k, power=power, alpha=alpha)
    size, capped = pool_cap(len(suite), h.n_tasks, n_tasks, effect=effect, base=base, k=k, power=power,
                            alpha=alpha)
    if capped:
        warnings.append(capped)
    if n_tasks is not None and n_tasks < h.n_tasks:
        warnings.append(f"{n_tasks} tasks detect a {effect:g} gain with less than {power:g} power (holdout_size asks "
                        f"{h.n_tasks} at k={k})")
    picked = np.sort(np.random.default_rng(seed).choice(len(suite), size=size, replace=False))
    tasks = [suite[i] for i in picked.tolist()]
    back, _ = rows_arguments(graded)
    prompts = prompts_of(graded, tasks) if graded.task_prompts is not None else None
    model = model or dominant_model(graded)  # `after` calls out an after arm sampled by the base
    frozen = Frozen(verdict="drawn", tasks=tasks, tasks_sha256=tasks_digest(tasks), n_tasks=size,
                    prompts=list(prompts.values()) if prompts else None, pool_tasks=len(suite) - size,
                    max_share=D.FREEZE_MAX_SHARE,
                    suite_tasks=len(suite), effect=effect, k=k, base=round(base, 4), power=power, alpha=alpha,
                    seed=seed, pass_threshold=pass_threshold,
                    max_tokens=median_budget(graded),
                    model=model, source=back.get("rows_path"), warnings=warnings,
                    summary=(f"{size} of {len(suite)} tasks held out (seed {seed}) to show a {effect:g} gain at k={k} "
                             f"from base {base:.2f}, leaving {len(suite) - size} to train on; train on none of the "
                             f"held-out ones."),
                    next_step=NextStep(tool=None, why="Write the manifest (out=FILE.json) before training."))
    if out is None:
        return frozen
    path = write_config(out, json.dumps(frozen.manifest(), indent=1) + "\n", overwrite=overwrite,
                        allowed_roots=allowed_roots, **MANIFEST_FILE)
    return frozen.model_copy(update=dict(verdict="frozen", path=str(path), next_step=after_step(str(path), size, k)))


def check_freeze(out: str | os.PathLike[str], allowed_roots: Sequence[Any] | None, argument: str = "freeze") -> None:
    """Refuse a freeze path before anything is drawn: a manifest already there is a registered held-out set, never
    replaced (the trained arms are judged on it); else the writers' checks (suffix, folder, allowed roots)."""
    if isinstance(out, (str, os.PathLike)) and str(out).strip():
        there = Path(os.path.expanduser(os.fspath(out)))
        if there.exists() or there.is_symlink():
            raise InputError(f"{argument} {os.fspath(out)!r} already exists: a frozen manifest is the registered "
                             f"held-out set and is never replaced; judge the trained arms on it (after with "
                             f"frozen_path={os.fspath(out)!r}), or freeze into another file", field=argument)
    check_out(out, overwrite=False, allowed_roots=allowed_roots, **{**MANIFEST_FILE, "argument": argument})


def after_step(path: str, n_tasks: int, k: int) -> NextStep:
    """The `after` call to make once the checkpoint is trained (the route names it after a freeze)."""
    return NextStep(tool=Tool.AFTER, arguments={"frozen_path": path},
                    needs=["before_rows_path", "after_rows_path", "random_selection_rows_path (if trained)",
                           "random_reward_rows_path (if trained)"],
                    why=(f"After training, score the base, the checkpoint and any control arms on these {n_tasks} "
                         f"tasks at k={k} or more, then ask whether it improved beyond noise and its controls."))


def read_frozen(source: Frozen | Mapping[str, Any] | str | os.PathLike[str],
                roots: Sequence[Path] | None = None) -> tuple[Frozen, list[str]]:
    """The manifest from a path (confined to `roots` when given), a dict or a Frozen, and warnings about it."""
    if isinstance(source, Frozen):
        frozen = source
    else:
        data = source
        if isinstance(source, (str, os.PathLike)):
            path = Path(confine(source, "frozen", roots))
            if not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
                raise InputError(f"frozen {os.fspath(source)!r} is not a manifest file (missing, not a regular file,"
                                 f" or over {MAX_MANIFEST_BYTES >> 20} MiB); give the file `freeze` wrote",
                                 field="frozen")
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputError(f"frozen {os.fspath(source)!r} is not a readable JSON manifest "
                                 f"({e.__class__.__name__}); give the file `freeze` wrote", field="frozen") from None
        if not isinstance(data, Mapping) or data.get("format") != D.FREEZE_FORMAT:
            raise InputError(f"frozen is not a {D.FREEZE_FORMAT} manifest (no matching `format`); give the file "
                             f"`freeze` (route --freeze) wrote", field="frozen")
        if data.get("version") != D.FREEZE_VERSION:
            raise InputError(f"frozen is manifest version {data.get('version')!r}; this pick-a-method reads version "
                             f"{D.FREEZE_VERSION}", field="frozen")
        try:
            frozen = Frozen(verdict="frozen", summary="", next_step=NextStep(why="read"),
                            path=os.fspath(source) if isinstance(source, (str, os.PathLike)) else None,
                            **{k: data[k] for k in MANIFEST_FIELDS if k in data})
        except ValidationError as e:
            first = e.errors()[0]
            raise InputError(f"frozen manifest: {'.'.join(map(str, first['loc']))}: {first['msg']}; freeze again",
                             field="frozen") from None
    warnings = []
    if tasks_digest(frozen.tasks) != frozen.tasks_sha256:
        warnings.append("the frozen manifest's task list does not match its digest: it was edited after the draw, so "
                        "it is no longer a blind held-out set")
    if len(set(frozen.tasks)) != len(frozen.tasks):
        raise InputError("the frozen manifest lists a task twice; freeze again", field="frozen")
    return frozen, warnings
