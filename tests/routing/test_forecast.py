"""The rollout advice wired into band and route: the prediction with its interval, the rollout advice, the route's
confidence and cost, and the suggested run as prime_rl_config takes it."""

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing import defaults as D
from pick_a_method.common.trainers import STEPS

from rowkit import EXAMPLES, MODEL, rows_from_passes

FLOORISH = [0] * 100 + [1] * 14 + [2] * 6 + [3] * 4


def test_band_predicts_what_it_measures_on_the_mixed_example():
    # the plug-in estimate predicted 0.629 at k = 8 where 0.7125 split
    b = routing.band(routing.read_rows(EXAMPLES / "mixed.jsonl"))
    assert b.k == 8 and b.split_share == pytest.approx(0.7125)
    se = np.sqrt(0.7125 * 0.2875 / 80)
    assert abs(b.predicted_split_share["8"] - 0.7125) < 2 * se
    lo, hi = b.predicted_split_ci95["8"]
    assert lo < 0.7125 < hi
    advice = b.rollouts
    assert [p.k for p in advice.per_k] == list(D.ROLLOUT_CANDIDATES)
    assert advice.suggested_group_size is None  # 57 split tasks: nothing to fix
    assert advice.group_size == 8 and advice.batch == advice.prompts_per_step * 8
    assert advice.best_k == max(advice.per_k, key=lambda p: p.informative_per_1000_rollouts).k


def test_few_split_suggests_more_rollouts_only_where_it_reaches_enough_tasks():
    # 24 split of 124, thinning toward the floor as a Beta does
    reaches = routing.band(rows_from_passes(FLOORISH))
    assert reaches.few_split and reaches.rollouts.suggested_group_size is not None
    assert reaches.rollouts.gain >= D.MIN_SPLIT_GAIN and "sample more per task" in reaches.summary
    short = routing.band(rows_from_passes([0] * 40 + [1, 2]))  # 2 split of 42: even k = 64 stays far short
    assert short.few_split and short.rollouts.suggested_group_size is None
    assert "Add tasks" in short.summary and "sample more per task" not in short.summary


def test_route_sets_group_size_and_batch_that_prime_rl_config_takes(tmp_path):
    from pick_a_method.trainers.prime_rl import prime_rl_config
    r = routing.route(rows_from_passes(FLOORISH), model=MODEL, taskset="reverse-text")
    args = r.next_step.arguments
    assert args["knobs"]["group_size"] == r.rollouts.suggested_group_size == r.rollouts.group_size
    assert args["batch"] == r.rollouts.batch and args["batch"] % args["knobs"]["group_size"] == 0
    out = prime_rl_config(**{**args, "out": tmp_path / "rl.toml"})  # the step names a file: write it in tmp_path
    assert f"batch_size = {args['batch']}" in out.text and f"group_size = {args['knobs']['group_size']}" in out.text


def test_impossible_tasks_read_as_a_point_mass_get_no_more_k_advice():
    # 100 tasks never pass in 8 while 24 sit near half: BIC reads the fails as impossible tasks (a point mass)
    b = routing.band(rows_from_passes([0] * 100 + [3, 4, 5] * 8, k=8))
    assert b.rollouts.prior_model == "beta+0" and b.rollouts.prior["zero"] > 0.7
    assert b.few_split and b.rollouts.suggested_group_size is None
    share = {p.k: p.split_share for p in b.rollouts.per_k}
    assert share[64] - share[8] < D.MIN_SPLIT_GAIN  # k = 8 -> 64 buys under 3 points: the fails never split


def test_route_confidence_and_runner_up():
    sure = routing.route(rows_from_passes([0, 1, 2, 3, 4] * 20), model=MODEL)
    assert sure.confidence == 1.0 and sure.runner_up is None and "Not sure" not in sure.summary
    unsure = routing.route(rows_from_passes([0] * 40 + [1, 2]), model=MODEL)
    assert unsure.route == "grpo" and unsure.confidence < D.CONFIDENCE_SAY_BELOW and unsure.runner_up == "floor"
    assert "Not sure" in unsure.summary and f"{unsure.confidence:.0%}" in unsure.summary
    assert routing.route(rows_from_passes([0] * 20), model=MODEL).confidence == 1.0
    cut = routing.route(routing.read_rows(EXAMPLES / "cut_off.jsonl"), model=MODEL)
    assert cut.route == "fix_reward" and cut.confidence is None  # not a decision the rates make


def test_route_cost_without_and_with_tokens():
    rows = rows_from_passes([0, 1, 2, 3, 4] * 20)
    r = routing.route(rows, model=MODEL)
    assert r.cost.rollouts_per_step == r.rollouts.batch and r.cost.tokens_per_step is None
    assert "completion_tokens" in r.cost.missing[0]
    assert r.cost.rollouts_total == r.cost.rollouts_per_step * STEPS
    assert r.cost.no_signal_rollout_share == pytest.approx(1 - r.cost.signal_share)


def test_non_binary_rewards_use_the_spread():
    rows = []
    for t in range(40):
        rewards = [0.7] * 4 if t % 2 else [0.2, 0.4, 0.4, 0.4]  # identical non-binary rewards: no signal
        rows += [{"task_id": f"t{t}", "reward": r, "model": MODEL} for r in rewards]
    b = routing.band(rows, pass_threshold=0.5)
    assert b.split_definition == D.SIGNAL_DEFINITIONS["spread"]
    assert b.n_split == 20 and b.split_share == 0.5
    assert any("rewards differ" in w for w in b.warnings)


THROUGHPUT = {"inference_tokens_per_s_per_gpu": 2000.0, "trainer_tokens_per_s_per_gpu": 8000.0}


def test_route_gpu_split_goes_into_prime_rl_config(tmp_path):
    from pick_a_method.trainers.prime_rl import prime_rl_config
    rows = [dict(r, completion_tokens=300) for r in rows_from_passes([0, 1, 2, 3, 4] * 20)]
    bare = routing.route(rows, model=MODEL, taskset="reverse-text")
    assert bare.cost.inference_gpus is None and "gpus" not in bare.next_step.arguments
    assert any("gpus=" in m and "throughput=" in m for m in bare.cost.missing)  # the exact arguments to add
    r = routing.route(rows, model=MODEL, taskset="reverse-text", gpus=8, throughput=THROUGHPUT)
    cost = r.cost
    # every task writes 300 tokens: the trainer sees the signal groups' share of what inference samples
    assert cost.tokens_per_step == r.rollouts.batch * 300
    assert cost.trained_tokens_per_step == pytest.approx(cost.tokens_per_step * cost.signal_share)
    infer_s, train_s = cost.tokens_per_step / 2000, cost.trained_tokens_per_step / 8000
    steps = {i: max(infer_s / i, train_s / (8 - i)) for i in range(1, 8)}
    assert cost.inference_gpus == min(steps, key=steps.get) and cost.trainer_gpus == 8 - cost.inference_gpus
    assert cost.seconds_per_step == pytest.approx(min(steps.values()))
    assert r.next_step.arguments["gpus"] == {"inference": cost.inference_gpus, "trainer": cost.trainer_gpus}
    assert f"{cost.inference_gpus} for inference" in r.summary
    out = prime_rl_config(**{**r.next_step.arguments, "out": tmp_path / "rl.toml"})
    assert f"num_infer_gpus = {cost.inference_gpus}" in out.text and f"num_train_gpus = {cost.trainer_gpus}" in out.text


def test_route_refuses_a_bad_gpu_argument_even_where_unused():
    floor = rows_from_passes([0] * 20)
    with pytest.raises(routing.InputError) as e:
        routing.route(floor, model=MODEL, gpus=8, throughput={"inference": 1.0, "trainer": 2.0})
    assert e.value.field == "throughput"
    with pytest.raises(routing.InputError) as e:
        routing.route(floor, model=MODEL, gpus=1)
    assert e.value.field == "gpus"


@pytest.mark.parametrize("k, warned", [(4, True), (8, False)])
def test_band_warns_that_four_rollouts_cannot_see_impossible_tasks(k, warned):
    """At k=4 the prior has no point mass at 0 to fit, so all-fail tasks count as merely hard: band says so."""
    rng = np.random.default_rng(5)
    p = np.where(rng.uniform(size=300) < 0.2, 0.0, rng.beta(2, 2, size=300))
    rows = [{"task_id": f"t{t}", "reward": float(rng.uniform() < p[t])} for t in range(300) for _ in range(k)]
    b = routing.band(rows)
    assert b.verdict == "mixed" and b.n_all_fail > 0
    assert any("can never pass" in w for w in b.warnings) is warned


@pytest.mark.parametrize("name", ["floor.jsonl", "saturated.jsonl"])
def test_a_set_where_nothing_is_expected_to_split_gets_no_batch(name):
    """1 / share on a floor asked 68,831,348,289 prompts a step (seen on floor.jsonl); under one expected split task
    in the set no batch is sized, and no warning speaks of one."""
    b = routing.band(routing.read_rows(EXAMPLES / name))
    assert b.rollouts is not None and b.rollouts.prompts_per_step is None and b.rollouts.batch is None
    assert not [w for w in b.warnings if "prompts at k=" in w]
