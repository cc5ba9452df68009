"""The TOML that prime-rl's ``rl`` command reads, for every method prime-rl can run.

``prime_rl_config(taskset, method, model=...)`` builds the config as a dict, checks every key and
value against this module's copy of prime-rl's schema (prime-rl does not ship its config classes to
PyPI, so a writer has to carry the schema itself), writes it with a TOML library, reads it back, and
returns what it wrote together with which method knobs prime-rl honors (and under which key), which
it cannot honor (and why), warnings, version notes and the launch command.

Target: prime-rl commit 559b44772 (tag v0.8.1.dev67, 2026-08-21). The schema changes from month to
month; every fact used here is cited to ``reference/prime-rl.md`` by section. A method prime-rl
cannot run (FlashReinforce, SAO, BPCO, GroupwiseGrading, ReinforceAda; an ``icepop`` or ``tis``
correction; grpo or max_rl with one rollout per prompt) is refused with a ``ValueError`` that says
why and what to do instead.

Importing this module never imports torch or transformers.
"""

from __future__ import annotations

import difflib
import errno
import os
import re
import shlex
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict

from methods import defaults as D
from routing import defaults as ROUTING
from routing.route import model_params_b
from routing.verdicts import NextStep

__all__ = [
    "PRIME_RL_COMMIT",
    "PRIME_RL_TAG",
    "PrimeRLConfig",
    "prime_rl_config",
    "validate_prime_rl",
]

# ================================================================================================
# prime-rl constants that belong to the config writer only (the method defaults live in
# methods/defaults.py; the launcher defaults used below are read from there too).
# ================================================================================================

# The prime-rl commit whose `rl` schema this writer targets (reference/prime-rl.md, header).
PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
PRIME_RL_TAG = "v0.8.1.dev67"
PRIME_RL_VERSION = f"{PRIME_RL_COMMIT[:9]} ({PRIME_RL_TAG}, 2026-08-21)"

# `[deployment] type="single_node"` defaults gpus_per_node to 8 and requires
# num_train_gpus + num_infer_gpus <= gpus_per_node (prime-rl.md section 2, "GPUs: [deployment]").
PRIME_RL_GPUS_PER_NODE = 8

# The process umask, read once at import (os.umask can only be read by setting it, which is not thread-safe
# later, when the server writes from worker threads).
_UMASK = os.umask(0)
os.umask(_UMASK)

# Prompt tokens budgeted on top of the completion cap when sizing the shared `seq_len`
# (the 4k prompt of defaults.PRIME_RL_SEQ_LEN = 8192 response + 4k prompt). `seq_len` is the packed
# sample length and longer samples are cut (prime-rl.md section 2, [orchestrator] seq_len).
PROMPT_TOKEN_BUDGET = 4096
SEQ_LEN_MULTIPLE = 1024

# Evaluations per run: `[orchestrator.eval] interval = max(1, steps // EVAL_ROUNDS)` (convention).
EVAL_ROUNDS = 4

# Where an OPD teacher is expected when its base_url is not given: prime-rl's own OPD debug config
# serves the teacher on port 8001, next to the student's vLLM on 8000
# (configs/debug/algo/opd.toml, copied in shared/primerl/examples/opd_reverse-text.toml).
OPD_TEACHER_BASE_URL = "http://localhost:8001/v1"
OPD_TEACHER_PORT = 8001


# Below this group size a group-relative advantage is zero on most groups (a binary reward gives a
# split group with probability 1 - p^k - (1-p)^k); we warn, prime-rl accepts any group_size >= 1.
GROUPED_MIN_USEFUL_GROUP = 4

# The single-agent seat shape of every shipped single-agent example (prime-rl.md section 2,
# "The environment reference"; shared/primerl/examples/*): harness "null", local runtime.
AGENT_HARNESS_ID = "null"
AGENT_RUNTIME_TYPE = "subprocess"

# Bundled multi-agent tasksets name their own seats (prime-rl.md section 2: kuhn-poker uses
# env.player0 / env.player1; shared/primerl/examples/rae_kuhn-poker.toml).
MULTI_AGENT_SEATS: dict[str, tuple[str, ...]] = {"kuhn-poker": ("player0", "player1")}

# The algorithm types prime-rl accepts at this commit (prime-rl.md section 3).
ALGO_TYPES = ("grpo", "echo", "max_rl", "rae", "hierarchical_grpo", "opd", "opsd", "sft")
# Algorithms whose advantage is group-relative: one rollout per prompt gives zero advantage.
GROUP_RELATIVE_ALGOS = ("grpo", "max_rl", "echo", "hierarchical_grpo")
# Loss types at this commit (prime-rl.md section 4). There is no `icepop` and no `tis`.
LOSS_TYPES = ("default", "ipo", "custom")

# Known thinking-model name patterns (OPSD can cost points on thinking models: Kaur et al. 2026,
# arXiv:2607.05184). Qwen3 base/hybrid models think by default; the 2507 "Instruct" releases do not.
_THINKING = re.compile(r"(thinking|reason|qwq|deepseek-r1|-r1\b|/r1-|magistral|\bo[134]-)", re.I)
_QWEN3_HYBRID = re.compile(r"qwen3(?![.\d])", re.I)
_NON_THINKING = re.compile(r"(instruct-2507|nothink|non-thinking|coder|-base\b)", re.I)

_TASKSET_ID = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?(@[A-Za-z0-9][A-Za-z0-9._+-]*)?$"
)

# ================================================================================================
# The schema of prime-rl's `rl` TOML at 559b44772, as far as reference/prime-rl.md documents it.
# Tables listed with their fields reject unknown keys (prime-rl sets extra="forbid" everywhere but
# [inference.vllm], section 1). Sub-configs the reference names without listing their fields are
# `_Open`: accepted here unchecked, and prime-rl checks them at load time.
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
    nullable: bool = False  # TOML has no null: the string "None" means None (section 1)


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
_UNLISTED = _Open("the reference names this sub-config without its fields; prime-rl checks it")

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
                "renderer": _Table({"name": _str(nonempty=True)}, open=True),
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
        "reasoning_effort": _str(nullable=True),
        "extra_body": _DICT,
    }
)
_ORCHESTRATOR = _Table(
    {
        "algo": _ALGO,
        "model": _Table(
            {
                "name": _str(nonempty=True),
                "trust_remote_code": _BOOL,
                "vlm": _BOOL,
                "lora": _Table({"name": _str(), "rank": _int(ge=1), "alpha": _float(gt=0)}),
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
                "source": _ListOf(_SOURCE),
                "sampling": _EVAL_SAMPLING,
                "num_examples": _int(ge=-1),
                "group_size": _int(ge=1),
                "interval": _int(ge=1),
                "skip_first_step": _BOOL,
                "retrigger_on_resume": _BOOL,
            }
        ),
        "renderer": _Table({"name": _str(nonempty=True)}, open=True),
        "tokenizer": _UNLISTED,
        "concurrency": _Table(
            {"initial_inflight": _int(ge=1), "min_inflight": _int(ge=1), "max_inflight": _int(ge=1)}
        ),
        "tasks_per_minute": _float(gt=0, nullable=True),
        "env_server_base_port": _int(ge=1, le=65535),
        "ckpt": _UNLISTED,
        "resume": _UNLISTED,
        "monitors": _UNLISTED,
        "log": _UNLISTED,
        "env_vars": _DICT,
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
                        "alpha": _float(gt=0),
                        "dropout": _float(ge=0.0, lt=1.0),
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
        "ckpt": _UNLISTED,
        "resume": _UNLISTED,
        "data": _UNLISTED,
        "monitors": _UNLISTED,
        "log": _UNLISTED,
        "gc": _UNLISTED,
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
        "vllm": _Open("passed through to vLLM as engine arguments (extra='allow' in prime-rl)"),
        "kv_cache_offload": _UNLISTED,
        "deployment": _UNLISTED,
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
                "num_train_nodes": _int(ge=1),
                "num_infer_nodes": _int(ge=0),
                "num_infer_replicas": _int(ge=1),
                "nodes_per_fsdp_group": _int(ge=1),
                "orchestrator_on_inference": _BOOL,
            }
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
        "log": _UNLISTED,
        "ckpt": _Table(
            {"interval": _int(ge=1), "keep_last": _int(ge=1), "keep_interval": _int(ge=1), "output_dir": _str()}
        ),
        "resume": _Table({"step": _int(ge=0), "dir": _str()}),
        "monitors": _Table(
            {
                "wandb": _Open("W&B fields"),
                "file": _Table({"path": _str()}),
                "prime": _Table({"name": _str()}),
            }
        ),
        "model": _Table({"name": _str(nonempty=True), "vlm": _BOOL}),
        "tokenizer": _Table({"name": _str(), "trust_remote_code": _BOOL, "chat_template": _str(nullable=True)}),
        "max_steps": _int(ge=1),
        "seq_len": _int(ge=1),
        "weight_broadcast": _Union(
            {"nccl": _Table({}, open=True), "filesystem": _Table({}, open=True), "nixl": _Table({}, open=True)},
            default="nccl",
        ),
        "rollout_transport": _UNLISTED,
        "deployment": _DEPLOYMENT,
        "slurm": _UNLISTED,
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


def _get(d: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    node: Any = d
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def validate_prime_rl(config: Mapping[str, Any]) -> list[str]:
    """Problems prime-rl's config loader would report for this `rl` config (empty when it is fine).

    Checks keys, types and ranges against the schema above, plus the cross-field rules that prime-rl
    applies at config time (reference/prime-rl.md sections 1-4, 7). It cannot check taskset-specific
    keys (they need the taskset package installed), keys inside [inference.vllm], or anything that
    fails only at launch (section 5).
    """
    problems: list[str] = []
    _walk(SCHEMA, dict(config), "", problems)
    if problems:
        return problems
    orch = config.get("orchestrator", {})
    trainer = config.get("trainer", {})

    # Shared keys conflict with a different sub-config value (section 1, "Shared (top-level) keys").
    for shared, subs in (
        ("model.name", ("trainer.model.name", "orchestrator.model.name", "inference.vllm.model")),
        ("max_steps", ("trainer.max_steps", "orchestrator.max_steps")),
        ("seq_len", ("trainer.model.seq_len", "orchestrator.seq_len")),
    ):
        top = _get(config, shared)
        for sub in subs:
            val = _get(config, sub)
            if top is not None and val is not None and val != top:
                problems.append(f"{sub}: {val!r} conflicts with the shared {shared} = {top!r}; set it in one place")
    t_len = _get(config, "trainer.model.seq_len", config.get("seq_len"))
    o_len = _get(config, "orchestrator.seq_len", config.get("seq_len"))
    if t_len is not None and o_len is not None and t_len < o_len:
        problems.append(f"trainer.model.seq_len ({t_len}) must be >= orchestrator.seq_len ({o_len})")

    # Batch: one of batch_size / token_batch_size, batch_size divisible by group_size (section 2).
    group = orch.get("group_size", 1)
    batch = orch.get("batch_size")
    if batch not in (None, "None") and orch.get("token_batch_size") not in (None, "None"):
        problems.append("orchestrator: set batch_size or token_batch_size, not both")
    if isinstance(batch, int) and batch % group:
        problems.append(
            f"orchestrator.batch_size ({batch}) must be divisible by orchestrator.group_size ({group})"
        )
    for key, val in (orch.get("concurrency") or {}).items():
        if val < group:
            problems.append(f"orchestrator.concurrency.{key} ({val}) must be >= group_size ({group})")

    # Algorithms: opd needs a served teacher; only sft may sample from a frozen model (section 3).
    algos = [("orchestrator.algo", orch.get("algo", {"type": "grpo"}))]
    sources = _get(config, "orchestrator.train.source", []) or []
    for i, src in enumerate(sources):
        if "algo" in src:
            algos.append((f"orchestrator.train.source.{i}.algo", src["algo"]))
    for where, algo in algos:
        kind = algo.get("type", "grpo")
        src = _get(algo, "sampling.source", "policy")
        if kind == "sft":
            if not isinstance(src, dict) or not src.get("name"):
                problems.append(f"{where}.sampling.source: sft needs a frozen model {{name, base_url}}")
        elif src != "policy":
            problems.append(f"{where}.sampling.source: {kind} must sample from \"policy\"; got {src!r}")

    # Train and eval sources: names unique, `agg` reserved (section 2).
    for part in ("train", "eval"):
        srcs = _get(config, f"orchestrator.{part}.source", []) or []
        names = [s.get("name", _get(s, "env.taskset.id")) for s in srcs]
        for name in {n for n in names if names.count(n) > 1}:
            problems.append(f"orchestrator.{part}.source: name {name!r} is used twice; names must be unique")
        if "agg" in names:
            problems.append(f"orchestrator.{part}.source: the name 'agg' is reserved")
    if "eval" in orch and not _get(config, "orchestrator.eval.source"):
        problems.append("orchestrator.eval: needs at least one [[orchestrator.eval.source]]")

    # GPUs (section 2, "GPUs: [deployment]").
    dep = config.get("deployment", {})
    if dep.get("type", "single_node") == "single_node":
        n_train = dep.get("num_train_gpus", 1)
        n_infer = dep.get("num_infer_gpus", 1)
        per_node = dep.get("gpus_per_node", PRIME_RL_GPUS_PER_NODE)
        if n_train + n_infer > per_node:
            problems.append(
                f"deployment: num_train_gpus + num_infer_gpus = {n_train + n_infer} exceeds gpus_per_node = {per_node}"
            )
        tp = _get(config, "inference.vllm.tensor_parallel_size", 1)
        if isinstance(tp, int) and tp > 0 and "inference" in config and n_infer % tp:
            problems.append(
                f"deployment.num_infer_gpus ({n_infer}) must be divisible by inference.vllm.tensor_parallel_size ({tp})"
            )
    lora = _get(config, "trainer.model.lora")
    broadcast = _get(config, "weight_broadcast.type")
    if lora is not None and broadcast in ("nccl", "nixl"):
        problems.append(f"weight_broadcast.type = {broadcast!r} cannot carry LoRA weights; use \"filesystem\"")
    if _get(config, "monitors.wandb.offline") is True:
        problems.append("monitors.wandb.offline: rejected under `rl` (W&B shared mode is always on)")
    if _get(trainer, "scheduler.type") in ("linear", "cosine") and config.get("max_steps") is None and \
            _get(trainer, "max_steps") is None:
        problems.append("trainer.scheduler: linear and cosine schedules need max_steps")
    return problems


# ================================================================================================
# Version notes: where a key's validity depends on the prime-rl version (prime-rl.md section 6).
# Each note is reported when the config carries a key under its prefix.
# ================================================================================================

_VERSION_NOTES: tuple[tuple[str, str], ...] = (
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


# ================================================================================================
# The result
# ================================================================================================


class PrimeRLConfig(BaseModel):
    """What ``prime_rl_config`` wrote (or would write), and how prime-rl will read it."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["written", "ready"]
    summary: str
    next_step: NextStep
    warnings: list[str]
    path: str | None
    text: str
    config: dict[str, Any]
    method: str
    model: str
    taskset: str
    gpus: dict[str, int]
    honored: dict[str, str]
    ignored: dict[str, str]
    command: str
    prime_rl_version: str
    prime_rl_commit: str
    version_notes: list[str]

    def __str__(self) -> str:  # a short human-readable view; the TOML is in `text`
        lines = [self.summary, f"run: {self.command}"]
        lines += [f"honored: {k} -> {v}" for k, v in self.honored.items()]
        lines += [f"ignored: {k}: {v}" for k, v in self.ignored.items()]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


# ================================================================================================
# Refusals for methods prime-rl cannot run (prime-rl.md sections 3 and 4)
# ================================================================================================

_WHY_NOT_SINGLE_ROLLOUT = (
    "prime-rl's reward advantages are group-relative (grpo, max_rl: zero with one rollout per prompt) or an "
    "EMA baseline (rae); it has no batch-mean baseline, no sequence-level trust region and no value critic in "
    f"{PRIME_RL_TAG}, so {{name}} {{needs}} has nowhere to go. Writing the 'nearest' config under {{name}}'s name "
    "would train a different method."
)
_FIX_SINGLE_ROLLOUT = (
    "Fix: run {name}'s own update rule in your trainer (methods.make_method({name!r}).update(batch); the "
    "preview_update tool shows what it keeps on a logged batch), or ask this tool for method='rae' with "
    "knobs={{'group_size': 1}} (REINFORCE with an EMA baseline, which prime-rl runs at one rollout per prompt)."
)
_REFUSED: dict[str, tuple[str, str]] = {
    "flash_reinforce": ("FlashReinforce", "(a batch-mean baseline and a sequence trust gate)"),
    "sao": ("SAO", "(a value critic with length-adaptive GAE)"),
    "bpco": ("BPCO", "(a bounded value critic and a clipped DPPO step)"),
}


def _refuse_other(name: str) -> None:
    if name in _REFUSED:
        label, needs = _REFUSED[name]
        raise ValueError(
            f"prime-rl cannot run {label}: "
            + _WHY_NOT_SINGLE_ROLLOUT.format(name=label, needs=needs)
            + " "
            + _FIX_SINGLE_ROLLOUT.format(name=name)
        )
    if name == "groupwise_grading":
        raise ValueError(
            "prime-rl has no groupwise-grading algorithm: GroupwiseGrading reshapes rewards or advantages inside "
            "each group with a grader, and prime-rl's advantages come from the taskset's reward alone. Fix: put "
            "the grading into the taskset's reward function, then ask for method='grpo' (or run "
            "GroupwiseGrading.update in your own trainer)."
        )
    if name == "reinforce_ada":
        raise ValueError(
            "prime-rl has no adaptive sampling: ReinforceAda keeps drawing rollouts for a prompt until its group "
            "splits, and prime-rl draws a fixed group_size per prompt. Fix: ask for method='grpo' with a larger "
            "group_size (e.g. knobs={'group_size': 16}, with a batch that is a multiple of it), or run "
            "ReinforceAda in your own sampler."
        )
    raise ValueError(
        f"prime-rl_config writes grpo, max_rl, rae, opd, opsd and async variants of them; {name!r} is not one. "
        "Fix: pick one of those methods."
    )


# ================================================================================================
# Argument checks
# ================================================================================================


def _as_int(name: str, value: Any, lo: int, fix: str) -> int:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer()
    if not ok:
        raise ValueError(f"{name} must be a whole number >= {lo}; got {value!r}. {fix}")
    value = int(value)
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}; got {value}. {fix}")
    return value


def _check_model(model: Any) -> str:
    if not isinstance(model, str) or not model.strip():
        raise ValueError(
            "model is required: the Hugging Face id or local folder of the model to train, e.g. "
            "model='Qwen/Qwen3-8B' (prime-rl's [model] name)."
        )
    model = model.strip()
    if _is_placeholder(model):
        raise ValueError(
            f"model {model!r} is a placeholder: replace it with the Hugging Face id or local folder of the model "
            "to train, e.g. 'Qwen/Qwen3-8B'."
        )
    if any(ord(c) < 32 or c == "\x7f" for c in model):
        raise ValueError(f"model must be one line of text (a Hugging Face id or a folder); got {model!r}")
    return model


def _check_taskset(taskset: Any) -> str:
    if not isinstance(taskset, str) or not taskset.strip():
        raise ValueError(
            "taskset must be a verifiers taskset id such as 'reverse-text' or 'owner/name@version' "
            f"(prime-rl's env.taskset.id); got {taskset!r}"
        )
    text = taskset.strip()
    if _is_placeholder(text):
        raise ValueError(
            f"taskset {text!r} is a placeholder: replace it with the id of the installed verifiers taskset to train "
            "on (prime-rl's env.taskset.id), e.g. 'reverse-text'."
        )
    if not _TASKSET_ID.match(text):
        looks_like_path = "/" in text and (text.startswith((".", "/", "~")) or text.count("/") > 1)
        hint = (
            " prime-rl addresses tasksets by the id of an installed taskset package, not by a folder: install "
            "the package (uv pip install -e <folder>) and pass its id."
            if looks_like_path
            else " Use letters, digits, '.', '_' and '-' (optionally 'owner/name' and '@version')."
        )
        raise ValueError(f"taskset {text!r} is not a taskset id.{hint}")
    return text


def _is_placeholder(text: str) -> bool:
    return text.startswith("<") and text.endswith(">")


def _split_gpus(gpus: Any) -> tuple[int, int]:
    fix = (
        "prime-rl's `rl` runs vLLM inference and the trainer on separate GPUs, so it needs at least 2 "
        "(one each); pass gpus=2 or more, or {'inference': n, 'trainer': m}."
    )
    if isinstance(gpus, Mapping):
        unknown = set(gpus) - {"inference", "trainer"}
        if unknown or len(gpus) != 2:
            raise ValueError(f"gpus as a mapping takes exactly 'inference' and 'trainer'; got {dict(gpus)!r}")
        n_inf = _as_int("gpus['inference']", gpus["inference"], 1, fix)
        n_tr = _as_int("gpus['trainer']", gpus["trainer"], 1, fix)
        return n_inf, n_tr
    total = _as_int("gpus", gpus, D.PRIME_RL_GPUS, fix)
    return total // 2, total - total // 2


def _is_thinking(model: str) -> bool:
    if _NON_THINKING.search(model):
        return False
    return bool(_THINKING.search(model) or _QWEN3_HYBRID.search(model))


def _resolve_method(method: Any, knobs: Mapping[str, Any] | None) -> Any:
    from methods.objects import Method, make_method  # lazy: methods/__init__ may import this module

    if knobs is not None and not isinstance(knobs, Mapping):
        raise ValueError(f"knobs must be a mapping of the method's knobs, e.g. {{'group_size': 4}}; got {knobs!r}")
    if isinstance(method, Method):
        if knobs:
            raise ValueError(
                "knobs apply only when method is given by name; build the object with its knobs instead "
                f"(got {type(method).__name__} and knobs {dict(knobs)!r})"
            )
        return method
    if isinstance(method, Mapping):  # {"name": "grpo", **knobs}, as JSON clients may send it
        spec = dict(method)
        name = spec.pop("name", None)
        return make_method(name, **spec, **dict(knobs or {}))
    if not isinstance(method, str) or not method.strip():
        raise ValueError(
            "method must be a method name (grpo, max_rl, rae, opd, opsd, async) or a method object; "
            f"got {method!r}"
        )
    return make_method(method.strip(), **dict(knobs or {}))


# ================================================================================================
# Overrides: dotted keys (prime-rl's own CLI paths, with list indices: orchestrator.train.source.0.x)
# ================================================================================================


def _apply_overrides(config: dict[str, Any], overrides: Mapping[str, Any]) -> list[str]:
    applied = []
    for key, value in overrides.items():
        if not isinstance(key, str) or not key.strip() or any(not p for p in key.split(".")):
            raise ValueError(
                f"override keys are dotted prime-rl paths such as 'orchestrator.renderer.name' or "
                f"'orchestrator.train.source.0.env.taskset.split'; got {key!r}"
            )
        if key in ("orchestrator.algo", "orchestrator.algo.type") or key.startswith("orchestrator.algo.type"):
            raise ValueError(
                f"override {key!r} would change the algorithm under the method's name; ask for the method you "
                "want instead (method='grpo' / 'max_rl' / 'rae' / 'opd' / 'opsd')."
            )
        _set_path(config, key.split("."), _plain(value, key), key)
        applied.append(key)
    return applied


def _plain(value: Any, key: str) -> Any:
    """A JSON-like copy of an override value (TOML has no null: None deletes the key)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v, key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    raise ValueError(f"override {key!r}: values must be strings, numbers, booleans, lists or tables; got {value!r}")


def _set_path(node: Any, parts: list[str], value: Any, key: str) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, list):
        if not head.isdigit() or int(head) >= len(node):
            raise ValueError(
                f"override {key!r}: {head!r} must be an index below {len(node)} into this list of tables"
            )
        index = int(head)
        if not rest:
            if value is None:
                del node[index]
            elif isinstance(value, dict) and isinstance(node[index], dict):
                _merge(node[index], value)
            else:
                node[index] = value
            return
        _set_path(node[index], rest, value, key)
        return
    if not isinstance(node, dict):
        raise ValueError(f"override {key!r}: {head!r} is inside a value that is not a table")
    if not rest:
        if value is None:
            node.pop(head, None)
        elif isinstance(value, dict) and isinstance(node.get(head), dict):
            _merge(node[head], value)
        else:
            node[head] = value
        return
    if head not in node:
        if value is None:
            return
        node[head] = [] if rest[0].isdigit() else {}
    _set_path(node[head], rest, value, key)


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    for k, v in new.items():
        if v is None:
            into.pop(k, None)
        elif isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


# ================================================================================================
# Writing the file
# ================================================================================================


def _check_out(out: Any, overwrite: bool, allowed_roots: Sequence[Any] | None) -> Path:
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError(f"out must be a file path ending in .toml; got {out!r}")
    path = Path(os.path.expanduser(str(out)))
    if path.suffix.lower() != ".toml":
        raise ValueError(
            f"out must end in .toml (prime-rl picks the parser from the extension: .toml, .json or .yaml); got {str(out)!r}"
        )
    if path.is_dir():
        raise ValueError(f"out {str(out)!r} is a folder; give a file path inside it, e.g. {str(path / 'rl.toml')!r}")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise ValueError(
            f"the folder {str(parent)!r} for out does not exist; create it first (mkdir -p {shlex.quote(str(parent))}) "
            "or choose another path"
        )
    if not parent.is_dir():
        raise ValueError(f"the parent {str(parent)!r} of out is not a folder")
    resolved = parent.resolve(strict=True) / path.name
    if path.is_symlink() or path.exists():
        resolved = path.resolve()
    if allowed_roots is not None:
        roots = [Path(os.path.expanduser(str(r))).resolve() for r in allowed_roots]
        if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
            names = ", ".join(str(r) for r in roots) or "(none)"
            raise ValueError(
                f"out {str(out)!r} resolves to {str(resolved)!r}, outside the folders this server may write to: "
                f"{names}. Choose a path under one of them, or add its folder to the allowed roots in the server's "
                "settings."
            )
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise ValueError(
            f"{str(path)!r} already exists; pass overwrite=True to replace it, or choose another path"
        )
    return path


def _write_atomic(path: Path, text: str, overwrite: bool) -> None:
    """Write `text` to `path` so that no reader ever sees a partial file.

    The text goes to a temporary file in the same folder, is flushed and fsynced, and is then moved
    into place: with ``overwrite`` by rename (atomic replace); without it by a hard link, which fails
    if the name exists, so two writers cannot both win and an existing file is never replaced. On a
    filesystem without hard links the fallback is an exclusive create (O_EXCL). The temporary file is
    removed on every path out.
    """
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        _write_fd(fd, text)
        if overwrite:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise ValueError(
                    f"{str(path)!r} already exists (another writer created it just now); pass overwrite=True to "
                    "replace it, or choose another path"
                ) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                _write_exclusive(path, text)
        _fsync_dir(folder)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _write_exclusive(path: Path, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise ValueError(f"{str(path)!r} already exists; pass overwrite=True to replace it") from None
    try:
        _write_fd(fd, text)
    except BaseException:
        os.unlink(path)
        raise


def _write_fd(fd: int, text: str) -> None:
    """Write ``text`` to the open file ``fd`` with the umask's ordinary file mode, flush it to disk and close it."""
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes it 0600; a config is an ordinary file
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ================================================================================================
# The writer
# ================================================================================================


@dataclass
class _Plan:
    algo: dict[str, Any]
    group_size: int
    temperature: float
    max_tokens: int
    lr: float
    honored: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    off_policy_steps: int | None = None
    loss: dict[str, Any] | None = None


def _distillation_plan(obj: Any, algo: dict[str, Any], *, lora: bool, **algo_keys: str) -> _Plan:
    """OPD's and OPSD's plan: their own sampling knobs, and where prime-rl reads each (``algo_keys`` first)."""
    plan = _Plan(
        algo=algo,
        group_size=obj.samples,
        temperature=obj.temperature,
        max_tokens=obj.max_tokens,
        lr=obj.resolved_learning_rate(lora=lora),
    )
    plan.honored.update(
        algo_keys,
        samples="orchestrator.group_size",
        temperature="orchestrator.train.sampling.temperature",
        max_tokens="orchestrator.train.sampling.max_completion_tokens",
        learning_rate="trainer.optim.lr",
    )
    return plan


def _plan_inner(obj: Any, *, model: str, lora: bool) -> _Plan:
    name = obj.name
    if name in ("grpo", "max_rl", "rae"):
        plan = _Plan(
            algo={"type": name},
            group_size=obj.group_size,
            temperature=D.RL_TEMPERATURE,
            max_tokens=D.RL_MAX_TOKENS,
            lr=D.PRIME_RL_LEARNING_RATE_LORA if lora else D.PRIME_RL_LEARNING_RATE_FULL,
        )
        plan.honored["group_size"] = "orchestrator.group_size"
        if name == "grpo" and getattr(obj, "normalize_std", False):
            plan.ignored["normalize_std"] = (
                "prime-rl's grpo advantage is reward minus the group mean with no std division, and no key turns "
                "the division on; use GRPO.update in your own trainer for the std-normalized form."
            )
        if name == "rae":
            plan.algo["decay"] = obj.decay
            plan.honored["decay"] = "orchestrator.algo.decay"
        return plan
    if name == "opd":
        plan = _distillation_plan(
            obj,
            {"type": "opd", "teacher": {"name": obj.teacher, "base_url": obj.base_url or OPD_TEACHER_BASE_URL}},
            lora=lora,
            teacher="orchestrator.algo.teacher.name",
            base_url="orchestrator.algo.teacher.base_url",
        )
        plan.ignored["top_k"] = (
            f"prime-rl's opd scores each sampled token with the teacher's prefill log-prob (reverse KL on sampled "
            f"tokens); {PRIME_RL_TAG} has no top-k support key, so top_k={obj.top_k} is not used."
        )
        if obj.divergence != "reverse_kl":
            plan.ignored["divergence"] = (
                f"prime-rl's opd loss is fixed to reverse KL (its ref_kl component; [trainer.loss] configures only "
                f"the rl component), so divergence={obj.divergence} is not used. For {obj.divergence}, run "
                "OPD.update in your own trainer."
            )
        if obj.base_url is None:
            plan.warnings.append(
                f"The OPD teacher has no base_url, so the config points at {OPD_TEACHER_BASE_URL}. `rl` does not start "
                f"the teacher: serve it first on its own GPU(s), e.g. `CUDA_VISIBLE_DEVICES=<free gpu> uv run inference "
                f"--vllm.model {obj.teacher} --server.port {OPD_TEACHER_PORT}` (it must return prompt log-probs, which "
                "vLLM does), or pass knobs={'base_url': ...}."
            )
        return plan
    if name == "opsd":
        demo_key = obj.privileged
        if demo_key.startswith("info.") and demo_key.count(".") == 1:
            demo_key = demo_key[len("info."):]
        elif "." in demo_key:
            raise ValueError(
                f"prime-rl's opsd looks the privileged text up by one key (demo_key), first in each row's `info`, "
                f"then as a top-level field; privileged={obj.privileged!r} is a nested path it cannot follow. Fix: "
                "put the text in a top-level or info field of the taskset rows and pass that field's name."
            )
        plan = _distillation_plan(
            obj,
            {"type": "opsd", "demo_key": demo_key, "template": obj.template},
            lora=lora,
            privileged="orchestrator.algo.demo_key",
            template="orchestrator.algo.template",
        )
        anchor = obj.anchor.partition(":")[0]
        if anchor == "live":
            plan.honored["anchor"] = "orchestrator.algo (prime-rl's opsd always scores against the live policy)"
        else:
            plan.ignored["anchor"] = (
                f"prime-rl's opsd scores against the live policy given the demonstration; {PRIME_RL_TAG} keeps no "
                f"EMA or frozen copy of the weights, so anchor={obj.anchor} runs as anchor='live'."
            )
        if obj.divergence != "reverse_kl":
            plan.ignored["divergence"] = (
                f"prime-rl's opsd loss is fixed to reverse KL (the ref_kl component), so divergence={obj.divergence} "
                "is not used; run OPSD.update in your own trainer for it."
            )
        size = model_params_b(model)
        if size is None:
            plan.warnings.append(
                f"Could not read the size of {model!r} from its name: OPSD needs a model that learns in context, "
                f"about {ROUTING.OPSD_MIN_PARAMS_B:g}B parameters and up; under that, SFT on a stronger model's completions."
            )
        elif size < ROUTING.OPSD_MIN_PARAMS_B:
            plan.warnings.append(
                f"{model} has about {size:g}B parameters: OPSD needs in-context learning of about "
                f"{ROUTING.OPSD_MIN_PARAMS_B:g}B and up, and under it SFT on a stronger model's completions does better."
            )
        if _is_thinking(model):
            plan.warnings.append(
                f"{model} is a thinking model: OPSD can cost points on thinking models (Kaur et al. 2026, "
                "arXiv:2607.05184). Compare against grpo on a held-out set before trusting it."
            )
        return plan
    _refuse_other(name)
    raise AssertionError("unreachable")  # pragma: no cover


def _plan(obj: Any, *, model: str, lora: bool) -> tuple[_Plan, str]:
    if obj.name != "async":
        return _plan_inner(obj, model=model, lora=lora), obj.name
    inner = obj.inner
    if inner.name not in ("grpo", "max_rl", "rae", "opd", "opsd"):
        _refuse_other(inner.name)
    correction = obj.correction
    if correction in ("icepop", "tis"):
        low, high = obj.ratio
        what = (
            f"icepop (keep a token only when {low:g} <= pi_train/pi_sampler <= {high:g})"
            if correction == "icepop"
            else f"tis (multiply by min(pi_train/pi_sampler, {obj.cap:g}))"
        )
        raise ValueError(
            f"prime-rl {PRIME_RL_TAG} has no {correction} correction: its loss types are default (DPPO+KL, masks on "
            f"the probability difference), ipo (ipo_threshold) and custom; no prime-rl version has an icepop or "
            f"tis loss. Fix: use correction='ipo' (keeps a token when |pi_train - pi_sampler| <= ipo_threshold, "
            f"default {D.ASYNC_IPO_THRESHOLD:g}), or write {what} as a custom loss: a Python function with the "
            "signature of the default loss in prime-rl's src/prime_rl/trainer/rl/loss.py, importable where the "
            "trainer runs, then pass overrides={'trainer.loss': {'type': 'custom', 'import_path': "
            "'your_module.your_loss', 'kwargs': {...}}} together with correction='ipo'."
        )
    plan = _plan_inner(inner, model=model, lora=lora)
    plan.honored = {f"method.{k}": v for k, v in plan.honored.items()}
    plan.ignored = {f"method.{k}": v for k, v in plan.ignored.items()}
    plan.off_policy_steps = obj.off_policy_steps
    plan.honored["off_policy_steps"] = "orchestrator.max_off_policy_steps"
    if inner.name in ("opd", "opsd"):
        why = (
            f"[trainer.loss] configures only the rl component; {inner.name}'s ref_kl loss is fixed in {PRIME_RL_TAG}, "
            "so no per-token correction applies to it"
        )
        plan.ignored["correction"] = why + "."
        plan.ignored["ipo_threshold"] = why + "."
    else:
        plan.loss = {"type": "ipo", "ipo_threshold": obj.ipo_threshold}
        plan.honored["correction"] = "trainer.loss.type"
        plan.honored["ipo_threshold"] = "trainer.loss.ipo_threshold"
    plan.ignored["ratio"] = "used only by an icepop correction, which prime-rl does not have; ipo reads ipo_threshold."
    plan.ignored["cap"] = "used only by a tis correction, which prime-rl does not have."
    if obj.off_policy_steps < 1:
        plan.warnings.append(
            "off_policy_steps=0: prime-rl always runs the trainer one step ahead of inference, so a bound of 0 may "
            "discard most rollouts; 1 is the tightest bound that keeps the pipeline full."
        )
    return plan, f"async {inner.name}"


def _tokenizer_verdict(tokenizers_match: Any) -> tuple[str | None, str, Any]:
    """(verdict, summary, check) from a bool, None, a TokenizerCheck or its dict."""
    if tokenizers_match is None:
        return None, "", None
    if isinstance(tokenizers_match, bool):
        return ("same" if tokenizers_match else "different"), "", None
    from methods.tokenizer_check import TokenizerCheck

    if isinstance(tokenizers_match, Mapping):
        tokenizers_match = TokenizerCheck.model_validate(dict(tokenizers_match))
    if isinstance(tokenizers_match, TokenizerCheck):
        return tokenizers_match.verdict, tokenizers_match.summary, tokenizers_match
    raise ValueError(
        "tokenizers_match must be true, false, None or the result of check_tokenizers(teacher, student); "
        f"got {tokenizers_match!r}"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "config"


def prime_rl_config(
    taskset: str,
    method: Any,
    *,
    model: str | None = None,
    out: str | os.PathLike[str] | None = None,
    gpus: int | Mapping[str, int] = D.PRIME_RL_GPUS,
    steps: int = D.PRIME_RL_STEPS,
    batch: int = D.PRIME_RL_BATCH,
    lora: bool = True,
    overrides: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    knobs: Mapping[str, Any] | None = None,
    allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
    tokenizers_match: Any = None,
) -> PrimeRLConfig:
    """Write the TOML that prime-rl's ``rl`` command reads (schema of prime-rl 559b44772, v0.8.1.dev67).

    Arguments (all JSON-able, so an MCP tool can pass them through unchanged):

    - ``taskset``: the verifiers taskset id (``env.taskset.id``), e.g. ``"reverse-text"``.
    - ``method``: a method object, or a name (``grpo``, ``max_rl``, ``rae``, ``opd``, ``opsd``,
      ``async``, ``"async grpo"``) built with ``knobs``; ``{"name": ..., **knobs}`` also works.
    - ``model``: the Hugging Face id or folder of the model to train (required).
    - ``out``: where to write the ``.toml`` (atomically; never over an existing file unless
      ``overwrite=True``). ``allowed_roots``: folders ``out`` must resolve into.
    - ``gpus``: total GPUs (split half to vLLM, the rest to the trainer) or
      ``{"inference": n, "trainer": m}``; at least 2.
    - ``steps``: ``max_steps``. ``batch``: rollouts per step (``orchestrator.batch_size``), a
      multiple of the group size. ``lora``: train a LoRA adapter (``[trainer.model.lora]``).
    - ``overrides``: dotted prime-rl paths to set after the config is built, e.g.
      ``{"orchestrator.renderer.name": "default"}``, ``{"orchestrator.train.source.0.env.taskset.split":
      "train"}``; a ``None`` value deletes the key. Checked against the schema like everything else.
    - ``tokenizers_match`` (OPD): ``True``/``False``, or ``check_tokenizers(teacher, model)``'s result.
      Different tokenizers are refused; unchecked ones give a warning.

    Raises ``ValueError`` with the reason and the fix for anything prime-rl cannot run.
    """
    model = _check_model(model)
    n_infer, n_train = _split_gpus(gpus)
    steps = _as_int("steps", steps, 1, "steps is prime-rl's max_steps, the number of optimizer steps.")
    batch = _as_int("batch", batch, 1, "batch is prime-rl's orchestrator.batch_size, rollouts per step.")
    if not isinstance(lora, bool):
        raise ValueError(f"lora must be true or false; got {lora!r}")
    if not isinstance(overwrite, bool):
        raise ValueError(f"overwrite must be true or false; got {overwrite!r}")
    taskset = _check_taskset(taskset)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ValueError(f"overrides must be a mapping of dotted prime-rl keys to values; got {overrides!r}")
    obj = _resolve_method(method, knobs)
    plan, label = _plan(obj, model=model, lora=lora)
    inner = obj.inner if obj.name == "async" else obj
    warnings = plan.warnings

    # OPD needs one tokenizer for teacher and student (the teacher scores the student's tokens).
    verdict, tok_summary, tok_check = _tokenizer_verdict(tokenizers_match)
    if inner.name == "opd":
        if verdict == "different":
            raise ValueError(
                f"OPD needs the teacher and the student to share a tokenizer (the teacher scores the student's own "
                f"token ids), and {inner.teacher} and {model} do not. {(tok_summary + ' ') if tok_summary else ''}Fix: pick a teacher of the same "
                "family (same tokenizer), or distil with SFT on the teacher's completions instead."
            )
        if verdict is None:
            warnings.append(
                f"Tokenizers not checked: OPD needs {inner.teacher} and {model} to share a tokenizer. Run "
                "check_tokenizers(teacher, student) and pass its result as tokenizers_match."
            )
        elif verdict == "unknown":
            warnings.append(f"Tokenizer check was inconclusive: {tok_summary}")
        if tok_check is not None and (tok_check.teacher, tok_check.student) != (inner.teacher, model):
            warnings.append(
                f"The tokenizer check compared {tok_check.teacher} with {tok_check.student}, not {inner.teacher} "
                f"with {model}."
            )
        if tok_check is not None:
            warnings.extend(w for w in tok_check.warnings if w not in warnings)
    elif tokenizers_match is not None:
        warnings.append(f"tokenizers_match applies to OPD only; {label} does not use a teacher, so it was not used.")

    if batch % plan.group_size:
        low = batch // plan.group_size * plan.group_size
        options = [n for n in (low, low + plan.group_size) if n >= 1]
        raise ValueError(
            f"orchestrator.batch_size ({batch}) must be divisible by orchestrator.group_size ({plan.group_size}): "
            f"prime-rl samples batch_size / group_size prompts per step. Fix: batch="
            + " or batch=".join(map(str, options))
            + f", or a group size that divides {batch}."
        )

    # The shared seq_len must hold a prompt plus the completion cap.
    seq_len = max(D.PRIME_RL_SEQ_LEN, -(-(plan.max_tokens + PROMPT_TOKEN_BUDGET) // SEQ_LEN_MULTIPLE) * SEQ_LEN_MULTIPLE)

    env_seats = {
        seat: {"harness": {"id": AGENT_HARNESS_ID}, "runtime": {"type": AGENT_RUNTIME_TYPE}}
        for seat in MULTI_AGENT_SEATS.get(taskset, ("agent",))
    }

    def source() -> dict[str, Any]:
        return {"name": taskset if taskset != "agg" else "agg-taskset", "env": {"taskset": {"id": taskset}, **env_seats}}

    orchestrator: dict[str, Any] = {
        "batch_size": batch,
        "group_size": plan.group_size,
        "max_off_policy_steps": plan.off_policy_steps
        if plan.off_policy_steps is not None
        else D.ASYNC_OFF_POLICY_STEPS,
        "algo": plan.algo,
        "train": {
            "sampling": {"temperature": plan.temperature, "max_completion_tokens": plan.max_tokens},
            "source": [source()],
        },
        "eval": {
            "interval": max(1, steps // EVAL_ROUNDS),
            "num_examples": D.PRIME_RL_EVAL_EXAMPLES,
            "group_size": D.PRIME_RL_EVAL_GROUP,
            "sampling": {"temperature": plan.temperature, "max_completion_tokens": plan.max_tokens},
            "source": [source()],
        },
    }
    trainer: dict[str, Any] = {"optim": {"lr": plan.lr}}
    if lora:
        trainer["model"] = {"lora": {"rank": D.TRAINING_LORA_RANK, "alpha": D.TRAINING_LORA_ALPHA}}
    if plan.loss is not None:
        trainer["loss"] = plan.loss
    deployment: dict[str, Any] = {"num_infer_gpus": n_infer, "num_train_gpus": n_train}
    if n_infer + n_train > PRIME_RL_GPUS_PER_NODE:
        deployment["gpus_per_node"] = n_infer + n_train
        warnings.append(
            f"{n_infer + n_train} GPUs on one node: the config sets gpus_per_node = {n_infer + n_train} "
            f"(prime-rl's default is {PRIME_RL_GPUS_PER_NODE}). Across several nodes use [deployment] "
            "type = \"multi_node\" with [slurm] instead (edit the file or use overrides)."
        )
    config: dict[str, Any] = {
        "max_steps": steps,
        "seq_len": seq_len,
        "model": {"name": model},
        "deployment": deployment,
        "orchestrator": orchestrator,
        "trainer": trainer,
        "ckpt": {},
        "inference": {},
    }

    honored = dict(plan.honored)
    if overrides:
        for key in _apply_overrides(config, overrides):
            honored[key] = f"{key} (override, as given)"

    problems = validate_prime_rl(config)
    if problems:
        raise ValueError(
            f"the config would not load in prime-rl {PRIME_RL_TAG}: " + "; ".join(problems)
            + (". Fix the overrides named above." if overrides else ".")
        )

    # Checks on the final config (after overrides).
    algo_type = _get(config, "orchestrator.algo.type", "grpo")
    group = _get(config, "orchestrator.group_size", 1)
    source_groups = [s.get("group_size", group) for s in _get(config, "orchestrator.train.source", []) or []]
    smallest = min(source_groups or [group])
    if algo_type in GROUP_RELATIVE_ALGOS and smallest == 1:
        raise ValueError(
            f"{label} with one rollout per prompt (group_size 1) trains nothing: its advantage is relative to the "
            "group, so every advantage is 0. prime-rl accepts the config, but the run aborts after repeated empty "
            f"batches. Fix: use method='rae' (an EMA baseline, built for one rollout per prompt), or "
            f"group_size >= {GROUPED_MIN_USEFUL_GROUP} with batch a multiple of it."
        )
    batch_now = _get(config, "orchestrator.batch_size")
    if algo_type in GROUP_RELATIVE_ALGOS and smallest < GROUPED_MIN_USEFUL_GROUP:
        warnings.append(
            f"group_size {smallest}: with so few rollouts per prompt most groups are unanimous and carry no "
            f"advantage; {GROUPED_MIN_USEFUL_GROUP} or more is the usual floor."
        )
    if algo_type == "rae":
        decay = _get(config, "orchestrator.algo.decay", D.RAE_DECAY)
        if smallest == 1:
            warnings.append(
                f"rae at group_size 1 works: the advantage is reward minus a per-agent EMA baseline (decay {decay:g}), "
                "not a group mean. On a single-agent taskset this is REINFORCE with an EMA baseline; prime-rl's rae is "
                "built for multi-agent self-play."
            )
        elif taskset not in MULTI_AGENT_SEATS:
            warnings.append(
                f"rae on a single-agent taskset is REINFORCE with an EMA baseline (decay {decay:g}); with "
                f"group_size {smallest} grpo's group mean is usually the better baseline."
            )
    if _is_local_path(model) and "renderer" not in config["orchestrator"]:
        warnings.append(
            f"{model} looks like a local folder: prime-rl picks the chat renderer by model name and rejects a "
            "model it does not know at config time. Set overrides={'orchestrator.renderer.name': 'default'} "
            "(or the family, e.g. 'qwen3')."
        )

    notes = [note for prefix, note in _VERSION_NOTES if _has_prefix(config, prefix)]
    if re.search(r"-v1(@|$)", taskset):
        notes.append(
            f"{taskset!r} ends in '-v1', the naming prime-rl used before #3226: if it is a bundled taskset's old id, "
            "drop the suffix; a taskset package of your own with that id is fine."
        )
    if "renderer" not in config["orchestrator"]:
        notes.append(
            "[orchestrator.renderer] is left at name='auto', which prime-rl resolves from the model name at config "
            "time (#2540); a fine-tune or a model missing from renderers' MODEL_RENDERER_MAP needs "
            "overrides={'orchestrator.renderer.name': 'default'} or a family name such as 'qwen3'."
        )
    notes.append(
        f"Checked against this package's copy of prime-rl's schema at {PRIME_RL_VERSION}; a TOML for this commit is "
        "rejected by v0.7.x and earlier, and later commits may rename keys. Validate on the GPU machine with "
        "`uv run rl @ <file> --dry-run --output-dir <scratch> --run.name check`."
    )
    notes.append(
        "The eval block reads the training taskset; for a held-out check point "
        "[[orchestrator.eval.source]] at a held-out split (a taskset-specific key such as "
        "overrides={'orchestrator.eval.source.0.env.taskset.split': 'test'}), or drop it with "
        "overrides={'orchestrator.eval': None}."
    )
    if inner.name == "opsd":
        notes.append(
            f"prime-rl looks up demo_key {config['orchestrator']['algo'].get('demo_key')!r} in each row's `info`, "
            "then as a top-level field; the taskset's rows must carry it."
        )

    header_name = "config.toml" if out is None else str(out)
    header = (
        f"# prime-rl `rl` config: {_one_line(label)} on taskset {_one_line(taskset)}, model {_one_line(model)}.\n"
        f"# Written by pick-a-method for prime-rl {PRIME_RL_VERSION}. Launch: uv run rl @ {_one_line(header_name)}\n"
    )
    text = header + tomli_w.dumps(config)
    if tomllib.loads(text) != config:  # pragma: no cover - a TOML library bug would land here
        raise RuntimeError("the TOML written does not read back as the config built; refusing to use it")

    path_str: str | None = None
    if out is not None:
        path = _check_out(out, overwrite, allowed_roots)
        _write_atomic(path, text, overwrite)
        path_str = str(path.resolve())
    command = f"uv run rl @ {shlex.quote(path_str) if path_str else 'config.toml'}"

    prompts = batch_now // group if isinstance(batch_now, int) and group else None
    shape = (
        f"{steps} steps x {batch_now} rollouts ({prompts} prompts x {group})"
        if prompts
        else f"{steps} steps"
    )
    where = f"Wrote {path_str}" if path_str else "Built (not written)"
    summary = (
        f"{where}: prime-rl {label} on {taskset} for {model}, {shape}, "
        f"{'LoRA' if lora else 'full weights'}, {n_infer} inference + {n_train} trainer GPU(s)."
    )
    if path_str:
        why = "Run it from a prime-rl checkout at the targeted commit on the GPU machine."
    else:
        why = (
            "Save `text` as a .toml file (or call prime_rl_config again with out=<path>), then run the command from "
            "a prime-rl checkout at the targeted commit on the GPU machine."
        )
    if inner.name == "opd":
        why += f" Start the teacher server ({_get(config, 'orchestrator.algo.teacher.base_url')}) first; `rl` does not."
    if not path_str:
        why += f" A name for the file: {_slug(taskset)}-{_slug(label)}.toml."
    next_step = NextStep(why=why, command=command)

    return PrimeRLConfig(
        verdict="written" if path_str else "ready",
        summary=summary,
        next_step=next_step,
        warnings=warnings,
        path=path_str,
        text=text,
        config=config,
        method=label,
        model=model,
        taskset=taskset,
        gpus={"inference": n_infer, "trainer": n_train},
        honored=honored,
        ignored=dict(plan.ignored),
        command=command,
        prime_rl_version=PRIME_RL_VERSION,
        prime_rl_commit=PRIME_RL_COMMIT,
        version_notes=notes,
    )


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _is_local_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def _has_prefix(config: Mapping[str, Any], dotted: str) -> bool:
    return _get(config, dotted) is not None
