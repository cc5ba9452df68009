"""What a real run needs: each knob lands where prime-rl's schema reads it and shows in
`honored`; prime-rl's cross-field rules refuse before anything is written; every "do this instead" works."""

from __future__ import annotations

import pytest
from primerl_schema_table import check as table_check

from pick_a_method.trainers.prime_rl import prime_rl_config, validate_prime_rl

MODEL = "Qwen/Qwen3-8B"


def make(taskset="reverse-text", method="grpo", **kw):
    kw.setdefault("model", MODEL)
    res = prime_rl_config(taskset, method, **kw)
    assert validate_prime_rl(res.config) == [] and table_check(res.config) == []
    return res


def test_wandb():
    res = make(wandb={"project": "p", "name": "n", "entity": "team"})
    assert res.config["monitors"] == {"wandb": {"project": "p", "name": "n", "entity": "team"}}
    assert res.honored["wandb.entity"] == "monitors.wandb.entity"
    assert any("WANDB_API_KEY" in n for n in res.needs)


def test_wandb_offline_goes_to_the_per_process_blocks():
    res = make(wandb={"project": "p", "offline": True})
    assert "monitors" not in res.config
    for side in ("trainer", "orchestrator"):
        assert res.config[side]["monitors"]["wandb"] == {"project": "p", "offline": True}
    assert res.honored["wandb.offline"].endswith(".offline")
    with pytest.raises(ValueError, match="monitors.wandb.offline: rejected under `rl`"):
        make(overrides={"monitors.wandb.offline": True})


def test_checkpoint_and_resume():
    res = make(checkpoint={"interval": 10, "keep_last": 2, "resume": True}, run_name="r1", output_dir="/scratch/o")
    c = res.config
    assert c["ckpt"] == {"interval": 10, "keep_last": 2} and c["resume"] == {}
    assert c["run"] == {"name": "r1"} and c["output_dir"] == "/scratch/o"
    assert res.honored["checkpoint.interval"] == "ckpt.interval" and res.honored["run_name"] == "run.name"
    assert make(checkpoint={"resume": 20}, run_name="r1").config["resume"] == {"step": 20}
    assert make(checkpoint={"resume": "/o/old/checkpoints/step_50"}).config["resume"] == {"dir": "/o/old/checkpoints/step_50"}
    assert "ckpt" not in make(checkpoint=False).config
    assert make().config["ckpt"] == {}  # a checkpoint at the end, as prime-rl's examples


def test_resume_without_a_run_name_is_refused_and_the_fix_works():
    with pytest.raises(ValueError, match="run_name='<the earlier run's name>'"):
        make(checkpoint={"resume": True})
    make(checkpoint={"resume": True}, run_name="earlier-run")
    with pytest.raises(ValueError, match="not a step folder"):
        make(checkpoint={"resume": "/o/old/checkpoints"})


def test_multi_node_through_slurm():
    res = make(nodes={"inference": 1, "trainer": 3}, gpus=4, slurm={"partition": "gpu", "account": "me"}, run_name="big")
    c = res.config
    assert c["deployment"] == {"type": "multi_node", "num_train_nodes": 3, "num_infer_nodes": 1, "gpus_per_node": 4}
    assert c["slurm"] == {"job_name": "big", "partition": "gpu", "account": "me"}
    assert res.gpus == {"inference": 4, "trainer": 12}
    assert res.honored["nodes"].startswith("deployment.num_train_nodes") and res.honored["gpus"] == "deployment.gpus_per_node"
    assert any("SLURM" in n for n in res.needs) and "under SLURM" in res.summary
    even = make(nodes=4)
    assert (even.config["deployment"]["num_infer_nodes"], even.config["deployment"]["num_train_nodes"]) == (2, 2)
    assert "gpus_per_node" not in even.config["deployment"]  # prime-rl's 8
    assert make(nodes=1).config["deployment"] == {"num_infer_gpus": 1, "num_train_gpus": 1}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"nodes": {"inference": 1}}, r"the trainer's machines are missing.*Fix: nodes=\{'inference': 1, 'trainer': <machines>\}"),
    ({"nodes": {"inference": 1, "trainers": 2}}, "exactly 'inference' and 'trainer'"),
    ({"nodes": 2, "gpus": {"inference": 1, "trainer": 1}}, "GPUs per node"),
    ({"nodes": 2, "slurm": {"partitoin": "gpu"}}, "unknown key"),
    ({"slurm": {"partitoin": "gpu"}}, "unknown key"),
])
def test_node_arguments_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(**kwargs)


@pytest.mark.parametrize("nodes", [None, 1])
def test_slurm_on_one_node(nodes):
    # prime-rl submits a single_node deployment through SLURM too (configs/rl.py, auto_setup_slurm_template:
    # single_node_rl.sbatch.j2); the GPU split stays single-node.
    res = make(slurm={"partition": "gpu"}, nodes=nodes, gpus=8, run_name="one")
    assert res.config["slurm"] == {"job_name": "one", "partition": "gpu"}
    assert res.config["deployment"] == {"num_infer_gpus": 4, "num_train_gpus": 4, "gpus_per_node": 8}
    assert res.honored["slurm.partition"] == "slurm.partition" and any("SLURM" in n for n in res.needs)
    assert table_check(res.config) == []


@pytest.mark.parametrize("gpus", [2, 3, {"inference": 1, "trainer": 4}, 12])
def test_slurm_on_one_node_asks_for_the_gpus_the_run_uses(gpus):
    # prime-rl's single_node_rl.sbatch.j2 asks SLURM for --gres=gpu:{{ gpus_per_node }} (prime-rl's default 8): a 2-GPU
    # run that leaves it out holds 8 GPUs.
    res = make(slurm={"partition": "gpu"}, gpus=gpus)
    dep = res.config["deployment"]
    assert dep["gpus_per_node"] == dep["num_infer_gpus"] + dep["num_train_gpus"] == res.gpus["inference"] + res.gpus["trainer"]
    assert "gpus_per_node" in res.honored["gpus"] and any(f"gres gpu:{dep['gpus_per_node']}" in n for n in res.notes)
    assert "gpus_per_node" not in make(gpus=gpus if gpus != 12 else 4).config["deployment"]  # no SLURM: no sbatch


def test_multi_node_without_slurm_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=r"deployment.type = 'multi_node' needs \[slurm\]"):
        make(nodes=2, overrides={"slurm": None})


def test_vllm_knobs():
    res = make(max_model_len=12288, gpu_memory_utilization=0.85)
    assert res.config["inference"] == {"vllm": {"max_model_len": 12288, "gpu_memory_utilization": 0.85}}
    assert res.honored["max_model_len"] == "inference.vllm.max_model_len"
    assert any("above seq_len" in w for w in make(max_model_len=32768).warnings)
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        make(gpu_memory_utilization=1.5)


def test_eval_split_and_taskset():
    res = make(eval_split="test")
    ev = res.config["orchestrator"]["eval"]["source"][0]
    assert ev["env"]["taskset"] == {"id": "reverse-text", "dataset_split": "test"} and ev["name"] == "reverse-text-test"
    assert res.honored["eval_split"] == "orchestrator.eval.source.0.env.taskset.dataset_split"
    assert res.config["orchestrator"]["train"]["source"][0]["env"]["taskset"] == {"id": "reverse-text"}
    other = make(eval_taskset="gsm8k", eval_split="test")
    assert other.config["orchestrator"]["eval"]["source"][0]["env"]["taskset"] == {"id": "gsm8k", "split": "test"}
    assert any("not held out" in w for w in make(eval_split="train").warnings)
    with pytest.raises(ValueError, match="the splits train, test"):
        make(taskset="gsm8k", eval_split="validation")


def test_gsm8k_trains_on_its_train_split():
    res = make(taskset="gsm8k")  # gsm8k's own default split is "test"
    assert res.config["orchestrator"]["train"]["source"][0]["env"]["taskset"] == {"id": "gsm8k", "split": "train"}


def test_eval_split_of_an_unknown_taskset_asks_for_the_key_and_the_fix_works():
    with pytest.raises(ValueError, match=r"eval_split=\{'<its split key>': 'test'\}"):
        make(taskset="refunds", eval_split="test")
    res = make(taskset="refunds", eval_split={"split": "test"})
    assert res.config["orchestrator"]["eval"]["source"][0]["env"]["taskset"] == {"id": "refunds", "split": "test"}


def test_a_bundled_tasksets_wrong_split_key_is_refused():
    with pytest.raises(ValueError, match=r"taskset.split: not a key of the 'reverse-text' taskset"):
        make(overrides={"orchestrator.eval.source.0.env.taskset.split": "test"})


@pytest.mark.parametrize(("kwargs", "table"), [
    ({"warmup_steps": 10}, {"type": "linear", "warmup_steps": 10, "decay_steps": 0}),
    ({"scheduler": "cosine", "warmup_steps": 5}, {"type": "cosine", "warmup_steps": 5}),
    ({"scheduler": {"type": "linear", "warmup_steps": 5, "decay_steps": 50, "min_lr": 1e-7}},
     {"type": "linear", "warmup_steps": 5, "decay_steps": 50, "min_lr": 1e-7}),
    ({"scheduler": "constant"}, {"type": "constant"}),
])
def test_scheduler(kwargs, table):
    res = make(**kwargs)
    assert res.config["trainer"]["scheduler"] == table and res.honored["scheduler"] == "trainer.scheduler.type"


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"scheduler": "cosine", "warmup_steps": 100}, "less than steps"),
    ({"scheduler": {"type": "linear", "warmup_steps": 60, "decay_steps": 60}}, "must not exceed steps"),
    ({"scheduler": "step"}, "one of constant, linear, cosine"),
    ({"scheduler": "constant", "warmup_steps": 3}, "scheduler='linear'"),
])
def test_bad_schedules_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(**kwargs)


def test_a_train_seat_override_leaves_the_eval_seat_alone():
    res = make(overrides={"orchestrator.train.source.0.env.agent.max_turns": 3,
                          "orchestrator.train.source.0.env.agent.runtime.type": "docker"})
    train, ev = (res.config["orchestrator"][p]["source"][0]["env"]["agent"] for p in ("train", "eval"))
    assert train == {"harness": {"id": "null"}, "runtime": {"type": "docker"}, "max_turns": 3}
    assert ev == {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    kuhn = prime_rl_config("kuhn-poker", "rae", model="Qwen/Qwen3-0.6B", knobs={"group_size": 1},
                           overrides={"orchestrator.train.source.0.env.player0.harness.id": "bash"})
    assert kuhn.config["orchestrator"]["eval"]["source"][0]["env"]["player0"]["harness"] == {"id": "null"}
    assert kuhn.config["orchestrator"]["train"]["source"][0]["env"]["player1"]["harness"] == {"id": "null"}


@pytest.mark.parametrize("correction", ["icepop", "tis"])
def test_the_icepop_and_tis_advice_works_when_followed(correction):
    with pytest.raises(ValueError) as err:
        make(method="async", knobs={"method": "grpo", "correction": correction})
    assert "overrides={'trainer.loss': {'type': 'custom'" in str(err.value) and "correction='ipo'" in str(err.value)
    loss = {"type": "custom", "import_path": "my_losses.icepop", "kwargs": {"low": 0.5, "high": 5.0}}
    res = make(method="async", knobs={"method": "grpo", "correction": "ipo"}, overrides={"trainer.loss": loss})
    assert res.config["trainer"]["loss"] == loss  # the ipo table is replaced, not merged into
    assert "ipo_threshold" not in res.honored and "replaced by the override" in res.ignored["ipo_threshold"]


@pytest.mark.parametrize(("overrides", "match"), [
    ({"orchestrator.model.lora.rank": 8}, r"orchestrator.model.lora.rank \(8\) conflicts with trainer.model.lora.rank"),
    ({"orchestrator.model.lora.alpha": 8}, "orchestrator.model.lora.alpha"),
    ({"weight_broadcast.type": "nccl"}, "cannot carry LoRA weights"),
    ({"trainer.model.lora.rank": 1024}, "largest LoRA rank"),
    ({"orchestrator.output_dir": "/x"}, "orchestrator.output_dir: under `rl` it is derived"),
    ({"resume.step": 0}, "resume.step: must be >= 1"),
    ({"trainer.ckpt": {"interval": 5}, "ckpt": None}, "needs one on the orchestrator too"),
    ({"orchestrator.concurrency.max_inflight": 4}, "must be >= group_size"),
    ({"deployment.num_infer_gpus": 0}, "needs at least 1 GPU"),
    ({"inference.vllm.tensor_parallel_size": 2, "deployment.num_infer_gpus": 3}, "divisible"),
    ({"env_vars": {"CUDA_VISIBLE_DEVICES": "0"}}, "set by the launcher"),
    ({"orchestrator.eval.source.0.algo": {"type": "grpo"}}, "eval.source.0.algo: not a key"),
])
def test_prime_rls_cross_field_rules_refuse_before_writing(overrides, match, tmp_path):
    out = tmp_path / "rl.toml"
    with pytest.raises(ValueError, match=match):
        make(overrides=overrides, out=out)
    assert not out.exists()


def test_full_weights_use_nccl_and_it_needs_two_gpus():
    assert validate_prime_rl(make(lora=False).config) == []  # nccl on 1 + 1 GPUs
    with pytest.raises(ValueError, match="nccl needs at least 2 GPUs"):
        make(lora=False, overrides={"deployment": {"num_infer_gpus": 0, "num_train_gpus": 1}, "inference": None,
                                    "trainer.weight_broadcast": {"type": "nccl"},
                                    "orchestrator.weight_broadcast": {"type": "nccl"}})


def test_the_cli_flags_reach_the_same_arguments(capsys):
    import json

    from pick_a_method.server import cli

    argv = ["prime-rl-config", "reverse-text", "grpo", "--model", "Qwen/Qwen2.5-7B-Instruct", "--renderer", "default",
            "--max-model-len", "8192", "--gpu-memory-utilization", "0.8", "--output-dir", "/o", "--no-checkpoint",
            "--inference-nodes", "1", "--trainer-nodes", "2", "--gpus", "4", "--eval-split", "dataset_split=test",
            "--override", "trainer.optim.weight_decay=0.0", "--wandb", "offline=true", "--json"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    got = json.loads(capsys.readouterr().out)
    want = prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen2.5-7B-Instruct", renderer="default",
                           max_model_len=8192, gpu_memory_utilization=0.8, output_dir="/o", checkpoint=False,
                           nodes={"inference": 1, "trainer": 2}, gpus=4, eval_split={"dataset_split": "test"},
                           overrides={"trainer.optim.weight_decay": 0.0}, wandb={"offline": True})
    assert got["config"] == want.config and got["honored"] == want.honored
    assert validate_prime_rl(got["config"]) == []


def test_a_deployment_override_of_another_type_replaces_the_table():
    res = make(gpus=16, overrides={"deployment": {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 1},
                                   "slurm": {"job_name": "x"}})
    assert res.config["deployment"] == {"type": "multi_node", "num_train_nodes": 1, "num_infer_nodes": 1}


def test_a_multi_agent_env_has_no_single_agent_seat():
    with pytest.raises(ValueError, match=r"env.agent: the 'kuhn-poker' env has no single agent; its seats are player0"):
        prime_rl_config("kuhn-poker", "rae", model="Qwen/Qwen3-0.6B", knobs={"group_size": 1},
                        overrides={"orchestrator.train.source.0.env.agent.max_turns": 2})
