"""Both schema checkers (the test table and the library's validate_prime_rl) against known-good and
known-bad prime-rl configs (each bad one rejected by prime-rl 559b44772's own RLConfig when tried)."""

from __future__ import annotations

import copy

import pytest
from primerl_schema_table import check as table_check

from pick_a_method.trainers.prime_rl import validate_prime_rl

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


# Deliberate mistakes, each rejected by prime-rl 559b44772's real RLConfig, plus the two reasons it rejected the
# anchor's Async TOMLs (whileai 0.131's prime_rl_config: loss type icepop, and an `eps` key under ipo).
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
    # overrides prime-rl rejected that the project once let through
    "unknown renderer": lambda c: _set(c, "orchestrator.renderer.name", "qwen2"),
    "lora rank conflict": lambda c: _set(_set(c, "trainer.model.lora", {"rank": 16}), "orchestrator.model.lora", {"rank": 8}),
    "multi-node without slurm": lambda c: _set(c, "deployment", {"type": "multi_node", "num_train_nodes": 2}),
    "lora with nccl": lambda c: _set(_set(c, "trainer.model.lora", {"rank": 16}), "weight_broadcast", {"type": "nccl"}),
    "algo on an eval source": lambda c: _set(c, "orchestrator.eval", {"source": [
        {"algo": {"type": "grpo"}, "env": {"taskset": {"id": "reverse-text"}}}]}),
}

# Rules of prime-rl's config classes that only the library checks (each seen rejected by RLConfig at 559b44772).
LIBRARY_MISTAKES = {
    "renderer auto for a fine-tune": lambda c: c["orchestrator"].pop("renderer") and c,
    "reverse-text split key": lambda c: _set(c, "orchestrator.train.source.0.env.taskset.split", "test"),
    "lora alpha conflict": lambda c: _set(_set(c, "trainer.model.lora", {"alpha": 32}), "orchestrator.model.lora", {"alpha": 8}),
    "lora rank over 512": lambda c: _set(c, "trainer.model.lora", {"rank": 1024}),
    "ckpt on one side": lambda c: c.pop("ckpt") and _set(c, "trainer.ckpt", {"interval": 5}),
    "ckpt intervals differ": lambda c: c.pop("ckpt") and _set(_set(c, "trainer.ckpt", {"interval": 5}),
                                                              "orchestrator.ckpt", {"interval": 6}),
    "resume step 0": lambda c: _set(c, "resume", {"step": 0}),
    "orchestrator output_dir": lambda c: _set(c, "orchestrator.output_dir", "/x"),
    "cosine warmup >= max_steps": lambda c: _set(c, "trainer.scheduler", {"type": "cosine", "warmup_steps": 20}),
    "linear past max_steps": lambda c: _set(c, "trainer.scheduler", {"type": "linear", "warmup_steps": 10, "decay_steps": 15}),
    "tp does not divide infer gpus": lambda c: _set(_set(c, "deployment", {"num_infer_gpus": 3, "num_train_gpus": 1}),
                                                    "inference.vllm", {"tensor_parallel_size": 2}),
    "inference on 0 gpus": lambda c: _set(c, "deployment", {"num_infer_gpus": 0, "num_train_gpus": 1}),
    "max_inflight below group": lambda c: _set(c, "orchestrator.concurrency", {"max_inflight": 8}),
    "duplicate eval names": lambda c: _set(c, "orchestrator.eval", {"source": [
        {"env": {"taskset": {"id": "reverse-text"}}}, {"env": {"taskset": {"id": "reverse-text"}}}]}),
    "gsm8k split validation": lambda c: _set(c, "orchestrator.train.source.0.env.taskset", {"id": "gsm8k", "split": "validation"}),
}


@pytest.mark.parametrize("mistake", LIBRARY_MISTAKES)
def test_library_refuses_what_prime_rl_refuses(examples, mistake):
    assert validate_prime_rl(LIBRARY_MISTAKES[mistake](_base(examples))), mistake


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("mistake", MISTAKES)
def test_deliberate_mistakes_fail(examples, checker, mistake):
    bad = MISTAKES[mistake](_base(examples))
    assert CHECKERS[checker](bad), f"{checker} accepted: {mistake}"


ACCEPTED = {
    # prime-rl 559b44772's RLConfig accepts these at config time (tried).
    "grpo group_size 1": lambda c: _set(_set(c, "orchestrator.group_size", 1), "orchestrator.batch_size", 32),
    "extra vllm key": lambda c: _set(c, "inference.vllm.some_engine_arg", 3),
    "taskset-specific key": lambda c: _set(c, "orchestrator.train.source.0.env.taskset.dataset_split", "train"),
    "ipo loss": lambda c: _set(c, "trainer.loss", {"type": "ipo", "ipo_threshold": 0.1}),
    "custom loss": lambda c: _set(c, "trainer.loss", {"type": "custom", "import_path": "m.f", "kwargs": {"a": 1}}),
    # accepted by RLConfig at 559b44772 (checked against the real classes)
    "multi-node with slurm": lambda c: _set(_set(c, "deployment", {"type": "multi_node", "num_train_nodes": 2,
                                                                   "num_infer_nodes": 2}), "slurm", {"job_name": "x"}),
    "llama-3 renderer": lambda c: _set(_set(c, "model.name", "meta-llama/Llama-3.1-8B-Instruct"), "orchestrator.renderer.name", "llama-3"),
    "reverse-text dataset_split": lambda c: _set(c, "orchestrator.train.source.0.env.taskset.dataset_split", "test"),
    "wandb entity": lambda c: _set(c, "monitors.wandb.entity", "team"),
    "cosine schedule": lambda c: _set(c, "trainer.scheduler", {"type": "cosine", "warmup_steps": 5, "min_lr": 1e-7}),
    "vllm max_model_len": lambda c: _set(c, "inference.vllm", {"max_model_len": 4096, "gpu_memory_utilization": 0.8}),
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
