"""Shared fixtures for the methods tests: small random batches as lists of dicts."""

import random

import pytest


def random_batch(seed=0, n=8, min_len=2, max_len=12, obs=0.3, drift=0.05, rewards="binary", values=True):
    """A list of trajectory dicts with observation tokens and a small sampler/learner drift."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        length = rnd.randint(min_len, max_len)
        lp = [-rnd.uniform(0.01, 3.0) for _ in range(length)]
        blp = [min(0.0, x + rnd.gauss(0, drift)) for x in lp]
        mask = [rnd.random() > obs for _ in range(length)]
        mask[rnd.randrange(length)] = True
        r = float(rnd.random() < 0.5) if rewards == "binary" else rnd.uniform(0, 1)
        t = {"reward": r, "logprobs": lp, "behavior_logprobs": blp, "action_mask": mask}
        if values:
            t["values"] = [rnd.uniform(0.05, 0.95) for _ in range(length)]
        out.append(t)
    return out


@pytest.fixture
def batch_factory():
    return random_batch
