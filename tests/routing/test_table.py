"""The table of sufficient statistics against the same numbers counted row by row in plain Python."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing.table import _COLUMNS, build_table


def random_rows(seed: int, *, nonbinary: bool, ungraded: bool, truncated: bool, samplers: bool, tokens: bool):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(600):
        row = {"task_id": f"t{rng.integers(40)}", "reward": float(rng.random() < 0.4)}
        if nonbinary and rng.random() < 0.3:
            row["reward"] = round(float(rng.uniform(-0.5, 1.5)), 3)
        if ungraded and rng.random() < 0.15:
            row["reward"] = None if rng.random() < 0.5 else math.nan
        if truncated:
            row["truncated"] = bool(rng.random() < 0.25)
        if samplers:
            row["model"] = ["a", "b", None][rng.integers(3)]
            if rng.random() < 0.5:
                row["arm"] = ["x", "y"][rng.integers(2)]
        if tokens and rng.random() < 0.6:
            row["completion_tokens"] = int(rng.integers(1, 500))
        rows.append(row)
    return rows


def by_hand(rows, threshold):
    """Group -> statistics, one row at a time (groups: task, model, arm)."""
    stats = defaultdict(lambda: defaultdict(float))
    for r in rows:
        s = stats[(r["task_id"], r.get("model"), r.get("arm"))]
        reward = r["reward"]
        graded = reward is not None and not math.isnan(reward)
        passed = graded and reward >= threshold
        s["n_rows"] += 1
        s["n"] += graded
        s["c"] += passed
        s["truncated"] += bool(r.get("truncated"))
        s["truncated_passes"] += bool(r.get("truncated")) and passed
        s["ungraded"] += not graded
        s["nonbinary"] += graded and reward not in (0.0, 1.0)
        s["reward_sum"] += reward if graded else 0.0
        s["reward_sq"] += reward * reward if graded else 0.0
        if "completion_tokens" in r:
            s["tokens_sum"] += r["completion_tokens"]
            s["tokens_n"] += 1
    return stats


@pytest.mark.parametrize("threshold", [1.0, 0.5, 0.0, 1.5])
@pytest.mark.parametrize("kind", ["binary", "nonbinary", "ungraded", "truncated", "samplers", "everything"])
def test_every_statistic_matches_a_count_by_hand(kind, threshold):
    flags = dict(nonbinary=kind in ("nonbinary", "everything"), ungraded=kind in ("ungraded", "everything"),
                 truncated=kind in ("truncated", "everything"), samplers=kind in ("samplers", "everything"),
                 tokens=kind == "everything")
    rows = random_rows(len(kind), **flags)
    table = build_table(routing.as_rows(rows), threshold)
    want = by_hand(rows, threshold)
    got = {}
    for g in range(len(table)):
        task = table.rows.task_names[table.task[g]]
        model = table.model_names[table.model[g]] if table.model[g] >= 0 else None
        arm = table.rows.arm_names[table.arm[g]] if table.arm[g] >= 0 else None
        got[(task, model, arm)] = {k: float(getattr(table, k)[g]) for k in _COLUMNS[3:]}
    assert set(got) == set(want)
    for key, stats in want.items():
        for name in _COLUMNS[3:]:
            assert got[key][name] == pytest.approx(stats[name]), (key, name)
    for name in _COLUMNS:
        assert getattr(table, name).dtype == (np.float64 if name in ("reward_sum", "reward_sq", "tokens_sum")
                                              else np.int32 if name in ("task", "model", "arm") else np.int64), name


def test_a_tasks_mean_rate_is_worth_the_harmonic_count_of_its_groups():
    """task_rates averages a task's groups with equal weight, so its variance is sum p(1-p)/n_g / g^2: worth
    g^2 / sum(1/n_g) rollouts (6.4 for groups of 2 and 8, not their 10), its rollouts for one group."""
    rows = ([{"task_id": "a", "reward": 1.0, "model": "m1"}] * 2 + [{"task_id": "a", "reward": 0.0, "model": "m2"}] * 8
            + [{"task_id": "b", "reward": 1.0, "model": "m1"}] * 4)
    table = build_table(routing.as_rows(rows), 1.0)
    assert table.task_rates() == {"a": 0.5, "b": 1.0}
    assert table.task_worth() == pytest.approx({"a": 4 / (1 / 2 + 1 / 8), "b": 4.0})
