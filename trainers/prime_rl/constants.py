"""The prime-rl facts the config writer relies on, each with its source.

Target: prime-rl commit 559b44772 (tag v0.8.1.dev67, 2026-08-21) of github.com/PrimeIntellect-ai/prime-rl; its
config classes are under ``packages/prime-rl-configs/src/prime_rl/configs/`` (``configs/`` below), its examples
under ``examples/`` and ``configs/``. The method defaults and the launcher defaults the writer fills in (GPUs,
steps, batch, seq_len, eval block, LoRA) live in ``methods/defaults.py``; the schema of the `rl`
TOML itself is in ``trainers/prime_rl/schema.py``.
"""

from __future__ import annotations

import re

# The prime-rl commit whose `rl` schema this writer targets ("chore: bump verifiers to latest main (#3337)").
PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
PRIME_RL_TAG = "v0.8.1.dev67"
PRIME_RL_VERSION = f"{PRIME_RL_COMMIT[:9]} ({PRIME_RL_TAG}, 2026-08-21)"

# `[deployment] type="single_node"` defaults gpus_per_node to 8 and requires
# num_train_gpus + num_infer_gpus <= gpus_per_node (prime-rl's `[deployment]` table at 559b44772).
PRIME_RL_GPUS_PER_NODE = 8

# trainer.scheduler's warmup_steps default for linear and cosine (configs/trainer.py). A linear
# schedule asked for with warmup alone gets decay_steps = 0 here (warm up, then hold the rate):
# prime-rl's own decay default (10) would decay to min_lr over the last 10 steps of every run.
PRIME_RL_WARMUP_STEPS = 10
LINEAR_DECAY_STEPS = 0

# vLLM's largest LoRA rank (prime-rl configs/inference.py, VALID_VLLM_LORA_RANKS: 1 ... 512): with
# [inference], trainer.model.lora.rank above it is rejected.
VLLM_MAX_LORA_RANK = 512

# Env vars the launcher sets and no `env_vars` table may (configs/shared.py, PROTECTED_ENV_VARS).
PROTECTED_ENV_VARS = frozenset({
    "CUDA_VISIBLE_DEVICES", "PRL_RUN_ID", "PRL_RUN_NAME", "WANDB_RUN_ID", "WANDB_SHARED_MODE",
    "WANDB_SHARED_LABEL", "WANDB_SHARED_PRIMARY", "WANDB_SHARED_FINISHER",
})

# The split key of the tasksets bundled with verifiers a60a606 (the commit prime-rl 559b44772 pins),
# read from each environments/<name>/<name>/taskset.py: key, the splits it accepts (None: any string,
# it is a Hugging Face dataset split), and its default. Other tasksets name their own key, if any.
TASKSET_SPLITS: dict[str, tuple[str, tuple[str, ...] | None, str]] = {
    "reverse-text": ("dataset_split", None, "train"),
    "gsm8k": ("split", ("train", "test"), "test"),
    "alphabet-sort": ("split", ("train",), "train"),
}

# The keys under env.taskset of those bundled tasksets (their TasksetConfig classes, same files), beside
# the keys every taskset has (id, task, system_prompt; verifiers/v1/configs/taskset.py): key -> the
# values it accepts (None: any value of its type). prime-rl rejects any other key ("Extra inputs are
# not permitted"); a taskset outside this table is checked only where it is installed.
TASKSET_COMMON_KEYS = ("id", "task", "system_prompt")
TASKSET_KEYS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "reverse-text": {"dataset_name": None, "dataset_split": None},
    "gsm8k": {"split": ("train", "test")},
    "alphabet-sort": {"min_turns": None, "max_turns": None, "min_names_per_turn": None, "max_names_per_turn": None,
                      "split": ("train",)},
    "kuhn-poker": {},
}

# [slurm] keys (configs/shared.py, SlurmConfig) a caller may set through slurm={...}.
SLURM_KEYS = ("job_name", "project_dir", "template_path", "partition", "nodelist", "exclude", "account", "time",
              "pre_run_command", "cleanup_grace_period", "shared_fs")

# Where an OPD teacher is expected when its base_url is not given: prime-rl's own OPD debug config
# serves the teacher on port 8001, next to the student's vLLM on 8000
# (prime-rl's configs/debug/algo/opd.toml at 559b44772).
OPD_TEACHER_BASE_URL = "http://localhost:8001/v1"
OPD_TEACHER_PORT = 8001

# The single-agent seat shape of every shipped single-agent example (prime-rl's examples/basic/*/rl.toml and
# configs/debug/algo/*.toml at 559b44772; tests/prime_rl/fixtures/known_good/): harness "null", local runtime.
AGENT_HARNESS_ID = "null"
AGENT_RUNTIME_TYPE = "subprocess"

# Bundled multi-agent tasksets name their own seats (kuhn-poker uses env.player0 / env.player1: prime-rl's
# configs/debug/algo/rae.toml at 559b44772).
MULTI_AGENT_SEATS: dict[str, tuple[str, ...]] = {"kuhn-poker": ("player0", "player1")}

# Algorithms whose advantage is group-relative (prime-rl's src/prime_rl/orchestrator/advantage.py): one rollout
# per prompt gives zero advantage.
GROUP_RELATIVE_ALGOS = ("grpo", "max_rl", "echo", "hierarchical_grpo")

# Known thinking-model name patterns (OPSD can cost points on thinking models: Kaur et al. 2026,
# arXiv:2607.05184). Qwen3 base/hybrid models think by default; the 2507 "Instruct" releases do not.
THINKING_MODEL = re.compile(r"(thinking|reason|qwq|deepseek-r1|-r1\b|/r1-|magistral|\bo[134]-)", re.I)
QWEN3_HYBRID = re.compile(r"qwen3(?![.\d])", re.I)
NON_THINKING_MODEL = re.compile(r"(instruct-2507|nothink|non-thinking|coder|-base\b)", re.I)

# A taskset id: `name`, `owner/name`, either with `@version` (how prime-rl's env.taskset.id names an
# installed verifiers taskset: prime-rl's [[orchestrator.train.source]] env.taskset.id).
TASKSET_ID = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?(@[A-Za-z0-9][A-Za-z0-9._+-]*)?$"
)

# Bounds this writer's schema checks that prime-rl 559b44772's own classes do not: a value past them loads (checked
# with prime-rl's RLConfig and write_subconfigs, one value per bound), then fails at launch in the tool named.
# Keys are "<dotted key> <bound>", the bound as schema.py words it (>=, >, <=, <, or "empty").
# (a per-process W&B project also meets the shared one's, which must match: that is prime-rl's own check)
_WANDB = ("monitors.wandb.project empty", *(f"{side}monitors.wandb.{k} empty" for side in ("", "trainer.", "orchestrator.")
                                            for k in ("entity", "name")))
LAUNCH_ONLY_CHECKS: dict[str, str] = {
    **dict.fromkeys(("trainer.model.cp >=", "trainer.model.dp_replicate >=", "trainer.dist_timeout_seconds >=",
                     "trainer.optim.lr >", "trainer.optim.max_norm >", "trainer.optim.betas1 <",
                     "trainer.optim.betas2 <", "max_steps >=", "seq_len >=", "trainer.ckpt.output_dir empty"),
                    "the trainer"),
    **dict.fromkeys(("inference.vllm.max_model_len >=", "inference.vllm.gpu_memory_utilization >",
                     "inference.vllm.gpu_memory_utilization <=", "inference.vllm.max_lora_rank >=",
                     "inference.server.port >=", "inference.server.port <=",
                     "orchestrator.train.sampling.max_completion_tokens >=", "orchestrator.eval.sampling.top_p >",
                     "orchestrator.eval.sampling.top_p <=", "orchestrator.eval.sampling.min_p <=",
                     "orchestrator.eval.sampling.max_completion_tokens >="), "vLLM"),
    **dict.fromkeys(_WANDB, "W&B"),
    **dict.fromkeys(("orchestrator.model.client.base_url empty", "orchestrator.model.client.wait_for_ready_timeout >=",
                     "orchestrator.eval.num_examples >="), "the orchestrator"),
    **dict.fromkeys(("run.name empty", "run.dir empty", "output_dir empty", "ckpt.output_dir empty",
                     "deployment.num_train_gpus >=", "deployment.num_infer_gpus >=",
                     "inference.deployment.gpus_per_node >="), "the `rl` launcher"),
    **dict.fromkeys(("slurm.job_name empty", "slurm.project_dir empty", "slurm.template_path empty",
                     "slurm.partition empty"), "SLURM"),
}
