"""prime-rl's `rl` TOML schema at the targeted commit: keys, types and ranges, and ``check_keys``.

prime-rl does not ship its config classes to PyPI, so a writer has to carry the schema itself. This
is this package's copy of it, from the config classes in prime-rl's ``packages/prime-rl-configs`` at 559b44772
(github.com/PrimeIntellect-ai/prime-rl) and the example configs there (field names, types and bounds are facts
copied from them); the cross-field rules are in ``rules.py``, the version notes at the end of this file. Nothing
here knows about methods.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pick_a_method.trainers.prime_rl.constants import PRIME_RL_TAG
from pick_a_method.trainers.prime_rl.renderers import RENDERER_NAMES

# ================================================================================================
# The schema of prime-rl's `rl` TOML at 559b44772, the tables a config writer emits or a caller overrides.
# Tables listed with their fields reject unknown keys (pydantic_config's BaseConfig sets extra="forbid"; prime-rl's
# [inference.vllm] alone is extra="allow"). Sub-configs listed without their fields are `_Open`: accepted here
# unchecked, and prime-rl checks them at load time.
# ================================================================================================


@dataclass(frozen=True)
class _Leaf:
    kind: str  # int | float | str | bool | list | dict
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[Any, ...] | None = None
    nonempty: bool = False
    nullable: bool = False  # TOML has no null: the string "None" means None (pydantic_config's TOML loader)


@dataclass(frozen=True)
class _Table:
    fields: dict[str, Any]
    open: bool = False  # extra keys accepted (checked by prime-rl, not here)
    required: tuple[str, ...] = ()
    seats: bool = False  # unknown table-valued keys are agent seats (multi-agent envs)


@dataclass(frozen=True)
class _Union:
    variants: dict[str, _Table]
    default: str
    key: str = "type"


@dataclass(frozen=True)
class _ListOf:
    item: Any


@dataclass(frozen=True)
class _Open:
    why: str
    must_be_table: bool = True


def _int(**kw: Any) -> _Leaf:
    return _Leaf("int", **kw)


def _float(**kw: Any) -> _Leaf:
    return _Leaf("float", **kw)


def _str(**kw: Any) -> _Leaf:
    return _Leaf("str", **kw)


_BOOL = _Leaf("bool")
_DICT = _Leaf("dict")
_LIST = _Leaf("list")
_UNLISTED = _Open("this copy names the sub-config without its fields; prime-rl checks it")

_SAMPLING_TRAIN = _Table(
    {
        "temperature": _float(ge=0.0, le=2.0),
        "max_completion_tokens": _int(ge=1, nullable=True),
        "extra_body": _DICT,
    }
)
_CLIENT = _Table(
    {
        "base_url": _str(nonempty=True),
        "api_key_var": _str(),
        "headers": _DICT,
        "headers_from_env": _DICT,
        "skip_model_check": _BOOL,
        "admin_base_url": _str(nullable=True),
        "wait_for_ready_timeout": _int(ge=0),
    }
)
_AGENT = _Table(
    {
        "harness": _Table({"id": _str(nonempty=True)}, open=True),
        "runtime": _Union(
            {
                "prime": _Table({}, open=True),
                "subprocess": _Table({}, open=True),
                "docker": _Table({}, open=True),
                "modal": _Table({}, open=True),
            },
            default="prime",
        ),
        "model": _str(),
        "client": _Open("client fields of the seat"),
        "sampling": _Open("sampling fields of the seat"),
        "max_turns": _int(ge=1),
        "max_input_tokens": _int(ge=1),
        "max_output_tokens": _int(ge=1),
        "max_total_tokens": _int(ge=1),
        "timeout": _float(gt=0),
        "retries": _int(ge=0),
    }
)
_ENV = _Table(
    {
        "id": _str(nonempty=True),
        "taskset": _Table({"id": _str(nonempty=True)}, open=True, required=("id",)),
        "agent": _AGENT,
        "timeout": _Table({"episode": _float(gt=0), "finalize": _float(gt=0)}),
        "retries": _int(ge=0),
        "max_concurrent_agents": _int(ge=1),
        "interception": _UNLISTED,
    },
    required=("taskset",),
    seats=True,
)
_SAMPLING_SOURCE = _Table({"source": _Leaf("any")})
_LENGTH_PENALTY = _Union(
    {
        "linear": _Table(
            {
                "num_output_tokens_weight": _float(),
                "num_input_tokens_weight": _float(),
                "num_turns_weight": _float(),
            }
        )
    },
    default="linear",
)
_ALGO = _Union(
    {
        "grpo": _Table({"sampling": _SAMPLING_SOURCE, "length_penalty": _LENGTH_PENALTY}),
        "echo": _Table(
            {
                "sampling": _SAMPLING_SOURCE,
                "length_penalty": _LENGTH_PENALTY,
                "roles": _UNLISTED,
                "filter": _Table({"import_path": _str(nonempty=True), "kwargs": _DICT}),
            }
        ),
        "max_rl": _Table({"sampling": _SAMPLING_SOURCE}),
        "rae": _Table({"sampling": _SAMPLING_SOURCE, "decay": _float(ge=0.0, lt=1.0)}),
        "hierarchical_grpo": _Table(
            {"sampling": _SAMPLING_SOURCE, "episode_agents": _LIST}, required=("episode_agents",)
        ),
        "opd": _Table(
            {
                "sampling": _SAMPLING_SOURCE,
                "teacher": _Table(
                    {"name": _str(nonempty=True), **_CLIENT.fields}, open=True, required=("name",)
                ),
            },
            required=("teacher",),
        ),
        "opsd": _Table(
            {
                "sampling": _SAMPLING_SOURCE,
                "demo_key": _str(nonempty=True),
                "template": _str(nonempty=True),
                "renderer": _Table({"name": _str(choices=RENDERER_NAMES)}, open=True),
            }
        ),
        "sft": _Table({"sampling": _SAMPLING_SOURCE}, required=("sampling",)),
    },
    default="grpo",
)
_SOURCE = _Table(
    {
        "name": _str(nonempty=True),
        "ratio": _float(gt=0),
        "group_size": _int(ge=1),
        "algo": _ALGO,
        "sampling": _SAMPLING_TRAIN,
        "curriculum": _UNLISTED,
        "serve": _UNLISTED,
        "env": _ENV,
    },
    required=("env",),
)
_EVAL_SAMPLING = _Table(
    {
        "temperature": _float(ge=0.0, le=2.0),
        "top_p": _float(gt=0.0, le=1.0),
        "top_k": _int(),
        "min_p": _float(ge=0.0, le=1.0),
        "max_completion_tokens": _int(ge=1, nullable=True),
        "reasoning_effort": _str(nullable=True, choices=("minimal", "low", "medium", "high", "None")),
        "extra_body": _DICT,
    }
)
# An eval source (EvalSourceConfig): the env blocks of a train source without algo / curriculum, plus
# its own num_examples, group_size and interval (configs/orchestrator.py).
_EVAL_SOURCE = _Table(
    {
        "name": _str(nonempty=True),
        "ratio": _float(gt=0),
        "serve": _UNLISTED,
        "env": _ENV,
        "sampling": _EVAL_SAMPLING,
        "num_examples": _int(ge=-1),
        "group_size": _int(ge=1),
        "interval": _int(ge=1),
    },
    required=("env",),
)
_WANDB = _Table(
    {
        "project": _str(nonempty=True),
        "entity": _str(nonempty=True, nullable=True),
        "name": _str(nonempty=True, nullable=True),
        "group": _str(nullable=True),
        "tags": _LIST,
        "offline": _BOOL,
    }
)
_RESUME = _Table({"step": _int(ge=1), "dir": _str(nonempty=True)})
_TOKENIZER = _Table({"name": _str(), "trust_remote_code": _BOOL, "chat_template": _str(nullable=True)})
_CKPT_KEEP = {"interval": _int(ge=1), "keep_last": _int(ge=1), "keep_interval": _int(ge=1)}
_ORCHESTRATOR = _Table(
    {
        "algo": _ALGO,
        "model": _Table(
            {
                "name": _str(nonempty=True),
                "trust_remote_code": _BOOL,
                "vlm": _BOOL,
                "lora": _Table({"name": _str(), "rank": _int(ge=1), "alpha": _float(ge=0)}),
                "client": _CLIENT,
            }
        ),
        "batch_size": _int(ge=1, nullable=True),
        "token_batch_size": _int(ge=1, nullable=True),
        "group_size": _int(ge=1),
        "seq_len": _int(ge=1),
        "max_steps": _int(ge=1, nullable=True),
        "max_off_policy_steps": _int(ge=0),
        "train": _Table(
            {"sampling": _SAMPLING_TRAIN, "filter_zero_advantages": _BOOL, "source": _ListOf(_SOURCE)}
        ),
        "eval": _Table(
            {
                "source": _ListOf(_EVAL_SOURCE),
                "sampling": _EVAL_SAMPLING,
                "num_examples": _int(ge=-1),
                "group_size": _int(ge=1),
                "interval": _int(ge=1),
                "skip_first_step": _BOOL,
                "retrigger_on_resume": _BOOL,
            }
        ),
        "renderer": _Table({"name": _str(choices=RENDERER_NAMES)}, open=True),
        "tokenizer": _TOKENIZER,
        "concurrency": _Table(
            {"initial_inflight": _int(ge=1), "min_inflight": _int(ge=1), "max_inflight": _int(ge=1)}
        ),
        "tasks_per_minute": _float(gt=0, nullable=True),
        "env_server_base_port": _int(ge=1, le=65535),
        "ckpt": _Table({**_CKPT_KEEP, "wait_for_weights_timeout": _int(ge=1), "skip_progress": _BOOL}),
        "resume": _RESUME,
        "monitors": _Table({"wandb": _WANDB, "file": _Table({"path": _str()}), "prime": _Table({"name": _str()})}),
        "log": _UNLISTED,
        "env_vars": _DICT,
        "output_dir": _str(nonempty=True),
        "heartbeat": _UNLISTED,
        "weight_broadcast": _UNLISTED,
        "rollout_transport": _UNLISTED,
        "num_train_workers": _int(ge=1),
        "pad_to_multiple_of": _int(ge=1),
    }
)
_TRAINER = _Table(
    {
        "model": _Table(
            {
                "name": _str(nonempty=True),
                "seq_len": _int(ge=1),
                "impl": _str(choices=("auto", "hf", "custom")),
                "attn": _str(),
                "cp": _int(ge=1),
                "cp_style": _str(),
                "ep": _Leaf("any"),
                "dp_replicate": _int(ge=1),
                "optimization_dtype": _str(),
                "reduce_dtype": _str(),
                "compile": _UNLISTED,
                "ac": _UNLISTED,
                "ac_offloading": _UNLISTED,
                "optim_cpu_offload": _BOOL,
                "fsdp_cpu_offload": _BOOL,
                "full_offload": _BOOL,
                "quantization": _UNLISTED,
                "lora": _Table(
                    {
                        "rank": _int(ge=1),
                        "alpha": _float(ge=0),
                        "dropout": _float(ge=0.0, le=1.0),
                        "target_modules": _LIST,
                        "modules_to_save": _LIST,
                    }
                ),
            }
        ),
        "optim": _Union(
            {
                "adamw": _Table(
                    {
                        "lr": _float(gt=0),
                        "weight_decay": _float(ge=0),
                        "max_norm": _float(gt=0),
                        "betas1": _float(ge=0, lt=1),
                        "betas2": _float(ge=0, lt=1),
                    }
                ),
                "sgd": _Table({"lr": _float(gt=0)}, open=True),
                "muon": _Table({"lr": _float(gt=0)}, open=True),
                "sign_sgd": _Table({"lr": _float(gt=0)}, open=True),
            },
            default="adamw",
        ),
        "scheduler": _Union(
            {
                "constant": _Table({}),
                "linear": _Table(
                    {"warmup_steps": _int(ge=0), "decay_steps": _int(ge=0), "min_lr": _float(ge=0)}
                ),
                "cosine": _Table({"warmup_steps": _int(ge=0), "min_lr": _float(ge=0)}),
            },
            default="constant",
        ),
        "loss": _Union(
            {
                "default": _Table(
                    {
                        "dppo_mask_low": _float(ge=0),
                        "dppo_mask_high": _float(ge=0),
                        "adv_tau": _float(),
                        "kl_tau": _float(ge=0),
                    }
                ),
                "ipo": _Table({"ipo_threshold": _float(ge=0), "adv_tau": _float(), "kl_tau": _float(ge=0)}),
                "custom": _Table({"import_path": _str(nonempty=True), "kwargs": _DICT}, required=("import_path",)),
            },
            default="default",
        ),
        "ckpt": _Table(
            {
                **_CKPT_KEEP,
                "output_dir": _str(nonempty=True),
                "skip_progress": _BOOL,
                "skip_scheduler": _BOOL,
                "skip_dataloader": _BOOL,
                "skip_optimizer": _BOOL,
            }
        ),
        "resume": _RESUME,
        "data": _UNLISTED,
        "monitors": _Table({"wandb": _WANDB, "file": _Table({"path": _str()})}),
        "log": _UNLISTED,
        "gc": _UNLISTED,
        "tokenizer": _TOKENIZER,
        "max_steps": _int(ge=1, nullable=True),
        "output_dir": _str(nonempty=True),
        "weight_broadcast": _UNLISTED,
        "rollout_transport": _UNLISTED,
        "enable_router_replay": _BOOL,
        "enable_token_export": _BOOL,
        "env_vars": _DICT,
        "matmul_precision": _str(),
        "dist_timeout_seconds": _int(ge=1),
    }
)
_INFERENCE = _Table(
    {
        "server": _Table({"host": _str(), "port": _int(ge=1, le=65535)}),
        "router": _Leaf("any"),
        # extra="allow": unknown keys pass through to vLLM as engine arguments; the typed ones are checked.
        "vllm": _Table(
            {
                "model": _str(nonempty=True),
                "max_model_len": _int(ge=1, nullable=True),
                "gpu_memory_utilization": _float(gt=0.0, le=1.0),
                "tensor_parallel_size": _int(ge=1),
                "data_parallel_size": _int(ge=1),
                "enforce_eager": _BOOL,
                "enable_lora": _BOOL,
                "max_lora_rank": _int(ge=1, le=512, nullable=True),
                "chat_template": _str(nullable=True),
                "dtype": _str(choices=("auto", "float16", "bfloat16", "float32")),
            },
            open=True,
        ),
        "kv_cache_offload": _UNLISTED,
        "deployment": _Union(
            {
                "single_node": _Table({"gpus_per_node": _int(ge=1)}),
                "multi_node": _Table({"gpus_per_node": _int(ge=1), "num_nodes": _int(ge=1)}),
                "disaggregated": _Table({}, open=True),
            },
            default="single_node",
        ),
        "slurm": _UNLISTED,
        "env_vars": _DICT,
        "use_deep_gemm": _BOOL,
        "enable_fp32_lm_head": _BOOL,
        "enable_fp32_router_logits": _BOOL,
    }
)
_DEPLOYMENT = _Union(
    {
        "single_node": _Table(
            {"num_train_gpus": _int(ge=1), "num_infer_gpus": _int(ge=0), "gpus_per_node": _int(ge=1)}
        ),
        "multi_node": _Table(
            {
                "gpus_per_node": _int(ge=1),
                "num_train_nodes": _int(ge=1),
                "num_infer_nodes": _int(ge=0),
                "num_infer_replicas": _int(ge=1),
                "nodes_per_fsdp_group": _int(ge=1),
                "orchestrator_on_inference": _BOOL,
            },
            required=("num_train_nodes",),
        ),
    },
    default="single_node",
)
SCHEMA = _Table(
    {
        "trainer": _TRAINER,
        "orchestrator": _ORCHESTRATOR,
        "inference": _INFERENCE,
        "env_vars": _DICT,
        "run": _Table({"name": _str(nonempty=True), "dir": _str(nonempty=True)}),
        "output_dir": _str(nonempty=True),
        "clean": _BOOL,
        "log": _Table({"level": _str(), "json_logging": _BOOL}),
        "ckpt": _Table({**_CKPT_KEEP, "output_dir": _str(nonempty=True)}),
        "resume": _RESUME,
        "monitors": _Table({"wandb": _WANDB, "file": _Table({"path": _str()}), "prime": _Table({"name": _str()})}),
        "model": _Table({"name": _str(nonempty=True), "vlm": _UNLISTED}),
        "tokenizer": _TOKENIZER,
        "max_steps": _int(ge=1),
        "seq_len": _int(ge=1),
        "weight_broadcast": _Union(
            {
                "nccl": _Table({"host": _str(), "port": _int(ge=1, le=65535), "timeout": _int(ge=1),
                                "quantize_in_weight_transfer": _BOOL}),
                "filesystem": _Table({}),
                "nixl": _Table({"host": _str(), "port": _int(ge=1, le=65535), "timeout": _int(ge=1),
                                "session_id": _str()}),
            },
            default="filesystem",
        ),
        "rollout_transport": _UNLISTED,
        "deployment": _DEPLOYMENT,
        # SlurmConfig (configs/shared.py)
        "slurm": _Table(
            {
                "job_name": _str(nonempty=True),
                "project_dir": _str(nonempty=True),
                "template_path": _str(nonempty=True),
                "partition": _str(nonempty=True),
                "nodelist": _str(),
                "exclude": _str(),
                "account": _str(),
                "time": _str(),
                "pre_run_command": _str(),
                "cleanup_grace_period": _int(ge=0),
                "shared_fs": _BOOL,
            }
        ),
        "dry_run": _BOOL,
    },
    required=("trainer", "orchestrator"),
)


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def _check_leaf(spec: _Leaf, value: Any, where: str, problems: list[str]) -> None:
    if spec.nullable and value == "None":
        return
    kind = spec.kind
    if kind == "any":
        return
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "str": isinstance(value, str),
        "bool": isinstance(value, bool),
        "list": isinstance(value, list),
        "dict": isinstance(value, dict),
    }[kind]
    if not ok:
        want = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
                "list": "a list", "dict": "a table"}[kind]
        problems.append(f"{where}: must be {want}; got {_type_name(value)} {value!r}")
        return
    if kind in ("int", "float"):
        if value != value or value in (float("inf"), float("-inf")):
            problems.append(f"{where}: must be finite; got {value!r}")
            return
        bounds = [
            (spec.ge, lambda v, b: v >= b, ">="),
            (spec.gt, lambda v, b: v > b, ">"),
            (spec.le, lambda v, b: v <= b, "<="),
            (spec.lt, lambda v, b: v < b, "<"),
        ]
        for bound, test, sign in bounds:
            if bound is not None and not test(value, bound):
                problems.append(f"{where}: must be {sign} {bound:g}; got {value!r}")
    if kind == "str" and spec.nonempty and not value.strip():
        problems.append(f"{where}: must not be empty")
    if spec.choices is not None and value not in spec.choices:
        problems.append(f"{where}: must be one of {', '.join(map(str, spec.choices))}; got {value!r}")


def _walk(spec: Any, value: Any, where: str, problems: list[str]) -> None:
    if isinstance(spec, _Leaf):
        _check_leaf(spec, value, where, problems)
    elif isinstance(spec, _Open):
        if spec.must_be_table and not isinstance(value, dict):
            problems.append(f"{where}: must be a table; got {_type_name(value)} {value!r}")
    elif isinstance(spec, _ListOf):
        if not isinstance(value, list):
            problems.append(f"{where}: must be a list of tables ([[{where}]]); got {_type_name(value)}")
            return
        for i, item in enumerate(value):
            _walk(spec.item, item, f"{where}.{i}", problems)
    elif isinstance(spec, _Union):
        if not isinstance(value, dict):
            problems.append(f"{where}: must be a table; got {_type_name(value)} {value!r}")
            return
        kind = value.get(spec.key, spec.default)
        variant = spec.variants.get(kind) if isinstance(kind, str) else None
        if variant is None:
            problems.append(
                f"{where}.{spec.key}: must be one of {', '.join(spec.variants)} at prime-rl {PRIME_RL_TAG}; got {kind!r}"
            )
            return
        rest = {k: v for k, v in value.items() if k != spec.key}
        _walk(variant, rest, where, problems)
    elif isinstance(spec, _Table):
        if not isinstance(value, dict):
            problems.append(f"{where or 'the config'}: must be a table; got {_type_name(value)} {value!r}")
            return
        for key in spec.required:
            if key not in value:
                problems.append(f"{_join(where, key)}: required")
        for key, sub in value.items():
            path = _join(where, key)
            if key in spec.fields:
                _walk(spec.fields[key], sub, path, problems)
            elif spec.seats and isinstance(sub, dict):
                _walk(_AGENT, sub, path, problems)  # a multi-agent env's named seat
            elif not spec.open and not spec.seats:
                near = difflib.get_close_matches(key, list(spec.fields), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(
                    f"{path}: not a key prime-rl {PRIME_RL_TAG} accepts here{hint}; "
                    f"known keys: {', '.join(spec.fields) or 'none'}"
                )
    else:  # pragma: no cover - schema construction error
        raise TypeError(f"bad schema node at {where}: {spec!r}")


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def check_keys(config: Mapping[str, Any]) -> list[str]:
    """Keys, types and ranges of an `rl` config against the schema above (the cross-field rules are
    in ``rules.py``)."""
    problems: list[str] = []
    _walk(SCHEMA, dict(config), "", problems)
    return problems


# ================================================================================================
# Version notes: where a key's validity depends on the prime-rl version (the prime-rl pull requests named).
# Each note is reported when the config carries a key under its prefix.
# ================================================================================================

VERSION_NOTES: tuple[tuple[str, str], ...] = (
    (
        "orchestrator.train.source",
        "[[orchestrator.train.source]] with env.taskset.id and env.agent.* exists since #3150 (v0.8.0); "
        "v0.7.x and earlier read [[orchestrator.train.env]] with id/args and reject this key.",
    ),
    (
        "orchestrator.train.source",
        "taskset ids lost their '-v1' suffix in #3226 (after v0.8.0, unreleased at the target): on HEAD an id "
        "such as 'reverse-text-v1' is 'reverse-text'. The id is resolved by importing the taskset package "
        "(dashes become underscores), so it must be installed where `rl` runs.",
    ),
    (
        "orchestrator.algo",
        "[orchestrator.algo] (types grpo, echo, max_rl, opd, opsd, sft) exists since #2746 (v0.7.0); rae since "
        "#3136 (v0.8.0). Before v0.7.0 OPD was training_mode=\"opd\" (v0.6) or teacher_model + teacher_tau.",
    ),
    (
        "orchestrator.group_size",
        "orchestrator.group_size replaced rollouts_per_example in #2599 (v0.6.0); the old name's alias was removed "
        "in #3156 (v0.8.0), so it now fails as an unknown key.",
    ),
    (
        "orchestrator.max_off_policy_steps",
        "orchestrator.max_off_policy_steps is the only staleness key since #2631 (v0.6.0) removed "
        "max_async_level / strict_async_level.",
    ),
    (
        "orchestrator.train.sampling",
        "[orchestrator.train.sampling] max_completion_tokens (per turn) replaced [orchestrator.sampling] max_tokens; "
        "the aliases were removed in #3156 (v0.8.0).",
    ),
    (
        "trainer.loss",
        "[trainer.loss] type=\"ipo\" with ipo_threshold exists since #2798 (v0.6.0); the loss types at the target "
        "are default, ipo and custom. No prime-rl version has an icepop or tis loss; token_mask_* / ipo_mask_* "
        "keys were removed (#1930, #2187).",
    ),
    (
        "orchestrator.renderer",
        "[orchestrator.renderer] name is checked at config time (#2540): 'auto' works only for models listed in "
        "the installed renderers package's MODEL_RENDERER_MAP.",
    ),
)
