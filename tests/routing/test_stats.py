"""Statistics: interval coverage, the pass@k estimators against hand combinatorics, holdout sizing numbers."""

import math
from itertools import combinations

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing.stats import bootstrap_ci, pass_at_k_per_group

from rowkit import rows_from_passes


def brute_pass_at_k(n, c, k):
    """Share of all k-subsets of n rollouts (c passing) that hold a pass / are all passes."""
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n, c, k", [(8, 3, 4), (8, 6, 4), (4, 0, 2), (4, 4, 4), (5, 2, 1), (6, 5, 3), (10, 1, 5)])
def test_pass_at_k_matches_enumeration(n, c, k):
    at, pw = pass_at_k_per_group(np.array([n]), np.array([c]), k)
    want_at, want_pow = brute_pass_at_k(n, c, k)
    assert at[0] == pytest.approx(want_at) and pw[0] == pytest.approx(want_pow)


def test_hand_numbers_from_the_reference():
    at, pw = pass_at_k_per_group(np.array([8, 8]), np.array([3, 6]), 4)
    assert at[0] == pytest.approx(1 - 5 / 70) and pw[1] == pytest.approx(15 / 70)


def test_pass_at_on_the_seed_mixed_rows(mixed_rows):
    p = routing.pass_at(mixed_rows)
    assert p.pass_at_1 == 0.5 and p.k == 4
    assert p.pass_at_k == pytest.approx(0.8) and p.pass_pow_k == pytest.approx(0.2)
    lo, hi = p.ci95
    assert 0.36 < lo < 0.42 and 0.58 < hi < 0.64  # the anchor's [0.3875, 0.6125], another RNG


def test_docstring_example_and_degenerate_interval():
    p = routing.pass_at(rows_from_passes([3, 3, 3, 3]))
    lo, hi = p.ci95  # four tasks at one rate: not a point, Agresti-Coull on 4 tasks
    assert p.pass_at_1 == 0.75 and lo < 0.4 and 0.9 < hi <= 1.0
    assert p.pass_at_k == 1.0 and p.pass_pow_k == 0.0


def test_no_interval_under_three_tasks():
    p = routing.pass_at(rows_from_passes([1, 3]))
    assert p.ci95 is None and p.verdict == "no_interval" and p.pass_at_1 == 0.5
    assert any("needs 3" in w for w in p.warnings)


def test_interval_covers_the_truth_about_95_percent_with_uneven_groups():
    rng = np.random.default_rng(12345)
    true_p = rng.uniform(0, 1, size=200)  # a finite population of task difficulties
    truth = true_p.mean()
    hits, trials = 0, 1000
    for _ in range(trials):
        tasks = rng.choice(true_p, size=60)
        k = rng.integers(2, 12, size=60)
        rates = rng.binomial(k, tasks) / k
        lo, hi = bootstrap_ci(rates, rollouts=k)
        hits += lo <= truth <= hi
    assert 0.93 <= hits / trials <= 0.97, hits / trials  # standard error 0.007


def test_interval_is_deterministic_and_reads_task_rates_only(mixed_rows):
    big = mixed_rows * 50  # same tasks, more rows: the same distinct values
    assert routing.pass_at(mixed_rows).ci95 == routing.pass_at(mixed_rows).ci95
    assert routing.pass_at(big).ci95 == routing.pass_at(mixed_rows).ci95


def test_pass_at_pages_per_task(mixed_rows):
    p = routing.pass_at(mixed_rows, per_task_offset=10, per_task_limit=5)
    assert list(p.per_task) == ["t10", "t11", "t12", "t13", "t14"] and p.per_task_omitted == 35


@pytest.mark.parametrize("kwargs, n, sd, conc", [
    ({}, 367, 0.3419, 409),
    ({"k": 8}, 184, 0.2417, 232),
    ({"effect": 0.10}, 89, 0.3354, 106),
    ({"base": 0.3}, 344, 0.3307, 420),
    ({"base": 0.0}, 38, 0.1090, 150),
    ({"task_std": 0.38}, 454, 0.38, None),
    ({"effect": 0.2, "k": 1}, 79, 0.6325, 79),
    ({"power": 0.9, "alpha": 0.01}, 696, 0.3419, 774),
])
def test_holdout_size_matches_the_anchor(kwargs, n, sd, conc):
    h = routing.holdout_size(**kwargs)
    assert (h.n_tasks, h.task_std, h.n_tasks_concentrated) == (n, sd, conc)


def test_holdout_from_rows_and_at_the_ceiling():
    before = rows_from_passes([4] * 20 + [3, 3])
    h = routing.holdout_size(0.05, before=before)
    assert h.saturated and h.n_tasks == 367 and any("ceiling" in w for w in h.warnings)
    b = rows_from_passes([0, 1, 2, 3, 4, 2] * 5)
    a = rows_from_passes([1, 2, 2, 4, 4, 3] * 5)
    paired = routing.holdout_size(0.05, before=b, after=a)
    assert paired.sd_source == "rows" and paired.n_paired == 30
    assert paired.n_tasks_low <= paired.n_tasks <= paired.n_tasks_high


@pytest.mark.parametrize("kwargs, field", [({"effect": 0}, "effect"), ({"effect": 1.5}, "effect"),
                                           ({"power": 1}, "power"), ({"task_std": 0}, "task_std"),
                                           ({"after": [{"task_id": "a", "reward": 1}]}, "after")])
def test_holdout_refusals(kwargs, field):
    with pytest.raises(routing.InputError) as e:
        routing.holdout_size(**kwargs)
    assert e.value.field == field


def test_teacher_clears_numbers(student_rows, strong_teacher_rows, weak_teacher_rows):
    t = routing.teacher_clears(strong_teacher_rows, student_rows)
    assert t.clears is True and t.verdict == "clears" and t.gap == pytest.approx(0.25) and t.apart
    assert t.paired.n_shared == 48 and t.paired.mean_diff == pytest.approx(0.25)
    lo, hi = t.teacher_ci95  # 48 tasks all at 4/4: an interval, not the point 1.0
    assert hi == 1.0 and lo < 0.95 and t.paired.ci95[0] > 0
    w = routing.teacher_clears(weak_teacher_rows, student_rows)
    assert w.clears is False and w.verdict == "does_not_clear" and w.gap < 0


def test_teacher_clears_undecided_on_few_tasks(student_rows):
    t = routing.teacher_clears(rows_from_passes([4, 4]), student_rows)
    assert t.clears is None and t.verdict == "undecided"
    assert t.next_step.tool == "holdout_size"


def test_split_prediction(mixed_rows):
    b = routing.band(mixed_rows)
    # rates 0, .25, .5, .75, 1 x 8: 0.6 split at k = 4. The plug-in 1 - p^4 - (1-p)^4 said 0.41 there; the
    # posterior prediction reproduces the observed share (SE sqrt(.6 x .4 / 40) = 0.077) and grows with k
    plug_in = np.mean([1 - p**4 - (1 - p) ** 4 for p in (0, .25, .5, .75, 1)])
    assert abs(b.predicted_split_share["4"] - 0.6) < 0.08 and b.predicted_split_share["4"] > plug_in + 0.1
    assert b.predicted_split_share["4"] <= b.predicted_split_share["8"] <= b.predicted_split_share["16"]
    lo, hi = b.predicted_split_ci95["16"]
    assert lo <= b.predicted_split_share["16"] <= hi
    assert math.isclose(b.split_share, 0.6) and b.split_definition == "pass rate strictly between 0 and 1"
