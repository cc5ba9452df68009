"""The paired teacher - student interval is Newcombe's method 10 (MOVER from the arms' Wilson limits),
capped at what each arm's rollouts are worth, as pass_at's interval is."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from rowkit import TEACHER, rows_from_passes

from pick_a_method import routing
from pick_a_method.routing.stats import paired_ci, paired_intervals

Z = NormalDist().inv_cdf(0.975)


def wilson(x, n):
    centre, half = (x + Z * Z / 2) / (n + Z * Z), Z / (n + Z * Z) * math.sqrt(x * (n - x) / n + Z * Z / 4)
    return centre - half, centre + half


def newcombe_10(n11, n12, n21, n22):
    """Newcombe (1998, Stat. Med. 17:2635) method 10 from the 2 x 2 table of (teacher, student) outcomes, written
    out from the paper's formulas: Wilson limits of each margin, squared and added with the phi coefficient."""
    n = n11 + n12 + n21 + n22
    p1, p2 = (n11 + n12) / n, (n11 + n21) / n
    (l1, u1), (l2, u2) = wilson(n11 + n12, n), wilson(n11 + n21, n)
    margins = (n11 + n12) * (n21 + n22) * (n11 + n21) * (n12 + n22)
    phi = (n11 * n22 - n12 * n21) / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2))
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2))
    return low, high


def one_rollout_rows(n11, n12, n21, n22):
    teacher = [1.0] * (n11 + n12) + [0.0] * (n21 + n22)
    student = [1.0] * n11 + [0.0] * n12 + [1.0] * n21 + [0.0] * n22
    return np.array(teacher), np.array(student)


@pytest.mark.parametrize("table", [(30, 8, 1, 1), (20, 10, 4, 6), (12, 3, 3, 22), (36, 4, 0, 0), (39, 1, 0, 0)])
def test_one_rollout_a_task_is_newcombes_method_10(table):
    teacher, student = one_rollout_rows(*table)
    n = len(teacher)
    got = paired_ci(teacher, student, rollouts_a=np.ones(n), rollouts_b=np.ones(n))
    assert got == pytest.approx(newcombe_10(*table), abs=1e-12)


def test_the_first_analytic_intervals_agresti_coull_arms_were_wider():
    teacher, student = one_rollout_rows(33, 5, 1, 1)  # a teacher at 0.95 on 40 tasks, the student at 0.85
    lo, hi = paired_intervals(teacher, student, n_max_a=40, n_max_b=40)
    lo_ac, hi_ac = paired_intervals(teacher, student, n_max_a=40, n_max_b=40, agresti_floor=True)
    assert lo_ac[0] < lo[0] and hi[0] < hi_ac[0]


def _close_rates(base, every, k=4, tasks=40):
    """`tasks` tasks at `base` passes of k, one in `every` a pass more: a little spread, a lot of rollouts."""
    return [base + (t % every == 0) for t in range(tasks)]


def test_the_paired_interval_is_capped_at_what_the_rollouts_are_worth():
    teacher, student = _close_rates(3, 7), _close_rates(2, 9)
    t_rates, s_rates = np.array(teacher) / 4, np.array(student) / 4
    capped = paired_ci(t_rates, s_rates, rollouts_a=np.full(40, 4), rollouts_b=np.full(40, 4))
    uncapped = paired_ci(t_rates, s_rates)
    assert capped[1] - capped[0] > uncapped[1] - uncapped[0] + 0.01  # the spread alone claims more than 160 rollouts
    tc = routing.teacher_clears(rows_from_passes(teacher, model=TEACHER), rows_from_passes(student))
    assert tc.paired.ci95 == pytest.approx(capped)


def test_rollouts_per_task_follow_the_rows():
    """Tasks with different rollout counts: the teacher's 8 a task are worth more than the student's 2."""
    teacher = rows_from_passes(_close_rates(6, 5, k=8), k=8, model=TEACHER)
    student = rows_from_passes(_close_rates(1, 6, k=2), k=2)
    tc = routing.teacher_clears(teacher, student)
    t_rates = np.array(_close_rates(6, 5)) / 8
    s_rates = np.array(_close_rates(1, 6)) / 2
    assert tc.paired.ci95 == pytest.approx(paired_ci(t_rates, s_rates, rollouts_a=np.full(40, 8),
                                                     rollouts_b=np.full(40, 2)))
    swapped = paired_ci(t_rates, s_rates, rollouts_a=np.full(40, 2), rollouts_b=np.full(40, 8))
    assert abs(tc.paired.ci95[1] - swapped[1]) > 0.01
