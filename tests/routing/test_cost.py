"""The run's cost, by hand."""

import numpy as np
import pytest

from pick_a_method.routing.forecasting.cost import check_gpus, run_cost, split_gpus, throughputs
from pick_a_method.common.errors import InputError

CHANCE = np.array([1.0, 0.0, 0.5, 0.5])
TOKENS = np.array([100.0, 300.0, 200.0, 200.0])


def test_cost_by_hand():
    c = run_cost(group_size=8, prompts_per_step=64, steps=100, signal_chance=CHANCE, tokens=TOKENS, gpus=8,
                 inference_tokens_per_gpu_s=1000.0, trainer_tokens_per_gpu_s=4000.0)
    assert (c.rollouts_per_step, c.rollouts_total) == (512, 51_200)
    assert c.signal_share == 0.5 and c.no_signal_rollout_share == 0.5
    assert c.mean_tokens == 200.0 and c.tokens_per_step == 102_400.0 and c.tokens_total == 10_240_000.0
    # no-signal tokens: (0 x 100 + 1 x 300 + .5 x 200 + .5 x 200) / 800 = 0.625 (the hard task writes long)
    assert c.no_signal_token_share == pytest.approx(0.625)
    assert c.trained_tokens_per_step == pytest.approx(38_400.0)
    # inference 102,400 / 1,000 = 102.4 GPU-s, trainer 38,400 / 4,000 = 9.6: 7 + 1 takes max(14.6, 9.6) s a step,
    # 6 + 2 max(17.1, 4.8)
    assert (c.inference_gpus, c.trainer_gpus) == (7, 1) and c.missing == []
    assert c.seconds_per_step == pytest.approx(102.4 / 7)


@pytest.mark.parametrize("gpus, inference_s, trainer_s, want", [
    (10, 1.0, 1.9, (4, 6, 1.9 / 6)),  # 4 + 6: max(0.25, 0.317); rounding the proportional 3.45 gave 3 + 7: 0.333
    (3, 10.0, 10.0, (2, 1, 10.0)),  # 1 + 2 and 2 + 1 both take 10 s, equally near 1.5: more inference
    (5, 1.0, 3.0, (1, 4, 1.0)),  # 1 + 4 and 2 + 3 both take 1 s: 1 is nearer the proportional 1.25
    (4, 30.0, 10.0, (3, 1, 10.0)),
    (8, 1.0, 100.0, (1, 7, 100 / 7)),  # one GPU stays with inference however light it is
])
def test_gpu_split_by_hand(gpus, inference_s, trainer_s, want):
    got = split_gpus(gpus, inference_s, trainer_s)
    assert got[:2] == want[:2] and got[2] == pytest.approx(want[2])


def test_throughput_argument_is_checked():
    assert throughputs(None) == (None, None)
    assert throughputs({"inference_tokens_per_s_per_gpu": 5.0, "trainer_tokens_per_s_per_gpu": 7.0}) == (5.0, 7.0)
    for bad in ({"inference": 5.0, "trainer": 7.0}, {"inference_tokens_per_s_per_gpu": 5.0}, [5.0, 7.0]):
        with pytest.raises(InputError) as e:
            throughputs(bad)
        assert e.value.field == "throughput" and "trainer_tokens_per_s_per_gpu" in str(e.value)
    with pytest.raises(InputError) as e:
        check_gpus(8, {"inference_tokens_per_s_per_gpu": 0.0, "trainer_tokens_per_s_per_gpu": 7.0})
    assert e.value.field == "throughput"
    with pytest.raises(InputError) as e:
        check_gpus(1, None)
    assert e.value.field == "gpus"


def test_without_tokens_it_says_what_is_missing():
    c = run_cost(group_size=4, prompts_per_step=32, steps=10, signal_chance=CHANCE)
    assert c.tokens_per_step is None and c.rollouts_total == 1280
    assert "completion_tokens" in c.missing[0] and "fields" in c.missing[0]


def test_without_throughputs_no_gpu_split_but_tokens():
    c = run_cost(group_size=4, prompts_per_step=32, steps=10, signal_chance=CHANCE,
                 tokens=np.array([100.0, np.nan, 200.0, 300.0]))
    assert c.mean_tokens == 200.0 and c.inference_gpus is None
    assert any("1 of 4 tasks" in m for m in c.missing)
    assert any("gpus=" in m and "inference_tokens_per_s_per_gpu" in m for m in c.missing)


@pytest.mark.parametrize("kwargs, field", [({"group_size": 0}, "group_size"), ({"steps": 1.5}, "steps"),
                                           ({"signal_chance": np.array([1.2])}, "signal_chance"),
                                           ({"gpus": 1, "tokens": TOKENS, "inference_tokens_per_gpu_s": 1.0,
                                             "trainer_tokens_per_gpu_s": 1.0}, "gpus")])
def test_bad_arguments(kwargs, field):
    args = dict(group_size=4, prompts_per_step=8, steps=10, signal_chance=CHANCE) | kwargs
    with pytest.raises(InputError) as e:
        run_cost(**args)
    assert e.value.field == field
