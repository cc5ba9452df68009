"""prime_rl_config: the written keys, their types and values, for every method and variant."""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys
import tomllib

import pytest
from primerl_schema_table import check as table_check
from primerl_schema_table import leaf_paths

from pick_a_method import methods
from pick_a_method.common.trainers import BATCH, STEPS
from pick_a_method.methods import defaults as D
from pick_a_method.routing import model_params_b
from pick_a_method.trainers.prime_rl import (
    PRIME_RL_COMMIT,
    PRIME_RL_TAG,
    PrimeRLConfig,
    prime_rl_config,
    validate_prime_rl,
)

REPO = Path(__file__).resolve().parents[2]  # this file's own: tests/trainers has a conftest too

TS, MODEL = "refunds-v1", "Qwen/Qwen3-8B"
TEACHER = {"teacher": "Qwen/Qwen3-32B", "base_url": "http://localhost:8001/v1"}


def make(method, *, knobs=None, **kw):
    kw.setdefault("model", MODEL)
    return prime_rl_config(TS, method, knobs=knobs, **kw)


# Every method and variant the writer accepts (name, knobs, extra arguments).
VARIANTS = {
    "grpo": ("grpo", None, {}),
    "grpo full": ("grpo", None, {"lora": False}),
    "grpo k16": ("grpo", {"group_size": 16}, {}),
    "max_rl": ("max_rl", None, {}),
    "rae": ("rae", None, {}),
    "rae k1": ("rae", {"group_size": 1}, {}),
    "rae decay": ("rae", {"decay": 0.5}, {}),
    "opd": ("opd", TEACHER, {}),
    "opd no url": ("opd", {"teacher": "Qwen/Qwen3-32B"}, {}),
    "opd fkl full": ("opd", {**TEACHER, "divergence": "forward_kl", "top_k": 8}, {"lora": False}),
    "opd long": ("opd", {**TEACHER, "max_tokens": 16384, "samples": 8}, {}),
    "opsd": ("opsd", None, {}),
    "opsd reference": ("opsd", {"privileged": "reference"}, {}),
    "opsd live fkl": ("opsd", {"anchor": "live", "divergence": "forward_kl"}, {}),
    "async grpo": ("async", {"method": "grpo"}, {}),
    "async max_rl 4": ("async", {"method": "max_rl", "off_policy_steps": 4, "ipo_threshold": 0.2}, {}),
    "async rae": ("async", {"method": {"name": "rae", "decay": 0.9, "group_size": 1}}, {}),
    "async opd": ("async", {"method": {"name": "opd", **TEACHER}}, {}),
    "async opsd": ("async", {"method": "opsd", "off_policy_steps": 2}, {}),
    "gpus 5": ("grpo", None, {"gpus": 5}),
    "gpus split": ("grpo", None, {"gpus": {"inference": 1, "trainer": 3}}),
    "kuhn seats": ("rae", {"group_size": 1}, {}),
}


def build(variant):
    name, knobs, extra = VARIANTS[variant]
    if variant == "kuhn seats":
        return prime_rl_config("kuhn-poker", name, model="Qwen/Qwen3-0.6B", knobs=knobs, **extra)
    return make(name, knobs=knobs, **extra)


# ------------------------------------------------------------------------------------------------
# Every generated config is valid: both checkers, TOML round trip, key paths traceable to the
# known-good examples or to prime-rl's config classes at 559b44772.
# ------------------------------------------------------------------------------------------------

# Key paths the writer emits that no known-good example shows; each is a field of prime-rl's config classes at
# 559b44772 (packages/prime-rl-configs), named beside it.
DOCUMENTED_BEYOND_EXAMPLES = {
    "deployment.num_infer_gpus": "RLConfig.deployment (single_node)",
    "deployment.num_train_gpus": "RLConfig.deployment (single_node)",
    "deployment.gpus_per_node": "RLConfig.deployment (single_node)",
    "orchestrator.max_off_policy_steps": "OrchestratorConfig",
    "orchestrator.algo.decay": "the rae algorithm config",
    "orchestrator.algo.template": "the opsd algorithm config",
    "orchestrator.train.sampling.temperature": "OrchestratorConfig, train sampling",
    "orchestrator.eval.sampling.temperature": "OrchestratorConfig, eval sampling",
    "orchestrator.eval.group_size": "OrchestratorConfig, eval",
    "trainer.loss.type": "TrainerConfig.loss (default | ipo | custom)",
    "trainer.loss.ipo_threshold": "TrainerConfig.loss, type ipo",
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_is_valid(variant, examples):
    res = build(variant)
    assert isinstance(res, PrimeRLConfig)
    assert table_check(res.config) == []
    assert validate_prime_rl(res.config) == []
    assert tomllib.loads(res.text) == res.config
    assert res.text.startswith("# prime-rl `rl` config:")
    seen = set().union(*(leaf_paths(c) for c in examples.values()))
    beyond = set(leaf_paths(res.config)) - seen
    assert beyond <= set(DOCUMENTED_BEYOND_EXAMPLES), sorted(beyond - set(DOCUMENTED_BEYOND_EXAMPLES))


RUN_KNOBS = {
    "all run knobs": dict(wandb={"project": "p", "name": "n", "entity": "e"}, checkpoint={"interval": 10, "keep_last": 2,
                          "resume": True}, run_name="r1", output_dir="/o", max_model_len=8192,
                          gpu_memory_utilization=0.8, eval_split={"dataset_split": "test"}, warmup_steps=5,
                          scheduler={"type": "linear", "warmup_steps": 5, "decay_steps": 20, "min_lr": 1e-7}),
    "offline multi-node": dict(wandb={"project": "p", "offline": True}, nodes=3, gpus=4,
                               slurm={"partition": "gpu", "account": "a", "time": "1:00:00"}),
}


@pytest.mark.parametrize("variant", ["grpo", "opd", "opsd", "async grpo", "rae", "gpus split", *RUN_KNOBS])
def test_every_emitted_key_name_is_documented(variant, documented_keys):
    res = make("grpo", **RUN_KNOBS[variant]) if variant in RUN_KNOBS else build(variant)
    for path in leaf_paths(res.config):
        for part in path.replace("[]", "").split("."):
            assert part in documented_keys, (path, part)


def test_structure_matches_the_known_good_grpo_example(examples):
    good = examples["grpo_reverse-text.toml"]
    res = make("grpo")
    src, good_src = res.config["orchestrator"]["train"]["source"][0], good["orchestrator"]["train"]["source"][0]
    assert set(src) == set(good_src) == {"name", "env"}
    assert set(src["env"]) == set(good_src["env"]) == {"taskset", "agent"}
    assert src["env"]["agent"] == good_src["env"]["agent"] == {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    assert res.config["inference"] == good["inference"] == {}
    assert res.config["ckpt"] == good["ckpt"] == {}
    for key in ("max_steps", "seq_len", "model", "orchestrator", "trainer"):
        assert key in res.config and key in good


def test_kuhn_poker_uses_the_example_seats(examples):
    res = build("kuhn seats")
    good = examples["rae_kuhn-poker.toml"]
    env = res.config["orchestrator"]["train"]["source"][0]["env"]
    assert env == good["orchestrator"]["train"]["source"][0]["env"]
    assert set(env) == {"taskset", "player0", "player1"}


# ------------------------------------------------------------------------------------------------
# Values, per method
# ------------------------------------------------------------------------------------------------


def test_grpo_defaults():
    res = make("grpo")
    c = res.config
    assert res.verdict == "ready" and res.path is None
    assert res.method == "grpo" and res.model == MODEL and res.taskset == TS
    assert c["max_steps"] == STEPS == 100
    assert c["model"] == {"name": MODEL}
    assert c["deployment"] == {"num_infer_gpus": 1, "num_train_gpus": 1}
    assert res.gpus == {"inference": 1, "trainer": 1}
    o = c["orchestrator"]
    assert o["batch_size"] == BATCH == 64
    assert o["group_size"] == D.RL_ROLLOUTS_PER_PROMPT == 8
    assert o["max_off_policy_steps"] == D.ASYNC_OFF_POLICY_STEPS
    assert o["algo"] == {"type": "grpo"}
    assert o["train"]["sampling"] == {"temperature": D.RL_TEMPERATURE, "max_completion_tokens": D.RL_MAX_TOKENS}
    src = o["train"]["source"][0]
    assert src["name"] == TS and src["env"]["taskset"] == {"id": TS}
    assert o["eval"]["interval"] == 25 and o["eval"]["num_examples"] == D.PRIME_RL_EVAL_EXAMPLES
    assert o["eval"]["source"][0]["env"]["taskset"] == {"id": TS}
    assert c["trainer"]["optim"] == {"lr": D.PRIME_RL_LEARNING_RATE_LORA}
    assert c["trainer"]["model"]["lora"] == {"rank": D.TRAINING_LORA_RANK, "alpha": D.TRAINING_LORA_ALPHA}
    assert "loss" not in c["trainer"]  # prime-rl's default loss
    assert c["seq_len"] >= D.RL_MAX_TOKENS + 4096 and c["seq_len"] == D.PRIME_RL_SEQ_LEN
    assert res.honored == {"group_size": "orchestrator.group_size",
                           "renderer": "orchestrator.renderer.name (map: auto)"}  # Qwen/Qwen3-8B is in the map
    assert res.ignored == {}
    (held_in,) = res.warnings  # refunds-v1's eval reads its training tasks: said, with the argument that fixes it
    assert "not held out" in held_in and "eval_split=" in held_in
    assert res.command == "uv run rl @ grpo-prime-rl.toml"
    assert res.next_step.tool is None and res.next_step.command == res.command
    assert PRIME_RL_COMMIT.startswith("559b44772") and "559b44772" in res.trainer_version
    assert PRIME_RL_TAG in res.trainer_version and res.trainer_commit == PRIME_RL_COMMIT
    assert any("#3150" in n for n in res.notes)
    assert any("'refunds-v1' ends in '-v1'" in n for n in res.notes)


def test_full_weights_drop_lora_and_use_the_full_rate():
    c = make("grpo", lora=False).config
    assert "model" not in c["trainer"]
    assert c["trainer"]["optim"]["lr"] == D.PRIME_RL_LEARNING_RATE_FULL


def test_grpo_normalize_std_is_ignored_with_a_reason():
    res = make(methods.GRPO(normalize_std=True))
    assert "normalize_std" in res.ignored and "std" in res.ignored["normalize_std"]


def test_method_objects_names_and_mappings_agree():
    by_name = make("grpo", knobs={"group_size": 4}).config
    assert make(methods.GRPO(group_size=4)).config == by_name
    assert make({"name": "GRPO", "group_size": 4}).config == by_name
    assert make("MaxRL").config["orchestrator"]["algo"] == {"type": "max_rl"}


def test_rae_carries_decay_and_warns_at_one_rollout():
    res = make("rae", knobs={"group_size": 1, "decay": 0.9})
    o = res.config["orchestrator"]
    assert o["algo"] == {"type": "rae", "decay": 0.9} and o["group_size"] == 1
    assert res.honored["decay"] == "orchestrator.algo.decay"
    (ema, held_in) = res.warnings
    assert "EMA baseline" in ema and "0.9" in ema and "not held out" in held_in


def test_opd_keys_and_knobs():
    res = make("opd", knobs=TEACHER)
    o = res.config["orchestrator"]
    assert o["algo"] == {"type": "opd", "teacher": {"name": "Qwen/Qwen3-32B", "base_url": "http://localhost:8001/v1"}}
    assert o["group_size"] == D.OPD_SAMPLES
    assert o["train"]["sampling"] == {"temperature": D.OPD_TEMPERATURE, "max_completion_tokens": D.OPD_MAX_TOKENS}
    assert res.config["trainer"]["optim"]["lr"] == D.OPD_LEARNING_RATE_LORA
    assert res.config["seq_len"] >= D.OPD_MAX_TOKENS + 4096
    assert res.honored["teacher"] == "orchestrator.algo.teacher.name"
    assert res.honored["samples"] == "orchestrator.group_size"
    assert set(res.ignored) == {"top_k"}
    assert "Start the teacher server" in res.next_step.why
    assert any("Tokenizers not checked" in w for w in res.warnings)


def test_opd_variants():
    res = make("opd", knobs={**TEACHER, "divergence": "forward_kl", "top_k": 8, "learning_rate": 3e-5}, lora=False)
    assert set(res.ignored) == {"top_k", "divergence"} and "reverse KL" in res.ignored["divergence"]
    assert res.config["trainer"]["optim"]["lr"] == 3e-5
    assert make("opd", knobs=TEACHER, lora=False).config["trainer"]["optim"]["lr"] == D.OPD_LEARNING_RATE_FULL
    long = make("opd", knobs={**TEACHER, "max_tokens": 16384})
    assert long.config["seq_len"] >= 16384 + 4096 and long.config["seq_len"] % 1024 == 0
    no_url = make("opd", knobs={"teacher": "Qwen/Qwen3-32B"})
    assert no_url.config["orchestrator"]["algo"]["teacher"]["base_url"] == "http://localhost:8001/v1"
    assert any("no base_url" in w and "uv run inference" in w for w in no_url.warnings)
    spec = make("opd", knobs={"teacher": "Qwen/Qwen3-32B@http://teacher:9000/v1"})
    assert spec.config["orchestrator"]["algo"]["teacher"] == {"name": "Qwen/Qwen3-32B", "base_url": "http://teacher:9000/v1"}


def test_opd_tokenizer_agreement():
    assert not any("okenizer" in w for w in make("opd", knobs=TEACHER, tokenizers_match=True).warnings)
    with pytest.raises(ValueError, match="share a tokenizer") as err:
        make("opd", knobs=TEACHER, tokenizers_match=False)
    assert "Fix:" in str(err.value)
    from pick_a_method.methods.tokenizer_check import TokenizerCheck

    base = dict(next_step={"why": "test"}, warnings=[], teacher="Qwen/Qwen3-32B", student=MODEL)
    diff = TokenizerCheck(verdict="different", summary="Different tokenizers (sizes 3 vs 4).", **base)
    with pytest.raises(ValueError, match="sizes 3 vs 4"):
        make("opd", knobs=TEACHER, tokenizers_match=diff)
    with pytest.raises(ValueError, match="share a tokenizer"):
        make("opd", knobs=TEACHER, tokenizers_match=diff.model_dump())  # as JSON clients send it
    unknown = TokenizerCheck(verdict="unknown", summary="Could not load the teacher.", **base)
    assert any("inconclusive" in w for w in make("opd", knobs=TEACHER, tokenizers_match=unknown).warnings)
    other = TokenizerCheck(verdict="same", summary="Same.", **{**base, "teacher": "x/other"})
    assert any("compared x/other" in w for w in make("opd", knobs=TEACHER, tokenizers_match=other).warnings)
    assert any("OPD only" in w for w in make("grpo", tokenizers_match=True).warnings)
    with pytest.raises(ValueError, match="tokenizers_match"):
        make("opd", knobs=TEACHER, tokenizers_match="yes")


def test_opsd_keys_and_knobs():
    res = make("opsd")
    o = res.config["orchestrator"]
    assert o["algo"] == {"type": "opsd", "demo_key": "demonstration", "template": D.OPSD_TEMPLATE}
    assert o["group_size"] == D.OPSD_SAMPLES == 1
    assert res.config["trainer"]["optim"]["lr"] == D.OPSD_LEARNING_RATE
    assert res.honored["privileged"] == "orchestrator.algo.demo_key"
    assert set(res.ignored) == {"anchor"} and "live" in res.ignored["anchor"]
    assert any("thinking model" in w for w in res.warnings)  # Qwen3-8B thinks by default
    ref = make("opsd", knobs={"privileged": "reference"})
    assert ref.config["orchestrator"]["algo"]["demo_key"] == "reference"
    live = make("opsd", knobs={"anchor": "live", "divergence": "forward_kl"})
    assert "anchor" in live.honored and set(live.ignored) == {"divergence"}
    assert make("opsd", knobs={"privileged": "info.answer"}).config["orchestrator"]["algo"]["demo_key"] == "answer"
    with pytest.raises(ValueError, match="one key"):
        make("opsd", knobs={"privileged": "meta.answer.text"})


@pytest.mark.parametrize(
    ("model", "small", "thinking"),
    [
        ("Qwen/Qwen3-0.6B", True, True),
        ("Qwen/Qwen3-8B", False, True),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", False, False),
        ("meta-llama/Llama-3.1-8B-Instruct", False, False),
        ("google/gemma-2-2b-it", True, False),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", False, True),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", False, False),
    ],
)
def test_opsd_size_and_thinking_warnings(model, small, thinking):
    res = make("opsd", model=model)
    assert any("needs in-context learning" in w for w in res.warnings) == small
    assert any("thinking model" in w for w in res.warnings) == thinking


def test_opsd_unreadable_size_warns():
    assert any("Could not read the size" in w for w in make("opsd", model="my-org/policy").warnings)


@pytest.mark.parametrize(
    ("name", "size"),
    [("Qwen/Qwen3-0.6B", 0.6), ("Qwen3-30B-A3B", 30.0), ("gemma-2-2b-it", 2.0), ("Mixtral-8x7B-v0.1", 56.0),
     ("SmolLM2-360M-Instruct", 0.36), ("gpt2", None), ("Llama-3.1-70B", 70.0)],
)
def test_params_from_model_name(name, size):
    assert model_params_b(name) == (pytest.approx(size) if size is not None else None)


def test_async_grpo_writes_the_ipo_loss():
    res = make("async", knobs={"method": "grpo", "off_policy_steps": 4, "ipo_threshold": 0.2})
    c = res.config
    assert res.method == "async grpo"
    assert c["orchestrator"]["max_off_policy_steps"] == 4
    assert c["trainer"]["loss"] == {"type": "ipo", "ipo_threshold": 0.2}
    assert res.honored["off_policy_steps"] == "orchestrator.max_off_policy_steps"
    assert res.honored["ipo_threshold"] == "trainer.loss.ipo_threshold"
    assert res.honored["method.group_size"] == "orchestrator.group_size"
    assert {"ratio", "cap"} <= set(res.ignored)
    assert any("#2798" in n for n in res.notes)
    assert "eps" not in json.dumps(c["trainer"]["loss"])  # the anchor's rejected key
    assert make("async grpo").config == make("async", knobs={"method": "grpo"}).config
    assert make(methods.Async(method="grpo")).config["trainer"]["loss"]["ipo_threshold"] == D.ASYNC_IPO_THRESHOLD


def test_async_distillation_has_no_rl_loss_to_correct():
    for inner in ({"name": "opd", **TEACHER}, "opsd"):
        res = make("async", knobs={"method": inner, "off_policy_steps": 2})
        assert "loss" not in res.config["trainer"]
        assert res.config["orchestrator"]["max_off_policy_steps"] == 2
        assert "correction" in res.ignored and "ref_kl" in res.ignored["correction"]
        assert res.method in ("async opd", "async opsd")


def test_async_zero_staleness_warns():
    assert any("off_policy_steps=0" in w for w in make("async", knobs={"off_policy_steps": 0}).warnings)


# ------------------------------------------------------------------------------------------------
# GPUs, steps, batch
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("gpus", "split"), [(2, (1, 1)), (3, (1, 2)), (4, (2, 2)), (5, (2, 3)), (8, (4, 4))])
def test_gpu_split(gpus, split):
    res = make("grpo", gpus=gpus)
    assert (res.gpus["inference"], res.gpus["trainer"]) == split
    assert res.config["deployment"] == {"num_infer_gpus": split[0], "num_train_gpus": split[1]}


def test_more_than_one_node_of_gpus_sets_gpus_per_node_and_its_advice_works():
    res = make("grpo", gpus=16)
    assert res.config["deployment"]["gpus_per_node"] == 16
    (advice,) = [w for w in res.warnings if "several machines" in w]
    assert "nodes={'inference': 1, 'trainer': 1}, gpus=8" in advice
    followed = make("grpo", nodes={"inference": 1, "trainer": 1}, gpus=8)  # the call the warning names
    assert followed.config["deployment"] == {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 1,
                                             "gpus_per_node": 8}
    assert "slurm" in followed.config and validate_prime_rl(followed.config) == []
    assert not any("several machines" in w for w in followed.warnings)


def test_steps_set_max_steps_and_eval_interval():
    c = make("grpo", steps=7, batch=16, knobs={"group_size": 4}).config
    assert c["max_steps"] == 7 and c["orchestrator"]["eval"]["interval"] == 1
    assert c["orchestrator"]["batch_size"] == 16


def test_json_numbers_are_accepted():
    c = make("grpo", steps=50.0, batch=32.0, gpus=2.0).config
    assert c["max_steps"] == 50 and isinstance(c["max_steps"], int)


# ------------------------------------------------------------------------------------------------
# Overrides
# ------------------------------------------------------------------------------------------------


def test_overrides_set_delete_and_merge():
    res = make(
        "grpo",
        overrides={
            "orchestrator.renderer.name": "default",
            "orchestrator.train.source.0.env.taskset.split": "train",
            "orchestrator.eval": None,
            "trainer.optim": {"weight_decay": 0.0},
            "seq_len": 16384,
        },
    )
    c = res.config
    assert c["orchestrator"]["renderer"] == {"name": "default"}
    assert c["orchestrator"]["train"]["source"][0]["env"]["taskset"] == {"id": TS, "split": "train"}
    assert "eval" not in c["orchestrator"]
    assert c["trainer"]["optim"] == {"lr": D.PRIME_RL_LEARNING_RATE_LORA, "weight_decay": 0.0}
    assert c["seq_len"] == 16384
    assert "orchestrator.renderer.name" in res.honored
    assert tomllib.loads(res.text) == c and validate_prime_rl(c) == []
    assert not any("renderer] is left" in n for n in res.notes)


def test_custom_loss_override_is_written():
    loss = {"type": "custom", "import_path": "my_losses.icepop", "kwargs": {"low": 0.5, "high": 5.0}}
    res = make("async", knobs={"method": "grpo"}, overrides={"trainer.loss": None})
    assert "loss" not in res.config["trainer"]
    res = make("grpo", overrides={"trainer.loss": loss})
    assert res.config["trainer"]["loss"] == loss and table_check(res.config) == []


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"orchestrator.rollouts_per_example": 8}, "not a key"),
        ({"orchestrator.batch_sise": 8}, "did you mean 'batch_size'"),
        ({"orchestrator.batch_size": "64"}, "must be an integer"),
        ({"orchestrator.batch_size": 60}, "divisible"),
        ({"orchestrator.algo.type": "max_rl"}, "change the algorithm"),
        ({"orchestrator.train.source.3.name": "x"}, "index below 1"),
        ({"trainer.loss.type": "icepop"}, "default, ipo, custom"),
        ({"": 1}, "dotted"),
        ({"trainer.optim.lr": object()}, "values must be"),
    ],
)
def test_bad_overrides_are_refused(overrides, match):
    with pytest.raises(ValueError, match=match):
        make("grpo", overrides=overrides)


def test_override_to_one_rollout_is_refused_for_grpo():
    with pytest.raises(ValueError, match="group_size 1"):
        make("grpo", overrides={"orchestrator.group_size": 1})


# ------------------------------------------------------------------------------------------------
# Refusals: reason and fix
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["flash_reinforce", "FlashReinforce", "sao", "bpco"])
def test_single_rollout_methods_are_refused(name):
    with pytest.raises(ValueError) as err:
        make(name)
    msg = str(err.value)
    assert "prime-rl cannot run" in msg and "group-relative" in msg and "EMA" in msg
    assert "batch-mean baseline" in msg and "trust region" in msg and "critic" in msg
    assert "Fix:" in msg and "update" in msg and "'rae'" in msg and "preview_update" in msg


def test_grading_and_adaptive_sampling_are_refused():
    with pytest.raises(ValueError, match="(?i)groupwise.*Fix:"):
        make("groupwise_grading")
    with pytest.raises(ValueError, match="adaptive sampling.*Fix:"):
        make("reinforce_ada")


@pytest.mark.parametrize("correction", ["icepop", "tis"])
def test_corrections_prime_rl_lacks_are_refused(correction):
    with pytest.raises(ValueError) as err:
        make("async", knobs={"method": "grpo", "correction": correction})
    msg = str(err.value)
    assert f"no {correction} correction" in msg and "default" in msg and "ipo" in msg and "custom" in msg
    assert "correction='ipo'" in msg and "import_path" in msg


@pytest.mark.parametrize("name", ["grpo", "max_rl"])
def test_group_relative_at_one_rollout_is_refused(name):
    with pytest.raises(ValueError) as err:
        make(name, knobs={"group_size": 1})
    msg = str(err.value)
    assert "every advantage is 0" in msg and "method='rae'" in msg and "group_size >= 4" in msg
    with pytest.raises(ValueError, match="every advantage is 0"):
        make("async", knobs={"method": {"name": name, "group_size": 1}})


def test_small_groups_warn():
    assert any("unanimous" in w for w in make("grpo", knobs={"group_size": 2}).warnings)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gpus": 1}, "at least 2"),
        ({"gpus": 0}, "at least 2"),
        ({"gpus": "two"}, "whole number"),
        ({"gpus": {"inference": 0, "trainer": 1}}, "at least 2"),
        ({"gpus": {"inference": 1}}, "the trainer GPUs are missing"),
        ({"gpus": {"inference": 1, "cpu": 1}}, "exactly 'inference' and 'trainer'"),
        ({"model": None}, "model is required"),
        ({"model": ""}, "model is required"),
        ({"model": "Qwen/Qwen3-8B\n[x]"}, "one line"),
        ({"steps": 0}, "steps must be >= 1"),
        ({"batch": 0}, "batch must be >= 1"),
        ({"steps": True}, "whole number"),
        ({"batch": 60}, r"divisible.*56.*64|divisible"),
        ({"lora": "yes"}, "lora must be"),
        ({"overrides": ["x"]}, "overrides must be a mapping"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make("grpo", **kwargs)


def test_batch_not_a_multiple_names_group_size():
    with pytest.raises(ValueError, match=r"batch_size \(60\) must be divisible by orchestrator.group_size \(8\)") as err:
        make("grpo", batch=60)
    assert "batch=56 or batch=64" in str(err.value)
    with pytest.raises(ValueError, match="batch=8"):
        make("grpo", batch=4)
    with pytest.raises(ValueError, match="divisible"):
        make("opd", knobs=TEACHER, batch=6)  # samples=4


@pytest.mark.parametrize("taskset", ["", "  ", "../x", "/data/tasks", "a b", "x;rm", "-x", "a/b/c", None, 3])
def test_bad_taskset_ids_are_refused(taskset):
    with pytest.raises(ValueError, match="taskset"):
        prime_rl_config(taskset, "grpo", model=MODEL)


@pytest.mark.parametrize("taskset", ["reverse-text", "gsm8k", "owner/name@1.0.2", "my.org/my_tasks-v2@2.0.0-rc.1"])
def test_good_taskset_ids(taskset):
    res = prime_rl_config(taskset, "grpo", model=MODEL)
    assert res.config["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == taskset
    assert not any("ends in '-v1'" in n for n in res.notes)


def test_unknown_methods_and_knob_misuse_are_refused():
    with pytest.raises(ValueError, match="unknown method"):
        make("ppo")
    with pytest.raises(ValueError, match="method must be"):
        make(None)
    with pytest.raises(ValueError, match="knobs apply only"):
        make(methods.GRPO(), knobs={"group_size": 4})
    with pytest.raises(ValueError, match="group_size"):
        make("grpo", knobs={"group_size": 0})
    with pytest.raises(ValueError, match="knobs must be a mapping"):
        make("grpo", knobs=[1])


# ------------------------------------------------------------------------------------------------
# The MCP pass-through: plain JSON arguments in, a JSON-able result out
# ------------------------------------------------------------------------------------------------

ROUTER_CALLS = [
    {"taskset": "refunds-v1", "method": "grpo", "model": "Qwen/Qwen3-8B"},
    {"taskset": "refunds-v1", "method": "opd", "model": "Qwen/Qwen3-8B",
     "knobs": {"teacher": "Qwen/Qwen3-32B", "base_url": "http://localhost:8001/v1"}},
    {"taskset": "refunds-v1", "method": "opsd", "model": "Qwen/Qwen3-8B", "knobs": {"privileged": "reference"}},
    {"taskset": "refunds-v1", "method": "rae", "model": "Qwen/Qwen3-8B", "knobs": {"group_size": 1}},
    {"taskset": "refunds-v1", "method": "async", "model": "Qwen/Qwen3-8B",
     "knobs": {"method": "grpo", "correction": "ipo"}},
]


@pytest.mark.parametrize("call", ROUTER_CALLS, ids=lambda c: c["method"])
def test_router_arguments_pass_through_unchanged(call):
    args = json.loads(json.dumps(call))  # exactly what an MCP client would send
    res = prime_rl_config(**args)
    assert res.verdict == "ready"
    assert res.method in ("grpo", "opd", "opsd", "rae", "async grpo")
    dumped = json.loads(json.dumps(res.model_dump()))
    assert dumped["config"] == tomllib.loads(res.text)
    assert PrimeRLConfig.model_validate(dumped) == res
    assert validate_prime_rl(res.config) == [] and table_check(res.config) == []
    assert args == call  # nothing mutated


def test_same_arguments_give_the_same_text():
    assert make("opd", knobs=TEACHER).text == make("opd", knobs=TEACHER).text


def test_overrides_do_not_mutate_the_callers_dict():
    overrides = {"trainer.optim": {"weight_decay": 0.0}}
    make("grpo", overrides=overrides)
    assert overrides == {"trainer.optim": {"weight_decay": 0.0}}


def test_import_pulls_in_neither_torch_nor_transformers():
    code = (
        "import sys, pick_a_method.trainers.prime_rl as prime_rl, pick_a_method.methods.tokenizer_check\n"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "prime_rl.prime_rl_config('x', 'opd', model='m/M-8B', knobs={'teacher': 't/T'})\n"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # library code never prints


@pytest.mark.parametrize("knob, value, words", [("steps", 2**63, r"at most 2\*\*63 - 1"),
                                                 ("batch", 10**5000, "about 5000 digits"),
                                                 ("steps", 0, ">= 1")], ids=["2**63", "10**5000", "0"])
def test_integer_knobs_stay_inside_toml(knob, value, words):
    with pytest.raises(ValueError, match=words) as err:
        prime_rl_config(TS, "grpo", model=MODEL, **{knob: value})
    assert str(err.value).startswith(knob)
