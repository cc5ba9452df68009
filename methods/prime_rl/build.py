"""``prime_rl_config``: the TOML that prime-rl's ``rl`` command reads, built for a method.

It checks the arguments, turns the method into prime-rl's terms (``plan.py``), assembles the config
as a dict, applies the caller's overrides, checks everything against the schema (``schema.py``),
renders it with a TOML library and reads it back, writes it when asked (``write.py``), and returns
what it wrote with which knobs prime-rl honors and where, which it ignores and why, warnings,
version notes and the launch command.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict

from pick_a_method.methods import defaults as D
from pick_a_method.methods.prime_rl.constants import (
    AGENT_HARNESS_ID,
    AGENT_RUNTIME_TYPE,
    GROUP_RELATIVE_ALGOS,
    MULTI_AGENT_SEATS,
    PRIME_RL_COMMIT,
    PRIME_RL_GPUS_PER_NODE,
    PRIME_RL_TAG,
    PRIME_RL_VERSION,
    TASKSET_ID,
)
from pick_a_method.methods.prime_rl.plan import Plan, method_plan
from pick_a_method.methods.prime_rl.schema import VERSION_NOTES, get_path, validate_prime_rl
from pick_a_method.methods.prime_rl.write import write_config
from pick_a_method.routing.verdicts import NextStep

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
# prime_rl_config and its steps, in the order it takes them
# ================================================================================================


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
    plan, label = method_plan(obj, model=model, lora=lora)
    inner = obj.inner if obj.name == "async" else obj
    warnings = plan.warnings
    _check_tokenizers(tokenizers_match, inner, model, label, warnings)
    _check_batch(batch, plan.group_size)

    gpu_split = (n_infer, n_train)
    config = _assemble(plan, taskset, model, steps=steps, batch=batch, lora=lora, gpus=gpu_split, warnings=warnings)
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
    _check_final(config, label, taskset, model, warnings)
    notes = _version_notes(config, taskset, inner.name)

    text = _render(config, label, taskset, model, header_name="config.toml" if out is None else str(out))
    path_str: str | None = None
    if out is not None:
        path_str = str(write_config(out, text, overwrite=overwrite, allowed_roots=allowed_roots).resolve())
    command = f"uv run rl @ {shlex.quote(path_str) if path_str else 'config.toml'}"

    return PrimeRLConfig(
        verdict="written" if path_str else "ready",
        summary=_summary(config, label, taskset, model, steps=steps, lora=lora, gpus=gpu_split, path=path_str),
        next_step=_next_step(config, label, taskset, inner.name, command, path=path_str),
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


def _check_tokenizers(tokenizers_match: Any, inner: Any, model: str, label: str, warnings: list[str]) -> None:
    """OPD needs one tokenizer for teacher and student (the teacher scores the student's tokens): refuse
    different ones, warn about unchecked or inconclusive ones; other methods ignore the check, with a warning."""
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


def _tokenizer_verdict(tokenizers_match: Any) -> tuple[str | None, str, Any]:
    """(verdict, summary, check) from a bool, None, a TokenizerCheck or its dict."""
    if tokenizers_match is None:
        return None, "", None
    if isinstance(tokenizers_match, bool):
        return ("same" if tokenizers_match else "different"), "", None
    from pick_a_method.methods.tokenizer_check import TokenizerCheck

    if isinstance(tokenizers_match, Mapping):
        tokenizers_match = TokenizerCheck.model_validate(dict(tokenizers_match))
    if isinstance(tokenizers_match, TokenizerCheck):
        return tokenizers_match.verdict, tokenizers_match.summary, tokenizers_match
    raise ValueError(
        "tokenizers_match must be true, false, None or the result of check_tokenizers(teacher, student); "
        f"got {tokenizers_match!r}"
    )


def _check_batch(batch: int, group_size: int) -> None:
    if batch % group_size:
        low = batch // group_size * group_size
        options = [n for n in (low, low + group_size) if n >= 1]
        raise ValueError(
            f"orchestrator.batch_size ({batch}) must be divisible by orchestrator.group_size ({group_size}): "
            f"prime-rl samples batch_size / group_size prompts per step. Fix: batch="
            + " or batch=".join(map(str, options))
            + f", or a group size that divides {batch}."
        )


def _assemble(
    plan: Plan,
    taskset: str,
    model: str,
    *,
    steps: int,
    batch: int,
    lora: bool,
    gpus: tuple[int, int],
    warnings: list[str],
) -> dict[str, Any]:
    """The config as a dict, from the plan and the launcher defaults (before the caller's overrides)."""
    # The shared seq_len must hold a prompt plus the completion cap.
    seq_len = max(
        D.PRIME_RL_SEQ_LEN,
        -(-(plan.max_tokens + D.PRIME_RL_PROMPT_TOKENS) // D.PRIME_RL_SEQ_LEN_MULTIPLE) * D.PRIME_RL_SEQ_LEN_MULTIPLE,
    )

    env_seats = {
        seat: {"harness": {"id": AGENT_HARNESS_ID}, "runtime": {"type": AGENT_RUNTIME_TYPE}}
        for seat in MULTI_AGENT_SEATS.get(taskset, ("agent",))
    }

    def source() -> dict[str, Any]:  # a fresh table each time: an override of one must not change the other
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
            "interval": max(1, steps // D.PRIME_RL_EVAL_ROUNDS),
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
    n_infer, n_train = gpus
    deployment: dict[str, Any] = {"num_infer_gpus": n_infer, "num_train_gpus": n_train}
    if n_infer + n_train > PRIME_RL_GPUS_PER_NODE:
        deployment["gpus_per_node"] = n_infer + n_train
        warnings.append(
            f"{n_infer + n_train} GPUs on one node: the config sets gpus_per_node = {n_infer + n_train} "
            f"(prime-rl's default is {PRIME_RL_GPUS_PER_NODE}). Across several nodes use [deployment] "
            "type = \"multi_node\" with [slurm] instead (edit the file or use overrides)."
        )
    return {
        "max_steps": steps,
        "seq_len": seq_len,
        "model": {"name": model},
        "deployment": deployment,
        "orchestrator": orchestrator,
        "trainer": trainer,
        "ckpt": {},
        "inference": {},
    }


def _check_final(config: dict[str, Any], label: str, taskset: str, model: str, warnings: list[str]) -> None:
    """Checks on the final config (after overrides) that prime-rl's loader does not make."""
    algo_type = get_path(config, "orchestrator.algo.type", "grpo")
    group = get_path(config, "orchestrator.group_size", 1)
    source_groups = [s.get("group_size", group) for s in get_path(config, "orchestrator.train.source", []) or []]
    smallest = min(source_groups or [group])
    if algo_type in GROUP_RELATIVE_ALGOS and smallest == 1:
        raise ValueError(
            f"{label} with one rollout per prompt (group_size 1) trains nothing: its advantage is relative to the "
            "group, so every advantage is 0. prime-rl accepts the config, but the run aborts after repeated empty "
            f"batches. Fix: use method='rae' (an EMA baseline, built for one rollout per prompt), or "
            f"group_size >= {D.GROUPED_MIN_USEFUL_GROUP} with batch a multiple of it."
        )
    if algo_type in GROUP_RELATIVE_ALGOS and smallest < D.GROUPED_MIN_USEFUL_GROUP:
        warnings.append(
            f"group_size {smallest}: with so few rollouts per prompt most groups are unanimous and carry no "
            f"advantage; {D.GROUPED_MIN_USEFUL_GROUP} or more is the usual floor."
        )
    if algo_type == "rae":
        decay = get_path(config, "orchestrator.algo.decay", D.RAE_DECAY)
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


def _version_notes(config: dict[str, Any], taskset: str, method: str) -> list[str]:
    """The version notes for the keys the config carries, and what to check on the GPU machine."""
    notes = [note for prefix, note in VERSION_NOTES if _has_prefix(config, prefix)]
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
    if method == "opsd":
        notes.append(
            f"prime-rl looks up demo_key {config['orchestrator']['algo'].get('demo_key')!r} in each row's `info`, "
            "then as a top-level field; the taskset's rows must carry it."
        )
    return notes


def _render(config: dict[str, Any], label: str, taskset: str, model: str, *, header_name: str) -> str:
    """The TOML text, under a two-line header, checked to read back as ``config``."""
    header = (
        f"# prime-rl `rl` config: {_one_line(label)} on taskset {_one_line(taskset)}, model {_one_line(model)}.\n"
        f"# Written by pick-a-method for prime-rl {PRIME_RL_VERSION}. Launch: uv run rl @ {_one_line(header_name)}\n"
    )
    text = header + tomli_w.dumps(config)
    if tomllib.loads(text) != config:  # pragma: no cover - a TOML library bug would land here
        raise RuntimeError("the TOML written does not read back as the config built; refusing to use it")
    return text


def _summary(
    config: dict[str, Any], label: str, taskset: str, model: str, *, steps: int, lora: bool, gpus: tuple[int, int],
    path: str | None,
) -> str:
    """One sentence on what was built; batch and group are read from the final config, so overrides show."""
    group = get_path(config, "orchestrator.group_size", 1)
    batch = get_path(config, "orchestrator.batch_size")
    prompts = batch // group if isinstance(batch, int) and group else None
    shape = f"{steps} steps x {batch} rollouts ({prompts} prompts x {group})" if prompts else f"{steps} steps"
    where = f"Wrote {path}" if path else "Built (not written)"
    n_infer, n_train = gpus
    return (
        f"{where}: prime-rl {label} on {taskset} for {model}, {shape}, "
        f"{'LoRA' if lora else 'full weights'}, {n_infer} inference + {n_train} trainer GPU(s)."
    )


def _next_step(
    config: dict[str, Any], label: str, taskset: str, method: str, command: str, *, path: str | None
) -> NextStep:
    if path:
        why = "Run it from a prime-rl checkout at the targeted commit on the GPU machine."
    else:
        why = (
            "Save `text` as a .toml file (or call prime_rl_config again with out=<path>), then run the command from "
            "a prime-rl checkout at the targeted commit on the GPU machine."
        )
    if method == "opd":
        why += f" Start the teacher server ({get_path(config, 'orchestrator.algo.teacher.base_url')}) first; `rl` does not."
    if not path:
        why += f" A name for the file: {_slug(taskset)}-{_slug(label)}.toml."
    return NextStep(why=why, command=command)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "config"


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _is_local_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def _has_prefix(config: Mapping[str, Any], dotted: str) -> bool:
    return get_path(config, dotted) is not None


# ================================================================================================
# Argument checks
# ================================================================================================


TOML_INT_MAX = 2**63 - 1  # TOML integers are 64-bit signed (toml.io v1.0.0, "Integer")


def _as_int(name: str, value: Any, lo: int, fix: str) -> int:
    # int first: float() of an int past 1.8e308 raises OverflowError
    ok = not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    if not ok:
        raise ValueError(f"{name} must be a whole number >= {lo}; got {_show(value)}. {fix}")
    value = int(value)
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}; got {_show(value)}. {fix}")
    if value > TOML_INT_MAX:
        raise ValueError(f"{name} must be at most 2**63 - 1 (TOML integers are 64-bit); got {_show(value)}. {fix}")
    return value


def _show(value: Any) -> str:
    """A value for an error message, cut short (an int of thousands of digits cannot even be printed)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    if not TASKSET_ID.match(text):
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


def _resolve_method(method: Any, knobs: Mapping[str, Any] | None) -> Any:
    from pick_a_method.methods.objects import Method, make_method  # lazy: methods/__init__ may import this module

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
