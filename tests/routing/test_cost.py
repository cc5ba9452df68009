"""Issue 15 point 4: the run's cost, by hand."""

import numpy as np
import pytest

from pick_a_method.routing.cost import run_cost
from pick_a_method.routing.errors import InputError

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
    # inference 102,400 / 1,000 = 102.4 GPU-s, trainer 38,400 / 4,000 = 9.6: 8 x 102.4 / 112 = 7.3 -> 7 and 1
    assert (c.inference_gpus, c.trainer_gpus) == (7, 1) and c.missing == []


def test_without_tokens_it_says_what_is_missing():
    c = run_cost(group_size=4, prompts_per_step=32, steps=10, signal_chance=CHANCE)
    assert c.tokens_per_step is None and c.rollouts_total == 1280
    assert "completion_tokens" in c.missing[0] and "fields" in c.missing[0]


def test_without_throughputs_no_gpu_split_but_tokens():
    c = run_cost(group_size=4, prompts_per_step=32, steps=10, signal_chance=CHANCE,
                 tokens=np.array([100.0, np.nan, 200.0, 300.0]))
    assert c.mean_tokens == 200.0 and c.inference_gpus is None
    assert any("1 of 4 tasks" in m for m in c.missing) and any("throughputs" in m for m in c.missing)


@pytest.mark.parametrize("kwargs, field", [({"group_size": 0}, "group_size"), ({"steps": 1.5}, "steps"),
                                           ({"signal_chance": np.array([1.2])}, "signal_chance"),
                                           ({"gpus": 1, "tokens": TOKENS, "inference_tokens_per_gpu_s": 1.0,
                                             "trainer_tokens_per_gpu_s": 1.0}, "gpus")])
def test_bad_arguments(kwargs, field):
    args = dict(group_size=4, prompts_per_step=8, steps=10, signal_chance=CHANCE) | kwargs
    with pytest.raises(InputError) as e:
        run_cost(**args)
    assert e.value.field == field
