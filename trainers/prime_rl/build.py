"""``prime_rl_config``: the TOML that prime-rl's ``rl`` command reads, built for a method.

It checks the arguments (``args.py``), turns the method into prime-rl's terms (``plan.py``), assembles the
config as a dict (the taskset's sources from ``tasksets.py``, the run knobs from ``knobs.py``), applies the
caller's overrides (``overrides.py``), checks everything against the schema and prime-rl's cross-field rules
(``schema.py``, ``rules.py``), renders it with a TOML library and reads it back (``report.py``), writes it when
asked (common/write.py's atomic, no-clobber write inside the allowed folders), and returns what it wrote with
which knobs prime-rl honors and where, which it ignores and why, warnings, version notes and the launch command.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import Field

from pick_a_method.methods import defaults as D
from pick_a_method.trainers.prime_rl.constants import (
    GROUP_RELATIVE_ALGOS,
    PRIME_RL_COMMIT,
    PRIME_RL_GPUS_PER_NODE,
    PRIME_RL_TAG,
    PRIME_RL_VERSION,
)
from pick_a_method.trainers.prime_rl import knobs as K
from pick_a_method.trainers.prime_rl.args import (
    check_model,
    check_taskset,
    is_local_path,
    split_gpus,
    split_nodes,
)
from pick_a_method.trainers.prime_rl import tasksets as T
from pick_a_method.trainers.prime_rl.overrides import apply_overrides, custom_loss, reconcile, snapshot
from pick_a_method.trainers.prime_rl.plan import Plan, method_plan
from pick_a_method.trainers.prime_rl.renderers import (
    MODEL_RENDERER_MAP,
    NEWER_RENDERERS,
    RENDERER_NAMES,
    RENDERERS_VERSION,
    choose_renderer,
    needs_newer_prime_rl,
)
from pick_a_method.trainers.prime_rl.rules import validate_prime_rl
from pick_a_method.trainers.prime_rl import report as R
from pick_a_method.common.dotted import get_path
from pick_a_method.trainers.prime_rl.tokenizers import check_tokenizers
from pick_a_method.trainers.config_result import Target, TrainerConfig, as_bool, as_int, resolve_method
from pick_a_method.common import methods as M
from pick_a_method.common.methods import PRIME_RL, MethodInfo
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.trainers.options import options_of, takes
from pick_a_method.trainers.prime_rl.options import PrimeRlOptions

_SUFFIXES, _WHY = (".toml",), "prime-rl picks the parser from the extension: .toml, .json or .yaml"

# ================================================================================================
# The result
# ================================================================================================


class PrimeRLConfig(TrainerConfig):
    """What ``prime_rl_config`` wrote (or would write): every writer's fields, plus the taskset, the GPU split
    and the exact prime-rl commit the schema was copied from."""

    taskset: str
    gpus: dict[str, int] = Field(description="GPUs for inference and for the trainer.")
    trainer_commit: str = Field(description="The prime-rl commit whose config classes the schema was copied from.")


# ================================================================================================
# prime_rl_config and its steps, in the order it takes them
# ================================================================================================


@takes(PrimeRlOptions)
def prime_rl_config(taskset: str, method: Any, *, allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
                    tokenizers_match: Any = None, **options: Any) -> PrimeRLConfig:
    """Write the TOML that prime-rl's ``rl`` command reads (schema of prime-rl 559b44772, v0.8.1.dev67).

    ``taskset``, ``method`` and ``options`` are PrimeRlOptions' fields (trainers/prime_rl/options.py, each with where
    prime-rl reads it: the model, the GPUs and nodes, steps, batch, LoRA, knobs, overrides, out, the renderer, W&B,
    checkpoints, the run folder, SLURM, vLLM, the eval and the schedule); all JSON-able, so an MCP tool passes them
    through unchanged, and a misspelt one is refused with the closest name. ``allowed_roots``: the folders ``out``
    must resolve into. ``tokenizers_match`` (OPD): True/False, or check_tokenizers(teacher, model)'s result;
    different tokenizers are refused, unchecked ones warned about.

    Raises ``ValueError`` with the reason and the fix for anything prime-rl cannot run.
    """
    o = options_of(PrimeRlOptions, "prime_rl_config", {"taskset": taskset, "method": method, **options})
    a = _checked(o, tokenizers_match)
    warnings = a.plan.warnings
    config = _assemble(a.plan, a.taskset, a.model, steps=a.steps, batch=a.batch, lora=a.lora, gpus=a.gpus,
                       multi_node=a.nodes is not None, warnings=warnings)
    honored, ignored, run = dict(a.plan.honored), dict(a.plan.ignored), K.Applied()
    _apply_renderer(config, o.renderer, a.model, a.info, run)
    K.apply_run_knobs(config, o, a.taskset, a.steps, a.label, a.nodes, a.per_node, run)
    honored.update(run.honored)
    warnings.extend(run.warnings)
    if o.overrides:
        before = snapshot(config, honored)
        for key in apply_overrides(config, o.overrides):
            honored[key] = f"{key} (override, as given)"
        reconcile(config, before, o.overrides, honored, ignored, warnings)
        run.notes.extend(T.name_sources(config))
    problems = validate_prime_rl(config)
    if problems:
        raise ValueError(R.refusal(problems, bool(o.overrides)))
    _check_final(config, a.label, a.taskset, a.model, warnings)
    held_in = R.eval_not_held_out(config, a.taskset)
    if held_in:
        warnings.append(held_in)
    notes = run.notes + R.version_notes(config, a.taskset, a.info)

    target = Target.of(o.out, PRIME_RL, a.label, suffixes=_SUFFIXES, why=_WHY, overwrite=a.overwrite,
                       allowed_roots=allowed_roots)
    command = f"uv run rl @ {shlex.quote(target.file_name)}"
    text = R.render(config, a.label, a.taskset, a.model, command=command)
    path = target.write(text)
    return PrimeRLConfig(
        verdict="written" if path else "ready",
        summary=R.summary(config, a.label, a.taskset, a.model, steps=a.steps, lora=a.lora, gpus=a.gpus, path=path,
                          nodes=a.nodes, file_name=target.file_name),
        next_step=R.next_step(config, a.info, command, path=path, file_name=target.file_name),
        warnings=warnings, path=path, text=text, config=config, method=a.label, model=a.model, taskset=a.taskset,
        gpus=dict(zip(("inference", "trainer"), a.gpus)), honored=honored, ignored=ignored, command=command,
        needs=R.needs(config, a.taskset, a.info) + run.needs, trainer="prime-rl", trainer_version=PRIME_RL_VERSION,
        trainer_commit=PRIME_RL_COMMIT, notes=notes)


class _Checked(NamedTuple):
    """prime_rl_config's arguments checked, and the method's plan."""

    model: str
    taskset: str
    steps: int
    batch: int
    lora: bool
    overwrite: bool
    nodes: tuple[int, int] | None  # (inference, trainer) machines of a multi-node run; None: one node
    per_node: int | None  # the GPUs a node, where given with nodes
    gpus: tuple[int, int]  # (inference, trainer) GPUs in all
    plan: Plan
    label: str
    info: MethodInfo  # the method's entry (Async's wrapped method's)


def _checked(o: PrimeRlOptions, tokenizers_match: Any) -> _Checked:
    """Each argument checked, in the order a refusal is the most useful (the model, the machines, the numbers, the
    taskset, the method), then the method's plan, its tokenizers and its group against the batch."""
    model = check_model(o.model)
    nodes, per_node, gpus = _machines(o.gpus, o.nodes)
    steps = as_int("steps", o.steps, 1, "steps is prime-rl's max_steps, the number of optimizer steps.")
    batch = as_int("batch", o.batch, 1, "batch is prime-rl's orchestrator.batch_size, rollouts per step.")
    lora, overwrite = as_bool("lora", o.lora), as_bool("overwrite", o.overwrite)
    taskset = check_taskset(o.taskset)
    if o.overrides is not None and not isinstance(o.overrides, Mapping):
        raise ValueError(f"overrides must be a mapping of dotted prime-rl keys to values; got {o.overrides!r}")
    obj = resolve_method(o.method, o.knobs)
    plan, label = method_plan(obj, model=model, lora=lora, custom_loss=custom_loss(o.overrides))
    inner = getattr(obj, "inner", obj)  # Async's wrapped method, or the method itself
    check_tokenizers(tokenizers_match, inner, model, label, plan.warnings)
    _check_batch(batch, plan.group_size)
    return _Checked(model, taskset, steps, batch, lora, overwrite, nodes, per_node, gpus, plan, label, inner.info)


def _machines(gpus: Any, nodes: Any) -> tuple[Any, int | None, tuple[int, int]]:
    """(the node split or None, the GPUs a node where given with nodes, the (inference, trainer) GPUs)."""
    node_split = split_nodes(nodes)
    if node_split is None:
        return None, None, split_gpus(TRAINERS[PRIME_RL].gpus if gpus is None else gpus)
    if isinstance(gpus, Mapping):
        raise ValueError(
            "with nodes, gpus is the number of GPUs per node (a trainer node gives all of its GPUs to the trainer, "
            f"an inference node all of its GPUs to vLLM); got {dict(gpus)!r}. Fix: gpus=<GPUs per node>, e.g. gpus=8."
        )
    per_node = None if gpus is None else as_int("gpus", gpus, 1, "with nodes, gpus is the GPUs per node.")
    return node_split, per_node, tuple(n * (per_node or PRIME_RL_GPUS_PER_NODE) for n in node_split)


def _apply_renderer(config: dict[str, Any], renderer: Any, model: str, method: MethodInfo, run: K.Applied) -> None:
    """[orchestrator.renderer]: the caller's, or one chosen for the model (renderers.py). opsd scores its hint
    block with its own renderer, which must match a non-auto policy renderer (configs/algorithm.py)."""
    if renderer is not None:
        if isinstance(renderer, str) and renderer.strip() in NEWER_RENDERERS:
            raise ValueError(
                f"{needs_newer_prime_rl(renderer.strip())} ({PRIME_RL_TAG} is the target here). Fix: renderer='default' "
                "(DefaultRenderer calls the model's own chat template), or leave renderer out to let this tool choose."
            )
        if not isinstance(renderer, str) or renderer.strip() not in RENDERER_NAMES:
            raise ValueError(
                f"renderer {renderer!r} is not one of prime-rl's renderers (renderers {RENDERERS_VERSION}): "
                f"{', '.join(RENDERER_NAMES)}. Fix: pick one of those; 'default' works for any model with a chat template."
            )
        name = renderer.strip()
        if name == "auto" and model not in MODEL_RENDERER_MAP:
            raise ValueError(
                f"renderer 'auto' resolves only models in the MODEL_RENDERER_MAP of renderers {RENDERERS_VERSION}, and "
                f"{model!r} is not one (prime-rl rejects it at config time). Fix: renderer="
                f"{choose_renderer(model).name!r}, or leave renderer out to let this tool choose."
            )
        run.honored["renderer"] = "orchestrator.renderer.name"
    else:
        choice = choose_renderer(model)
        name = choice.name
        if choice.warning:
            run.warnings.append(choice.warning)
        run.honored["renderer"] = f"orchestrator.renderer.name ({choice.how}: {name})"
    if name != "auto":
        config["orchestrator"]["renderer"] = {"name": name}
        if method is M.OPSD:  # opsd renders the teacher's privileged prompt with its own renderer
            config["orchestrator"]["algo"]["renderer"] = {"name": name}


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
    multi_node: bool,
    warnings: list[str],
) -> dict[str, Any]:
    """The config as a dict, from the plan and the launcher defaults (before the caller's overrides)."""
    # The shared seq_len must hold a prompt plus the completion cap.
    seq_len = max(
        D.PRIME_RL_SEQ_LEN,
        -(-(plan.max_tokens + D.PRIME_RL_PROMPT_TOKENS) // D.PRIME_RL_SEQ_LEN_MULTIPLE) * D.PRIME_RL_SEQ_LEN_MULTIPLE,
    )

    train_source = T.source(taskset)
    split = T.split_table(taskset)
    if split is not None and split[2] != "train" and "train" in (split[1] or ("train",)):
        # a bundled taskset whose default split is not its training split (gsm8k reads "test" unless told)
        train_source["env"]["taskset"][split[0]] = "train"
    orchestrator: dict[str, Any] = {
        "batch_size": batch,
        "group_size": plan.group_size,
        "max_off_policy_steps": plan.off_policy_steps
        if plan.off_policy_steps is not None
        else D.ASYNC_OFF_POLICY_STEPS,
        "algo": plan.algo,
        "train": {
            "sampling": {"temperature": plan.temperature, "max_completion_tokens": plan.max_tokens},
            "source": [train_source],
        },
        "eval": {
            "interval": max(1, steps // D.PRIME_RL_EVAL_ROUNDS),
            "num_examples": D.PRIME_RL_EVAL_EXAMPLES,
            "group_size": D.PRIME_RL_EVAL_GROUP,
            "sampling": {"temperature": plan.temperature, "max_completion_tokens": plan.max_tokens},
            "source": [T.source(taskset)],
        },
    }
    trainer: dict[str, Any] = {"optim": {"lr": plan.lr}}
    if lora:
        trainer["model"] = {"lora": {"rank": D.TRAINING_LORA_RANK, "alpha": D.TRAINING_LORA_ALPHA}}
    if plan.loss is not None:
        trainer["loss"] = plan.loss
    n_infer, n_train = gpus
    deployment: dict[str, Any] = {"num_infer_gpus": n_infer, "num_train_gpus": n_train}
    if n_infer + n_train > PRIME_RL_GPUS_PER_NODE and not multi_node:
        deployment["gpus_per_node"] = n_infer + n_train
        nodes_in, nodes_tr = max(1, -(-n_infer // PRIME_RL_GPUS_PER_NODE)), max(1, -(-n_train // PRIME_RL_GPUS_PER_NODE))
        warnings.append(
            f"{n_infer + n_train} GPUs on one node: the config sets gpus_per_node = {n_infer + n_train} "
            f"(prime-rl's default is {PRIME_RL_GPUS_PER_NODE}). If they are on several machines of "
            f"{PRIME_RL_GPUS_PER_NODE} GPUs, ask for a multi-node run through prime-rl's SLURM launcher instead: "
            f"nodes={{'inference': {nodes_in}, 'trainer': {nodes_tr}}}, gpus={PRIME_RL_GPUS_PER_NODE} (GPUs per node)."
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
            f"batches. Fix: use method='{M.RAE}' (an EMA baseline, built for one rollout per prompt), or "
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
        elif T.seats(taskset) is None:
            warnings.append(
                f"rae on a single-agent taskset is REINFORCE with an EMA baseline (decay {decay:g}); with "
                f"group_size {smallest} grpo's group mean is usually the better baseline."
            )
    if is_local_path(model):
        warnings.append(
            f"{model} looks like a local folder: it must exist at that path on every machine where `rl` runs "
            "(trainer, vLLM and orchestrator all load it)."
        )


