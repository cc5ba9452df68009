"""The route's confidence under a task resample, and whether it means what it says."""

import math

import numpy as np

from pick_a_method.routing.forecasting.confidence import route_confidence, route_labels


def test_clear_cases_are_sure():
    assert route_confidence(np.zeros(40, int), np.full(40, 4)).route == "floor"
    assert route_confidence(np.zeros(40, int), np.full(40, 4)).confidence == 1.0
    sat = route_confidence(np.full(40, 4), np.full(40, 4))
    assert (sat.route, sat.confidence, sat.runner_up) == ("saturated", 1.0, None)
    single = route_confidence(np.ones(50, int), np.ones(50, int))
    assert single.route == "single_rollout" and single.confidence == 1.0


def test_one_split_task_in_a_floor_is_unsure_and_names_floor():
    conf = route_confidence(np.array([0] * 40 + [1, 2]), np.full(42, 4))
    assert conf.route == "grpo+ReinforceAda" and conf.runner_up == "floor"
    # a resample of 42 tasks holds x split ones, x ~ Binomial(42, 2/42); the second eval drawn from it leaves them
    # all out with chance (1 - x/42)^42: 0.273 on average (one resample alone: (40/42)^42 = 0.129)
    floor = sum(math.comb(42, x) * (2 / 42) ** x * (40 / 42) ** (42 - x) * (1 - x / 42) ** 42 for x in range(43))
    assert abs(conf.runner_up_share - floor) < 0.02 and conf.confidence < 0.9
    single = route_confidence(np.array([0] * 40 + [1, 2]), np.full(42, 4), fresh=False)
    assert abs(single.runner_up_share - (40 / 42) ** 42) < 0.02


def test_on_the_few_split_line_it_is_a_coin():
    c = np.array([2] * 32 + [0] * 68)  # exactly 32 split tasks of 100
    conf = route_confidence(c, np.full(100, 4))
    assert conf.route == "grpo" and 0.4 < conf.confidence < 0.65 and conf.runner_up == "grpo+ReinforceAda"


def test_teacher_clears_is_redecided():
    student = np.array([3, 3, 3, 2, 3, 3, 4, 3] * 6)
    sure = route_confidence(student, np.full(48, 4), teacher=(np.full(48, 4), np.full(48, 4)))
    assert sure.route == "opd" and sure.confidence > 0.95
    close = route_confidence(student, np.full(48, 4), teacher=(np.array([4, 3, 4, 3] * 12), np.full(48, 4)))
    assert close.route in ("opd", "grpo+ReinforceAda") and close.confidence < 0.99


def test_confidence_tracks_how_often_a_fresh_eval_agrees():
    """Populations spread across the few-split line (120 tasks, a share q of them at p = 0.5, the rest at 0, so
    the split count is Binomial(120, 0.875 q) and the chance a fresh eval routes to GRPO is exact). Over 300
    evals the confidence (a resample of a resample) is within 0.03 of that chance on average (0.007 measured) and
    within 0.06 in each band of confidence; one resample alone overstates it by 0.05 (|data - line| overstates
    |truth - line|, so a resample of the data leans sure)."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(300):
        q = rng.uniform(0.15, 0.45)
        c = rng.binomial(4, np.where(rng.uniform(size=120) < q, 0.5, 0.0))
        got = route_confidence(c, np.full(120, 4), draws=400, seed=i)
        single = route_confidence(c, np.full(120, 4), draws=400, seed=i, fresh=False)
        ps = 0.875 * q
        grpo = sum(math.comb(120, j) * ps**j * (1 - ps) ** (120 - j) for j in range(32, 121))
        rows.append((got.confidence, grpo if got.route == "grpo" else 1 - grpo, single.confidence))
    conf, agree, single = np.array(rows).T
    assert abs(conf.mean() - agree.mean()) < 0.03, (conf.mean(), agree.mean())
    assert single.mean() - agree.mean() > 0.03  # what the single resample said
    for lo, hi in [(0.0, 0.7), (0.7, 0.9), (0.9, 0.99), (0.99, 1.01)]:
        band = (conf >= lo) & (conf < hi)
        assert band.sum() >= 20 and abs(conf[band].mean() - agree[band].mean()) < 0.06, (lo, hi)


def test_draw_zero_is_the_data():
    c = np.array([1, 2, 0, 4] * 20)
    assert route_labels(c, np.full(80, 4), draws=5)[0] == "grpo"
