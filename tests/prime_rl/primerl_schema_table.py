"""An independent checker for prime-rl `rl` TOMLs (commit 559b44772, v0.8.1.dev67), for the tests.

Written from prime-rl's config classes at that commit (github.com/PrimeIntellect-ai/prime-rl,
packages/prime-rl-configs) separately from trainers/prime_rl/schema.py, in a different form (a flat
table of key paths), so the writer is not checked only against itself. Each block names the config
class or table it comes from. Paths are dotted; `[]` stands for an item of an
array of tables, `*` for any one key (an agent seat), and a trailing `.**` for any key below
(taskset-specific keys, vLLM pass-through).
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath
from typing import Any

INT, FLOAT, STR, BOOL, TABLE, ANY, LIST = "int", "float", "str", "bool", "table", "any", "list"

# path pattern -> (kind, check or None). Checks return an error string or None.


def _rng(lo=None, hi=None, lo_open=False, hi_open=False):
    def check(v):
        if lo is not None and (v <= lo if lo_open else v < lo):
            return f"below {lo}"
        if hi is not None and (v >= hi if hi_open else v > hi):
            return f"above {hi}"
        return None

    return check


def _enum(*options):
    return lambda v: None if v in options else f"not one of {options}"


_SEAT = {  # env.<seat>.* (verifiers' env config; single-agent seat `agent`, multi-agent envs name their own)
    "harness": (TABLE, None),
    "harness.id": (STR, None),
    "runtime": (TABLE, None),
    "runtime.type": (STR, _enum("prime", "subprocess", "docker", "modal")),
    "model": (STR, None),
    "max_turns": (INT, _rng(1)),
    "max_input_tokens": (INT, _rng(1)),
    "max_output_tokens": (INT, _rng(1)),
    "max_total_tokens": (INT, _rng(1)),
    "timeout": (FLOAT, _rng(0, lo_open=True)),
    "retries": (INT, _rng(0)),
}

_SOURCE = {  # [[orchestrator.train.source]] / [[orchestrator.eval.source]] (OrchestratorConfig)
    "name": (STR, None),
    "ratio": (FLOAT, _rng(0, lo_open=True)),
    "group_size": (INT, _rng(1)),
    "env": (TABLE, None),
    "env.id": (STR, None),
    "env.taskset": (TABLE, None),
    "env.taskset.id": (STR, lambda v: None if v.strip() else "empty"),
    "env.taskset.**": (ANY, None),  # taskset-specific keys: need the taskset package to check
    "env.retries": (INT, _rng(0)),
    "env.max_concurrent_agents": (INT, _rng(1)),
    "env.timeout.episode": (FLOAT, _rng(0, lo_open=True)),
    "env.timeout.finalize": (FLOAT, _rng(0, lo_open=True)),
    **{f"env.*.{k}": v for k, v in _SEAT.items()},
    "env.*": (TABLE, None),
    "sampling.temperature": (FLOAT, _rng(0, 2)),
    "sampling.max_completion_tokens": (INT, _rng(1)),
}

# [[orchestrator.eval.source]] (EvalSourceConfig in prime-rl's configs/orchestrator.py): env blocks, no algo.
_EVAL_SOURCE = {k: v for k, v in _SOURCE.items() if not k.startswith("sampling.")} | {
    "num_examples": (INT, _rng(-1)),
    "interval": (INT, _rng(1)),
    "sampling.max_completion_tokens": (INT, _rng(1)),
    "sampling.temperature": (FLOAT, _rng(0, 2)),
}

# Renderer names (renderers 0.1.10, renderers/configs.py RendererConfig): written out again here, on purpose.
# The renderer names prime-rl 559b44772 takes: RENDERER_REGISTRY of the renderers commit it pins (2846a3d,
# renderers/base.py) and "auto"; renderers 0.1.10's qwen3.8, gemma4, inkling and laguna-s-2.1 came after it.
RENDERERS = ("auto", "default", "qwen3", "prime-qwen3", "qwen3-vl", "qwen3.5", "qwen3.6", "glm-5", "glm-5.1", "glm-4.5",
             "minimax-m2", "deepseek-v3", "deepseek-r1", "hy3", "kimi-k2", "kimi-k2.5", "laguna-xs.2", "laguna-m.1",
             "laguna-xs-2.1", "llama-3", "nemotron-3", "nemotron-3-ultra", "nemotron-3.5", "gpt-oss")
_WANDB = {"project": (STR, None), "name": (STR, None), "entity": (STR, None), "offline": (BOOL, None)}

TABLE_PATHS: dict[str, tuple[str, Any]] = {
    # Shared top-level keys (RLConfig, and the shared keys its validator copies into the sub-configs)
    "max_steps": (INT, _rng(1)),
    "seq_len": (INT, _rng(1)),
    "model": (TABLE, None),
    "model.name": (STR, None),
    "model.vlm": (BOOL, None),
    "output_dir": (STR, None),
    "clean": (BOOL, None),
    "dry_run": (BOOL, None),
    "run.name": (STR, None),
    "run.dir": (STR, None),
    "ckpt": (TABLE, None),
    "ckpt.interval": (INT, _rng(1)),
    "ckpt.keep_last": (INT, _rng(1)),
    "ckpt.keep_interval": (INT, _rng(1)),
    "ckpt.output_dir": (STR, None),
    "resume.step": (INT, _rng(0)),
    "resume.dir": (STR, None),
    "monitors.wandb": (TABLE, None),
    "monitors.wandb.project": (STR, None),
    "monitors.wandb.name": (STR, None),
    "monitors.wandb.offline": (BOOL, lambda v: "rejected under rl" if v else None),
    "monitors.wandb.entity": (STR, None),
    **{f"{side}.monitors.wandb.{k}": v for side in ("trainer", "orchestrator") for k, v in _WANDB.items()},
    "resume": (TABLE, None),
    # [slurm] (SlurmConfig, configs/shared.py) and multi-node [deployment] (configs/rl.py)
    "slurm.job_name": (STR, None),
    "slurm.partition": (STR, None),
    "slurm.account": (STR, None),
    "slurm.time": (STR, None),
    **{f"slurm.{k}": (STR, None) for k in ("project_dir", "template_path", "nodelist", "exclude", "pre_run_command")},
    "slurm.cleanup_grace_period": (INT, _rng(0)),
    "slurm.shared_fs": (BOOL, None),
    "deployment.num_train_nodes": (INT, _rng(1)),
    "deployment.num_infer_nodes": (INT, _rng(0)),
    # [trainer.scheduler] (configs/trainer.py)
    "trainer.scheduler.type": (STR, _enum("constant", "linear", "cosine")),
    "trainer.scheduler.warmup_steps": (INT, _rng(0)),
    "trainer.scheduler.decay_steps": (INT, _rng(0)),
    "trainer.scheduler.min_lr": (FLOAT, _rng(0)),
    "monitors.file.path": (STR, None),
    "monitors.prime.name": (STR, None),
    "tokenizer.name": (STR, None),
    "tokenizer.trust_remote_code": (BOOL, None),
    "tokenizer.chat_template": (STR, None),
    # [deployment] (RLConfig.deployment)
    "deployment.type": (STR, _enum("single_node", "multi_node")),
    "deployment.num_train_gpus": (INT, _rng(1)),
    "deployment.num_infer_gpus": (INT, _rng(0)),
    "deployment.gpus_per_node": (INT, _rng(1)),
    # [inference] (InferenceConfig); [inference.vllm] passes any key to vLLM (extra="allow")
    "inference": (TABLE, None),
    "inference.server.host": (STR, None),
    "inference.server.port": (INT, _rng(1, 65535)),
    "inference.vllm": (TABLE, None),
    "inference.vllm.**": (ANY, None),
    # [orchestrator] (OrchestratorConfig)
    "orchestrator": (TABLE, None),
    "orchestrator.batch_size": (INT, _rng(1)),
    "orchestrator.token_batch_size": (INT, _rng(1)),
    "orchestrator.group_size": (INT, _rng(1)),
    "orchestrator.seq_len": (INT, _rng(1)),
    "orchestrator.max_steps": (INT, _rng(1)),
    "orchestrator.max_off_policy_steps": (INT, _rng(0)),
    "orchestrator.renderer.name": (STR, _enum(*RENDERERS)),
    "orchestrator.algo.renderer.name": (STR, _enum(*RENDERERS)),
    "orchestrator.model.name": (STR, None),
    "orchestrator.train.sampling.temperature": (FLOAT, _rng(0, 2)),
    "orchestrator.train.sampling.max_completion_tokens": (INT, _rng(1)),
    "orchestrator.train.filter_zero_advantages": (BOOL, None),
    "orchestrator.eval.interval": (INT, _rng(1)),
    "orchestrator.eval.num_examples": (INT, _rng(-1)),
    "orchestrator.eval.group_size": (INT, _rng(1)),
    "orchestrator.eval.sampling.temperature": (FLOAT, _rng(0, 2)),
    "orchestrator.eval.sampling.max_completion_tokens": (INT, _rng(1)),
    **{f"orchestrator.train.source[].{k}": v for k, v in _SOURCE.items()},
    **{f"orchestrator.eval.source[].{k}": v for k, v in _EVAL_SOURCE.items()},
    # [orchestrator.algo] (the algorithm configs, a union on `type`): per-type keys are checked in ALGO_KEYS below
    "orchestrator.algo.type": (
        STR,
        _enum("grpo", "echo", "max_rl", "rae", "hierarchical_grpo", "opd", "opsd", "sft"),
    ),
    "orchestrator.algo.decay": (FLOAT, _rng(0, 1, hi_open=True)),
    "orchestrator.algo.teacher": (ANY, None),
    "orchestrator.algo.teacher.name": (STR, None),
    "orchestrator.algo.teacher.base_url": (STR, None),
    "orchestrator.algo.demo_key": (STR, None),
    "orchestrator.algo.template": (STR, None),
    "orchestrator.algo.episode_agents": (LIST, None),
    "orchestrator.model.lora.rank": (INT, _rng(1)),
    "orchestrator.model.lora.alpha": (FLOAT, _rng(0)),
    # [trainer] (TrainerConfig) and [trainer.loss] (the loss configs, a union on `type`)
    "trainer": (TABLE, None),
    "trainer.model.name": (STR, None),
    "trainer.model.seq_len": (INT, _rng(1)),
    "trainer.model.impl": (STR, _enum("auto", "hf", "custom")),
    "trainer.model.ac.freq": (INT, _rng(1)),  # seen in examples/basic/alphabet-sort/rl.toml
    "trainer.model.lora.rank": (INT, _rng(1)),
    "trainer.model.lora.alpha": (FLOAT, _rng(0, lo_open=True)),
    "trainer.model.lora.dropout": (FLOAT, _rng(0, 1, hi_open=True)),
    "trainer.optim.type": (STR, _enum("adamw", "sgd", "muon", "sign_sgd")),
    "trainer.optim.lr": (FLOAT, _rng(0, lo_open=True)),
    "trainer.optim.weight_decay": (FLOAT, _rng(0)),
    "trainer.optim.max_norm": (FLOAT, _rng(0, lo_open=True)),
    "trainer.loss.type": (STR, _enum("default", "ipo", "custom")),
    "trainer.loss.dppo_mask_low": (FLOAT, _rng(0)),
    "trainer.loss.dppo_mask_high": (FLOAT, _rng(0)),
    "trainer.loss.ipo_threshold": (FLOAT, _rng(0)),
    "trainer.loss.adv_tau": (FLOAT, None),
    "trainer.loss.kl_tau": (FLOAT, _rng(0)),
    "trainer.loss.import_path": (STR, None),
    "trainer.loss.kwargs": (TABLE, None),
    "trainer.loss.kwargs.**": (ANY, None),
}

# Which algo keys each type takes (the algorithm configs); `type` and `sampling` are common to all.
ALGO_KEYS = {
    "grpo": {"length_penalty"},
    "echo": {"length_penalty", "roles", "filter"},
    "max_rl": set(),
    "rae": {"decay"},
    "hierarchical_grpo": {"episode_agents"},
    "opd": {"teacher"},
    "opsd": {"demo_key", "template", "renderer"},  # renderer: a table {name}
    "sft": set(),
}
# Which loss keys each loss type takes (the loss configs).
LOSS_KEYS = {
    "default": {"dppo_mask_low", "dppo_mask_high", "adv_tau", "kl_tau"},
    "ipo": {"ipo_threshold", "adv_tau", "kl_tau"},
    "custom": {"import_path", "kwargs"},
}


def leaf_paths(config: dict, prefix: str = "") -> dict[str, Any]:
    """Flatten to {path: value}; list items become `[]`; an empty table is a leaf with value {}."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and value:
            out.update(leaf_paths(value, path))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                out.update(leaf_paths(item, path + "[]"))
        else:
            out[path] = value
    return out


def _match(path: str) -> tuple[str, Any] | None:
    if path in TABLE_PATHS:
        return TABLE_PATHS[path]
    for pattern, spec in TABLE_PATHS.items():
        if pattern.endswith(".**"):
            if path.startswith(pattern[:-3] + "."):
                return spec
        elif "*" in pattern and fnmatch.fnmatchcase(path, pattern) and path.count(".") == pattern.count("."):
            return spec
    return None


def _kind_ok(kind: str, value: Any) -> bool:
    if kind == ANY:
        return True
    if kind == TABLE:
        return isinstance(value, dict)
    if kind == LIST:
        return isinstance(value, list)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == FLOAT:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == STR:
        return isinstance(value, str)
    raise AssertionError(kind)


def check(config: dict) -> list[str]:
    """Errors for an `rl` config; empty when it would load at 559b44772 as far as this table knows."""
    errors: list[str] = []
    for top in ("trainer", "orchestrator"):  # RLConfig's two required fields
        if top not in config:
            errors.append(f"{top}: required")
    for path, value in leaf_paths(config).items():
        spec = _match(path)
        if spec is None:
            errors.append(f"{path}: unknown key")
            continue
        kind, test = spec
        if value == {} and kind in (TABLE, ANY):
            continue
        if not _kind_ok(kind, value):
            errors.append(f"{path}: wrong type {type(value).__name__}")
            continue
        if test is not None and (msg := test(value)):
            errors.append(f"{path}: {msg}")

    orch = config.get("orchestrator", {})
    algo = orch.get("algo", {})
    kind = algo.get("type", "grpo")
    if kind in ALGO_KEYS:
        extra = set(algo) - {"type", "sampling"} - ALGO_KEYS[kind]
        errors += [f"orchestrator.algo.{k}: not a key of algo type {kind}" for k in sorted(extra)]
    if kind == "opd":
        teacher = algo.get("teacher")
        if not isinstance(teacher, dict) or not teacher.get("name"):
            errors.append("orchestrator.algo.teacher: opd needs a served teacher {name, base_url}")
    loss = config.get("trainer", {}).get("loss", {})
    ltype = loss.get("type", "default")
    if ltype in LOSS_KEYS:
        extra = set(loss) - {"type"} - LOSS_KEYS[ltype]
        errors += [f"trainer.loss.{k}: not a key of loss type {ltype}" for k in sorted(extra)]

    group = orch.get("group_size", 1)
    batch = orch.get("batch_size")
    if isinstance(batch, int) and isinstance(group, int) and group > 0 and batch % group:
        errors.append("orchestrator.batch_size: not divisible by group_size")
    for part in ("train", "eval"):
        for i, src in enumerate(orch.get(part, {}).get("source", []) or []):
            if not src.get("env", {}).get("taskset", {}).get("id"):
                errors.append(f"orchestrator.{part}.source[{i}]: no env configured (env.taskset.id)")
    if "eval" in orch and not orch["eval"].get("source"):
        errors.append("orchestrator.eval: needs an eval source")
    errors += env_file_errors(config)
    dep = config.get("deployment", {})
    if dep.get("type", "single_node") == "single_node" and \
            dep.get("num_train_gpus", 1) + dep.get("num_infer_gpus", 1) > dep.get("gpus_per_node", 8):
        errors.append("deployment: more GPUs than gpus_per_node")
    # Cross-field rules of RLConfig (configs/rl.py): multi-node needs [slurm]; an orchestrator LoRA rank
    # must equal the trainer's; LoRA cannot ride an in-memory weight broadcast.
    if dep.get("type") == "multi_node" and "slurm" not in config:
        errors.append("deployment: multi_node needs [slurm]")
    t_lora = config.get("trainer", {}).get("model", {}).get("lora")
    o_lora = orch.get("model", {}).get("lora", {})
    if t_lora is not None and "rank" in o_lora and o_lora["rank"] != t_lora.get("rank", 16):
        errors.append("orchestrator.model.lora.rank: conflicts with trainer.model.lora.rank")
    if t_lora is not None and config.get("weight_broadcast", {}).get("type") in ("nccl", "nixl"):
        errors.append("weight_broadcast: LoRA needs filesystem")
    for shared, sub in (("seq_len", ("orchestrator", "seq_len")), ("max_steps", ("orchestrator", "max_steps"))):
        val = config.get(sub[0], {}).get(sub[1])
        if shared in config and val is not None and val != config[shared]:
            errors.append(f"{'.'.join(sub)}: conflicts with shared {shared}")
    return errors


def _resolved_name(src: dict) -> str:
    """EnvConfig.resolved_name (prime-rl packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py:146-147):
    `name or env_id`; env_id is `<env.id>+<taskset.id>`, or whichever is set (verifiers v1/configs/env.py:64-68)."""
    env = src.get("env", {})
    ids = [x for x in (env.get("id"), env.get("taskset", {}).get("id")) if x]
    return src.get("name") or "+".join(ids)


def env_file_errors(config: dict) -> list[str]:
    """prime-rl's write_subconfigs (src/prime_rl/entrypoints/rl.py:77-111 at 559b44772, run by `rl` and
    `rl --dry-run`) makes configs/envs/<train|eval>/ (line 102-103) and opens `<resolved_name>.json` in it
    (line 110): a name that is not one path component (a '/', '.', '..') or too long for one fails there.
    Names must also be unique per split (configs/orchestrator.py:287 and 352, validate_unique_env_names)."""
    errors = []
    for part in ("train", "eval"):
        names = [_resolved_name(s) for s in config.get("orchestrator", {}).get(part, {}).get("source", []) or []]
        for i, name in enumerate(names):
            file = PurePosixPath(f"{name}.json")
            if not name or name in (".", "..") or "\\" in name or file.parent != PurePosixPath(".") \
                    or len(file.name.encode()) > 255:
                errors.append(f"orchestrator.{part}.source[{i}].name: {name!r} is not one file name under "
                              f"configs/envs/{part}/ (write_subconfigs)")
        errors += [f"orchestrator.{part}.source: duplicate name {n!r}" for n in sorted({n for n in names
                                                                                       if names.count(n) > 1})]
    return errors
