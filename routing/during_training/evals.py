"""A folder of per-checkpoint evals (checkpoint-300/, global_step_300/, step_300/), each read with the eval-tool
readers (routing/readers): the held-out curve, each checkpoint's pass@1 with its task-level interval, and its
difference from the first checkpoint paired on the tasks every checkpoint scored (routing/stats.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..readers import read_rows
from ..stats import paired_intervals, rate_intervals
from .models import EvalPoint


def _rates(folder: Path, threshold: float) -> dict[str, float]:
    rows = read_rows(str(folder))
    graded = ~np.isnan(rows.reward)
    n = np.bincount(rows.task[graded], minlength=rows.n_tasks)
    c = np.bincount(rows.task[graded], weights=rows.reward[graded] >= threshold, minlength=rows.n_tasks)
    return {rows.task_names[t]: c[t] / n[t] for t in np.flatnonzero(n)}


def eval_curve(checkpoints: list[tuple[int, Path]], threshold: float, warnings: list[str]) -> list[EvalPoint]:
    rates: list[tuple[int, Path, dict[str, float]]] = []
    for step, folder in checkpoints:
        try:
            rates.append((step, folder, _rates(folder, threshold)))
        except (ValueError, OSError) as e:
            warnings.append(f"{folder.name}: no eval rows read ({e})")
    if not rates:
        return []
    shared = sorted(set.intersection(*(set(r) for _, _, r in rates)))
    first = np.array([rates[0][2][t] for t in shared])
    out = []
    for step, folder, r in rates:
        values = np.array(list(r.values()))
        lo, hi = rate_intervals(values) if len(values) >= 3 else (None, None)
        point = EvalPoint(step=step, folder=str(folder), pass_at_1=float(values.mean()), tasks=len(values),
                          ci95=(float(lo[0]), float(hi[0])) if lo is not None else None)
        if len(shared) >= 3:
            mine = np.array([r[t] for t in shared])
            point.diff_from_first = float(mine.mean() - first.mean())
            dl, dh = paired_intervals(mine, first)
            point.diff_ci95 = (float(dl[0]), float(dh[0]))
        out.append(point)
    if len(shared) < 3 and len(rates) > 1:
        warnings.append(f"the checkpoints share {len(shared)} tasks: too few to pair them (3 needed)")
    return out
