"""``validate_prime_rl``: the problems prime-rl's `rl` loader would report for a config.

First the keys, types and ranges (``schema.check_keys``), then the cross-field rules that prime-rl's
config classes apply at load time (``packages/prime-rl-configs`` at 559b44772: ``RLConfig``'s
validators in ``configs/rl.py``, ``utils/validation.py``, and the sub-configs' own validators). Each
problem names the key and the fix. What only fails at launch (GPUs physically present, ports, a run
folder that exists) is out of reach here: prime-rl checks those when `rl` starts, not when it loads the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pick_a_method.trainers.prime_rl.constants import (
    PRIME_RL_GPUS_PER_NODE,
    PROTECTED_ENV_VARS,
    TASKSET_COMMON_KEYS,
    VLLM_MAX_LORA_RANK,
)
from pick_a_method.trainers.prime_rl import tasksets as T
from pick_a_method.trainers.prime_rl.renderers import MODEL_RENDERER_MAP, RENDERERS_VERSION
from pick_a_method.common.dotted import get_path
from pick_a_method.trainers.prime_rl.schema import check_keys

# Shared key -> the sub-config keys it fills when they are unset; a different value at both raises
# (utils/validation.py, propagate_shared_fields).
SHARED_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model.name", ("trainer.model.name", "inference.vllm.model", "orchestrator.model.name")),
    ("model.vlm", ("trainer.model.vlm", "orchestrator.model.vlm")),
    ("log.level", ("trainer.log.level", "orchestrator.log.level", "inference.log.level")),
    ("log.json_logging", ("trainer.log.json_logging", "orchestrator.log.json_logging", "inference.log.json_logging")),
    ("ckpt.output_dir", ("trainer.ckpt.output_dir",)),
    *((f"ckpt.{k}", (f"trainer.ckpt.{k}", f"orchestrator.ckpt.{k}")) for k in ("interval", "keep_last", "keep_interval")),
    *(
        (f"monitors.wandb.{k}", (f"trainer.monitors.wandb.{k}", f"orchestrator.monitors.wandb.{k}"))
        for k in ("project", "entity", "name", "group", "tags", "offline")
    ),
    ("monitors.file.path", ("trainer.monitors.file.path", "orchestrator.monitors.file.path")),
    ("monitors.prime.name", ("orchestrator.monitors.prime.name",)),
    ("tokenizer.name", ("trainer.tokenizer.name", "orchestrator.tokenizer.name")),
    ("tokenizer.trust_remote_code", ("trainer.tokenizer.trust_remote_code", "orchestrator.tokenizer.trust_remote_code")),
    ("tokenizer.chat_template", ("trainer.tokenizer.chat_template", "orchestrator.tokenizer.chat_template",
                                 "inference.vllm.chat_template")),
    ("rollout_transport", ("trainer.rollout_transport", "orchestrator.rollout_transport")),
    ("max_steps", ("trainer.max_steps", "orchestrator.max_steps")),
    ("seq_len", ("trainer.model.seq_len", "orchestrator.seq_len")),
    ("slurm", ("inference.slurm",)),
)


def validate_prime_rl(config: Mapping[str, Any]) -> list[str]:
    """Problems prime-rl's config loader would report for this `rl` config (empty when it is fine).

    It cannot check taskset-specific keys (they need the taskset package installed), keys inside
    [inference.vllm] that prime-rl passes through to vLLM, or anything that fails only at launch.
    """
    problems = check_keys(config)
    if problems:
        return problems
    for rule in (_shared, _batch, _algorithms, _sources, _gpus, _lora_and_broadcast, _monitors_ckpt_resume,
                 _scheduler, _renderer, _dirs_and_env):
        rule(config, problems)
    return problems


def _get(config: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    value = get_path(config, dotted, default)
    return default if value == "None" else value


def _shared(config: Mapping[str, Any], problems: list[str]) -> None:
    """Shared keys: a sub-config set to a different value is a conflict; then trainer and orchestrator agree."""
    for shared, subs in SHARED_FIELDS:
        top = get_path(config, shared)
        if top is None:
            continue
        for sub in subs:
            val = get_path(config, sub)
            if val is not None and val != top and sub.split(".")[0] in config:
                problems.append(
                    f"{sub}: {val!r} conflicts with the shared {shared} = {top!r}; set it in one place "
                    f"(drop {sub}, or change {shared})"
                )
    steps = {side: _get(config, f"{side}.max_steps", _get(config, "max_steps")) for side in ("trainer", "orchestrator")}
    if steps["trainer"] != steps["orchestrator"]:
        problems.append(f"trainer.max_steps ({steps['trainer']}) and orchestrator.max_steps ({steps['orchestrator']}) "
                        "must match; set the shared max_steps instead")
    t_len = _get(config, "trainer.model.seq_len", _get(config, "seq_len", 2048))
    o_len = _get(config, "orchestrator.seq_len", _get(config, "seq_len", 2048))
    if t_len < o_len:
        problems.append(f"trainer.model.seq_len ({t_len}) must be >= orchestrator.seq_len ({o_len}); set the shared seq_len")
    name = {s: _get(config, f"{s}.model.name", _get(config, "model.name", "Qwen/Qwen3-0.6B")) for s in ("trainer", "orchestrator")}
    if "inference" in config:
        served = _get(config, "inference.vllm.model", _get(config, "model.name", "Qwen/Qwen3-0.6B"))
        if served != name["orchestrator"]:
            problems.append(f"inference.vllm.model ({served!r}) must equal orchestrator.model.name ({name['orchestrator']!r}); "
                            "set the shared [model] name only")
    elif name["trainer"] != name["orchestrator"] and not name["trainer"].startswith("Jackmin108/"):
        problems.append(f"trainer.model.name ({name['trainer']!r}) must equal orchestrator.model.name "
                        f"({name['orchestrator']!r}); set the shared [model] name only")
    template = {s: _get(config, f"{s}.tokenizer.chat_template", _get(config, "tokenizer.chat_template"))
                for s in ("trainer", "orchestrator")}
    if template["trainer"] != template["orchestrator"]:
        problems.append("trainer.tokenizer.chat_template and orchestrator.tokenizer.chat_template differ; set the shared "
                        "[tokenizer] chat_template instead")


def _batch(config: Mapping[str, Any], problems: list[str]) -> None:
    """One of batch_size / token_batch_size; batch_size divisible by group_size; concurrency bounds."""
    orch = config.get("orchestrator", {})
    group = orch.get("group_size", 1)
    batch = _get(config, "orchestrator.batch_size")
    if batch is not None and _get(config, "orchestrator.token_batch_size") is not None:
        problems.append("orchestrator: set batch_size or token_batch_size, not both (drop one)")
    if isinstance(batch, int) and batch % group:
        problems.append(
            f"orchestrator.batch_size ({batch}) must be divisible by orchestrator.group_size ({group})"
        )
    conc = orch.get("concurrency") or {}
    for key in ("max_inflight", "initial_inflight"):
        if key in conc and conc[key] < group:
            problems.append(f"orchestrator.concurrency.{key} ({conc[key]}) must be >= group_size ({group})")
    top = conc.get("max_inflight", 1024)
    for key in ("initial_inflight", "min_inflight"):
        if key in conc and conc[key] > top:
            problems.append(f"orchestrator.concurrency.{key} ({conc[key]}) must not exceed max_inflight ({top})")


def _algorithms(config: Mapping[str, Any], problems: list[str]) -> None:
    """Only sft may sample from a frozen model, and sft must (configs/algorithm.py)."""
    algos = [("orchestrator.algo", _get(config, "orchestrator.algo", {"type": "grpo"}))]
    for i, src in enumerate(_get(config, "orchestrator.train.source", []) or []):
        if "algo" in src:
            algos.append((f"orchestrator.train.source.{i}.algo", src["algo"]))
    for where, algo in algos:
        kind = algo.get("type", "grpo")
        src = get_path(algo, "sampling.source", "policy")
        if kind == "sft":
            if not isinstance(src, dict) or not src.get("name"):
                problems.append(f"{where}.sampling.source: sft needs a frozen model {{name, base_url}}")
        elif src != "policy":
            problems.append(f"{where}.sampling.source: {kind} must sample from \"policy\"; got {src!r}")


def _sources(config: Mapping[str, Any], problems: list[str]) -> None:
    """Names unique per split, `agg` reserved, an eval block has a source (configs/orchestrator.py); each name one
    file name (write_subconfigs, tasksets.py)."""
    problems.extend(T.file_name_problems(dict(config)))
    for part in ("train", "eval"):
        names = [T.resolved_name(s) for s in _get(config, f"orchestrator.{part}.source", []) or []]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"orchestrator.{part}.source: name {name!r} is used twice; give each source its own name")
        if "agg" in names:
            problems.append(f"orchestrator.{part}.source: the name 'agg' is reserved; pick another name")
        for i, src in enumerate(_get(config, f"orchestrator.{part}.source", []) or []):
            _taskset_keys(f"orchestrator.{part}.source.{i}.env.taskset", src.get("env", {}), problems)
    if "eval" in config.get("orchestrator", {}) and not _get(config, "orchestrator.eval.source"):
        problems.append("orchestrator.eval: needs at least one [[orchestrator.eval.source]], or drop [orchestrator.eval]")


def _taskset_keys(where: str, env: Mapping[str, Any], problems: list[str]) -> None:
    """The keys of a bundled taskset (constants.TASKSET_KEYS); others are checked where they are installed."""
    taskset = env.get("taskset", {})
    known = T.taskset_keys(str(taskset.get("id", "")))
    if known is None or "id" in env:  # an env class of its own may narrow the taskset differently
        return
    seats = T.seats(taskset["id"])
    if seats is not None and "agent" in env:  # a multi-agent env names its own seats instead of env.agent
        problems.append(f"{where.rsplit('.', 1)[0]}.agent: the {taskset['id']!r} env has no single agent; its seats are "
                        f"{', '.join(seats)} (e.g. {where.rsplit('.', 1)[0]}.{seats[0]}.max_turns)")
    for key, value in taskset.items():
        if key in TASKSET_COMMON_KEYS:
            continue
        if key not in known:
            keys = ", ".join([*known, *TASKSET_COMMON_KEYS[1:]])
            problems.append(f"{where}.{key}: not a key of the {taskset['id']!r} taskset (its keys: {keys})")
        elif known[key] is not None and value not in known[key]:
            problems.append(f"{where}.{key}: {taskset['id']!r} accepts {', '.join(map(repr, known[key]))}; got {value!r}")


def _gpus(config: Mapping[str, Any], problems: list[str]) -> None:
    """[deployment] (configs/rl.py: SingleNode/MultiNodeDeploymentConfig and RLConfig's validators)."""
    dep = config.get("deployment", {})
    inference = "inference" in config
    tp = _get(config, "inference.vllm.tensor_parallel_size", 1)
    if dep.get("type", "single_node") == "single_node":
        n_train, n_infer = dep.get("num_train_gpus", 1), dep.get("num_infer_gpus", 1)
        per_node = dep.get("gpus_per_node", PRIME_RL_GPUS_PER_NODE)
        if n_train + n_infer > per_node:
            problems.append(
                f"deployment: num_train_gpus + num_infer_gpus = {n_train + n_infer} exceeds gpus_per_node = {per_node}; "
                "fewer GPUs, or several nodes (deployment type 'multi_node' with [slurm])"
            )
        if inference and n_infer < 1:
            problems.append("deployment.num_infer_gpus: [inference] needs at least 1 GPU (or drop [inference] and "
                            "point orchestrator.model.client.base_url at a running server)")
        elif inference and n_infer % tp:
            problems.append(f"deployment.num_infer_gpus ({n_infer}) must be divisible by "
                            f"inference.vllm.tensor_parallel_size ({tp})")
        # RLConfig.validate_enough_devices_for_nccl runs before the shared weight_broadcast is resolved, so it
        # sees only a trainer.weight_broadcast set directly.
        if _get(config, "trainer.weight_broadcast.type") == "nccl" and n_train + n_infer < 2:
            problems.append("trainer.weight_broadcast: nccl needs at least 2 GPUs in all; use type = 'filesystem'")
        return
    # multi_node
    if _get(config, "slurm") is None:
        problems.append("deployment.type = 'multi_node' needs [slurm] (prime-rl: \"Must use SLURM for multi-node "
                        "deployment\"); add a [slurm] table, e.g. slurm = {job_name = \"<run>\"}")
    infer_dep = _get(config, "inference.deployment", {}) if inference else {}
    inferred = 0 if not inference else infer_dep.get("num_nodes", 2) if infer_dep.get("type") == "multi_node" else 1
    n_infer_nodes = dep.get("num_infer_nodes", inferred)
    if inference and infer_dep.get("type") == "multi_node" and n_infer_nodes != inferred:
        problems.append(f"deployment.num_infer_nodes ({n_infer_nodes}) must equal inference.deployment.num_nodes ({inferred})")
    if n_infer_nodes > 0 and not inference:
        problems.append("deployment.num_infer_nodes > 0 needs an [inference] table (vLLM on the inference nodes). Fix: "
                        "keep it, overrides={'inference': {}}")
    if n_infer_nodes == 0 and inference:
        problems.append("deployment.num_infer_nodes = 0 cannot go with [inference]: set num_infer_nodes > 0 or drop [inference]")
    if n_infer_nodes == 0 and not _get(config, "trainer.data.fake"):
        problems.append("deployment.num_infer_nodes = 0 needs trainer.data.fake (no orchestrator or inference runs)")
    if inference and "router" in config["inference"] and _get(config, "inference.router") is None:
        problems.append("inference.router: multi-node deployments need a router in front of the engines; drop router = \"None\"")
    per_fsdp = dep.get("nodes_per_fsdp_group")
    if per_fsdp and dep["num_train_nodes"] % per_fsdp:
        problems.append(f"deployment.num_train_nodes ({dep['num_train_nodes']}) must be divisible by "
                        f"deployment.nodes_per_fsdp_group ({per_fsdp})")


def _broadcast(config: Mapping[str, Any]) -> str:
    """The weight broadcast prime-rl resolves: the shared one, else nccl with [inference] and no LoRA, else filesystem."""
    explicit = _get(config, "weight_broadcast.type", "filesystem" if "weight_broadcast" in config else None)
    if explicit is not None:
        return explicit
    return "filesystem" if _get(config, "trainer.model.lora") is not None or "inference" not in config else "nccl"


def _lora_and_broadcast(config: Mapping[str, Any], problems: list[str]) -> None:
    """LoRA (RLConfig.auto_setup_lora, auto_setup_weight_broadcast, VllmConfig.auto_setup_max_lora_rank)."""
    lora = _get(config, "trainer.model.lora")
    if lora is not None:
        if _broadcast(config) != "filesystem":
            problems.append(f"weight_broadcast.type = {_broadcast(config)!r} cannot carry LoRA weights; "
                            "use weight_broadcast.type = 'filesystem' (or drop weight_broadcast)")
        for key, default in (("rank", 16), ("alpha", 32.0)):
            mine, theirs = _get(config, f"orchestrator.model.lora.{key}"), lora.get(key, default)
            if mine is not None and mine != theirs:
                problems.append(
                    f"orchestrator.model.lora.{key} ({mine}) conflicts with trainer.model.lora.{key} ({theirs}): drop "
                    f"orchestrator.model.lora.{key} (it inherits the trainer's), or set trainer.model.lora.{key} = {mine}"
                )
        if "inference" in config and lora.get("rank", 16) > VLLM_MAX_LORA_RANK:
            problems.append(f"trainer.model.lora.rank ({lora.get('rank')}) exceeds vLLM's largest LoRA rank "
                            f"({VLLM_MAX_LORA_RANK}); use a rank <= {VLLM_MAX_LORA_RANK}")
    if _get(config, "weight_broadcast.quantize_in_weight_transfer"):
        if "inference" not in config:
            problems.append("weight_broadcast.quantize_in_weight_transfer needs an [inference] table")
        if _get(config, "trainer.model.impl", "auto") != "custom":
            problems.append("weight_broadcast.quantize_in_weight_transfer needs trainer.model.impl = 'custom'")


def _monitors_ckpt_resume(config: Mapping[str, Any], problems: list[str]) -> None:
    """W&B, checkpoints and resume on both sides or neither (utils/validation.py; SharedWandbConfig)."""
    if _get(config, "monitors.wandb.offline") is True:
        problems.append(
            "monitors.wandb.offline: rejected under `rl` (W&B shared mode is always on); for an offline run set "
            "trainer.monitors.wandb and orchestrator.monitors.wandb, each with offline = true, instead of [monitors.wandb]"
        )
    shared_on = {k: isinstance(get_path(config, k), dict) for k in ("ckpt", "monitors.wandb")}
    for key, label in (("ckpt", "checkpoint"), ("monitors.wandb", "W&B")):
        sides = {s: shared_on[key] or isinstance(get_path(config, f"{s}.{key}"), dict) for s in ("trainer", "orchestrator")}
        if sides["trainer"] != sides["orchestrator"]:
            on, off = ("trainer", "orchestrator") if sides["trainer"] else ("orchestrator", "trainer")
            problems.append(f"{on}.{key}: a {label} config on the {on} needs one on the {off} too; use the shared "
                            f"[{key}] to set both")
    # With both sides on, the checkpoint interval and the W&B project must match (a sub-config's own value,
    # else the shared one, else the sub-config default).
    for block, leaf, default in (("ckpt", "interval", None), ("monitors.wandb", "project", "prime-rl")):
        both_on = all(shared_on[block] or isinstance(get_path(config, f"{s}.{block}"), dict) for s in ("trainer", "orchestrator"))
        vals = {s: _get(config, f"{s}.{block}.{leaf}", _get(config, f"{block}.{leaf}", default)) for s in ("trainer", "orchestrator")}
        if both_on and vals["trainer"] != vals["orchestrator"]:
            problems.append(f"trainer.{block}.{leaf} ({vals['trainer']}) and orchestrator.{block}.{leaf} "
                            f"({vals['orchestrator']}) must match; set the shared {block}.{leaf}")
    if "resume" not in config and get_path(config, "trainer.resume") != get_path(config, "orchestrator.resume"):
        problems.append("trainer.resume and orchestrator.resume differ; set the shared [resume] instead")
    for where in ("resume", "trainer.resume", "orchestrator.resume"):
        resume = get_path(config, where)
        if isinstance(resume, dict):
            if "step" in resume and "dir" in resume:
                problems.append(f"{where}: step and dir are exclusive (the step is read from the folder name); keep one")
            folder = str(resume.get("dir", "step_0")).rstrip("/").rsplit("/", 1)[-1]
            if not (folder.startswith("step_") and folder[5:].isdigit()):
                problems.append(f"{where}.dir must point at a checkpoint step folder '.../step_<N>'; got {resume['dir']!r}")


def _scheduler(config: Mapping[str, Any], problems: list[str]) -> None:
    """trainer.scheduler against max_steps (configs/trainer.py, validate_scheduler)."""
    sched = _get(config, "trainer.scheduler", {})
    kind = sched.get("type", "constant")
    steps = _get(config, "trainer.max_steps", _get(config, "max_steps"))
    warmup = sched.get("warmup_steps", 10)
    if kind == "linear":
        decay = sched.get("decay_steps", 10)
        if warmup == 0 and decay == 0:
            problems.append("trainer.scheduler: linear needs warmup_steps > 0 or decay_steps > 0 (or type = 'constant')")
        if decay > 0 and steps is None:
            problems.append("trainer.scheduler: linear with decay_steps > 0 needs max_steps")
        elif decay > 0 and warmup + decay > steps:
            problems.append(f"trainer.scheduler: warmup_steps ({warmup}) + decay_steps ({decay}) must not exceed "
                            f"max_steps ({steps})")
    if kind == "cosine":
        if steps is None:
            problems.append("trainer.scheduler: cosine needs max_steps")
        elif warmup >= steps:
            problems.append(f"trainer.scheduler: warmup_steps ({warmup}) must be less than max_steps ({steps})")


def _renderer(config: Mapping[str, Any], problems: list[str]) -> None:
    """renderer 'auto' only for a model in MODEL_RENDERER_MAP (OrchestratorConfig.validate_renderer_auto_resolves)."""
    if _get(config, "orchestrator.renderer.name", "auto") != "auto":
        return
    model = (_get(config, "orchestrator.tokenizer.name") or _get(config, "tokenizer.name")
             or _get(config, "orchestrator.model.name") or _get(config, "model.name", "Qwen/Qwen3-0.6B"))
    if model not in MODEL_RENDERER_MAP:
        problems.append(
            f"orchestrator.renderer.name: 'auto' resolves only models in the MODEL_RENDERER_MAP of renderers "
            f"{RENDERERS_VERSION}, and {model!r} is not one; set [orchestrator.renderer] name = 'default' (a fine-tune "
            "or a model with its own chat template) or the renderer of its family (e.g. 'qwen3', 'llama-3')"
        )


def _dirs_and_env(config: Mapping[str, Any], problems: list[str]) -> None:
    """Sub-config output_dir is derived from output_dir / run.name; launcher-managed env vars (configs/shared.py)."""
    for side in ("trainer", "orchestrator"):
        if get_path(config, f"{side}.output_dir") is not None:
            problems.append(f"{side}.output_dir: under `rl` it is derived from output_dir / run.name; set those instead")
    for where in ("env_vars", "trainer.env_vars", "orchestrator.env_vars", "inference.env_vars"):
        clobbered = sorted(PROTECTED_ENV_VARS & set(get_path(config, where) or {}))
        if clobbered:
            problems.append(f"{where}: {', '.join(clobbered)} are set by the launcher and cannot be overridden; drop them")
