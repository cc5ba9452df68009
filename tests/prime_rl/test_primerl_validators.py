"""Both schema checkers (the test table and the library's validate_prime_rl) against known-good and
known-bad prime-rl configs (reference/prime-rl.md section 7)."""

from __future__ import annotations

import copy

import pytest
from primerl_schema_table import check as table_check

from pick_a_method.methods.prime_rl import validate_prime_rl

CHECKERS = {"table": table_check, "library": validate_prime_rl}


@pytest.mark.parametrize("checker", CHECKERS)
def test_known_good_examples_pass(examples, checker):
    for name, config in examples.items():
        assert CHECKERS[checker](config) == [], name


def _base(examples):
    return copy.deepcopy(examples["grpo_reverse-text.toml"])


def _set(config, dotted, value):
    node = config
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[parts[-1]] = value
    return config


# The deliberate mistakes of prime-rl.md section 7 (each rejected by prime-rl's real RLConfig), plus
# the two reasons the anchor's Async TOMLs were rejected (section 7, "whileai's generated TOMLs").
MISTAKES = {
    "rollouts_per_example": lambda c: _set(c, "orchestrator.rollouts_per_example", 16),
    "max_tokens": lambda c: _set(c, "orchestrator.train.sampling.max_tokens", 128),
    "max_async_level": lambda c: _set(c, "orchestrator.max_async_level", 2),
    "top-level wandb": lambda c: _set(c, "wandb.project", "x"),
    "token_mask_high": lambda c: _set(c, "trainer.loss.token_mask_high", 8.0),
    "type ppo": lambda c: _set(c, "orchestrator.algo.type", "ppo"),
    "decay on grpo": lambda c: _set(c, "orchestrator.algo", {"type": "grpo", "decay": 0.9}),
    "rae decay 1.0": lambda c: _set(c, "orchestrator.algo", {"type": "rae", "decay": 1.0}),
    "opd without teacher": lambda c: _set(c, "orchestrator.algo", {"type": "opd"}),
    "opd teacher policy": lambda c: _set(c, "orchestrator.algo", {"type": "opd", "teacher": "policy"}),
    "batch not divisible": lambda c: _set(c, "orchestrator.batch_size", 100),
    "temperature 3.0": lambda c: _set(c, "orchestrator.train.sampling.temperature", 3.0),
    "ipo_threshold < 0": lambda c: _set(c, "trainer.loss", {"type": "ipo", "ipo_threshold": -0.1}),
    "4 + 6 GPUs on 8": lambda c: _set(c, "deployment", {"num_infer_gpus": 4, "num_train_gpus": 6}),
    "seq_len conflict": lambda c: _set(c, "orchestrator.seq_len", 1024),
    "unknown env.agent key": lambda c: _set(c, "orchestrator.train.source.0.env.agent.harnes", {"id": "null"}),
    "string for int": lambda c: _set(c, "orchestrator.batch_size", "128"),
    "loss type icepop": lambda c: _set(c, "trainer.loss", {"type": "icepop"}),
    "ipo eps": lambda c: _set(c, "trainer.loss", {"type": "ipo", "eps": 0.3}),
    "no orchestrator": lambda c: c.pop("orchestrator") and c,
    "empty taskset id": lambda c: _set(c, "orchestrator.train.source.0.env.taskset.id", ""),
    "wandb offline": lambda c: _set(c, "monitors.wandb.offline", True),
}


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("mistake", MISTAKES)
def test_deliberate_mistakes_fail(examples, checker, mistake):
    bad = MISTAKES[mistake](_base(examples))
    assert CHECKERS[checker](bad), f"{checker} accepted: {mistake}"


ACCEPTED = {
    # prime-rl accepts these at config time (section 7, "Accepted as expected").
    "grpo group_size 1": lambda c: _set(_set(c, "orchestrator.group_size", 1), "orchestrator.batch_size", 32),
    "extra vllm key": lambda c: _set(c, "inference.vllm.some_engine_arg", 3),
    "taskset-specific key": lambda c: _set(c, "orchestrator.train.source.0.env.taskset.dataset_split", "train"),
    "ipo loss": lambda c: _set(c, "trainer.loss", {"type": "ipo", "ipo_threshold": 0.1}),
    "custom loss": lambda c: _set(c, "trainer.loss", {"type": "custom", "import_path": "m.f", "kwargs": {"a": 1}}),
}


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("case", ACCEPTED)
def test_valid_variants_pass(examples, checker, case):
    assert CHECKERS[checker](ACCEPTED[case](_base(examples))) == []


def test_library_messages_name_the_key_and_a_suggestion(examples):
    bad = _set(_base(examples), "orchestrator.rollouts_per_example", 16)
    (msg,) = validate_prime_rl(bad)
    assert msg.startswith("orchestrator.rollouts_per_example:")
    assert "not a key" in msg
    bad = _set(_base(examples), "orchestrator.batch_sise", 16)
    assert "did you mean 'batch_size'" in validate_prime_rl(bad)[0]
