"""The run knobs of ``prime_rl_config`` (what a real run needs beyond the method), each put where
prime-rl's schema reads it, with the key recorded for ``honored``:

    wandb={project, name, entity, offline}  [monitors.wandb] (offline: per-process blocks, see below)
    checkpoint={interval, keep_last, resume} [ckpt] and [resume]
    run_name, output_dir                    run.name, output_dir (the run folder is output_dir/run.name)
    nodes, gpus (per node), slurm={...}     [deployment] type = "multi_node" + [slurm] (prime-rl's SLURM launcher);
                                            slurm alone: one node through SLURM, gpus_per_node = the run's GPUs
    max_model_len, gpu_memory_utilization   [inference.vllm]
    eval_taskset, eval_split                [[orchestrator.eval.source]] env.taskset (and its name)
    scheduler, warmup_steps                 [trainer.scheduler]

Field names and rules come from prime-rl 559b44772's config classes (configs/rl.py, shared.py,
monitors.py, trainer.py, inference.py). Each ``apply_*`` function checks one knob and writes it into the
config dict, recording in ``Applied`` what prime-rl honors (and under which key), warnings, needs and notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pick_a_method.trainers.config_result import as_bool, as_int
from pick_a_method.trainers.prime_rl.args import (
    as_float,
    check_mapping,
    check_name,
    check_taskset,
    check_text,
    show,
)
from pick_a_method.trainers.prime_rl.constants import (
    LINEAR_DECAY_STEPS,
    PRIME_RL_GPUS_PER_NODE,
    PRIME_RL_WARMUP_STEPS,
    SLURM_KEYS,
)
from pick_a_method.trainers.prime_rl import tasksets as T

WANDB_KEYS = ("project", "name", "entity", "offline")
CHECKPOINT_KEYS = ("interval", "keep_last", "resume")
SCHEDULERS = ("constant", "linear", "cosine")


@dataclass
class Applied:
    honored: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def apply_run_knobs(config: dict[str, Any], o: Any, taskset: str, steps: int, label: str,
                    nodes: tuple[int, int] | None, per_node: int | None, out: Applied) -> None:
    """Every run knob of the options (trainers/prime_rl/options.py PrimeRlOptions), each where prime-rl reads it, in
    one order (the TOML's tables follow it)."""
    apply_wandb(config, o.wandb, out)
    name = apply_run(config, o.run_name, o.output_dir, out)
    apply_checkpoint(config, o.checkpoint, name, out)
    if nodes is not None:
        apply_nodes(config, nodes, per_node, o.slurm, name, label, out)
    elif o.slurm is not None:  # one node through SLURM (prime-rl's single_node_rl.sbatch.j2, configs/rl.py)
        apply_slurm_node(config, o.slurm, name, label, out)
    apply_inference(config, o.max_model_len, o.gpu_memory_utilization, out)
    apply_eval(config, taskset, o.eval_taskset, o.eval_split, out)
    apply_scheduler(config, o.scheduler, o.warmup_steps, steps, out)


def apply_wandb(config: dict[str, Any], wandb: Any, out: Applied) -> None:
    if wandb is None:
        return
    spec = check_mapping("wandb", wandb, WANDB_KEYS, "{'project': 'my-project', 'name': 'run-1'}")
    table: dict[str, Any] = {}
    for key in ("project", "name", "entity"):
        if key in spec:
            table[key] = check_text(f"wandb['{key}']", spec[key])
    offline = as_bool("wandb['offline']", spec.get("offline", False))
    if offline:
        # `rl` always runs W&B in shared mode, which needs the server: the shared block refuses offline,
        # and the per-process blocks (which must agree on the project) take it (SharedWandbConfig).
        table.setdefault("project", "prime-rl")
        for side in ("trainer", "orchestrator"):
            config[side].setdefault("monitors", {})["wandb"] = {**table, "offline": True}
        where = "trainer.monitors.wandb / orchestrator.monitors.wandb"
        out.notes.append("wandb offline: prime-rl's shared [monitors.wandb] refuses offline = true, so each process "
                         "gets its own offline block (trainer.monitors.wandb, orchestrator.monitors.wandb); sync the "
                         "runs later with `wandb sync`.")
    else:
        config["monitors"] = {"wandb": table}
        where = "monitors.wandb"
        out.needs.append("W&B credentials where `rl` runs (WANDB_API_KEY, or `wandb login`)")
    for key in table:
        out.honored[f"wandb.{key}"] = f"{where}.{key}"
    if offline:
        out.honored["wandb.offline"] = f"{where}.offline"


def apply_checkpoint(config: dict[str, Any], checkpoint: Any, run_name: str | None, out: Applied) -> None:
    """Default: a bare [ckpt] (a checkpoint at the end of training, as prime-rl's examples do)."""
    if checkpoint is None:
        return
    if checkpoint is False:
        config.pop("ckpt", None)
        out.honored["checkpoint"] = "(no [ckpt]: no checkpoints)"
        return
    spec = check_mapping("checkpoint", checkpoint, CHECKPOINT_KEYS, "{'interval': 50, 'keep_last': 3}")
    ckpt = config.setdefault("ckpt", {})
    for key in ("interval", "keep_last"):
        if key in spec:
            ckpt[key] = as_int(f"checkpoint['{key}']", spec[key], 1, "steps between checkpoints / how many to keep.")
            out.honored[f"checkpoint.{key}"] = f"ckpt.{key}"
    if "resume" in spec:
        resume = spec["resume"]
        fix = ("checkpoint['resume'] is true (the latest checkpoint of this run), a step number, or the path of a "
               "checkpoint step folder '.../checkpoints/step_<N>' (from another run).")
        if resume is True:
            config["resume"] = {}
        elif resume is False:
            return
        elif isinstance(resume, str):
            folder = resume.rstrip("/").rsplit("/", 1)[-1]
            if not (folder.startswith("step_") and folder[5:].isdigit()):
                raise ValueError(f"checkpoint['resume'] {resume!r} is not a step folder. {fix}")
            config["resume"] = {"dir": resume}
        else:
            config["resume"] = {"step": as_int("checkpoint['resume']", resume, 1, fix)}
        if "dir" not in config["resume"] and run_name is None:
            raise ValueError(
                "checkpoint['resume'] resumes the run in output_dir/run.name, and without run_name every launch gets "
                "a fresh random run folder with nothing to resume. Fix: pass run_name='<the earlier run's name>' "
                "(and the same output_dir), or resume from a folder: checkpoint={'resume': '<run>/checkpoints/step_<N>'}."
            )
        out.honored["checkpoint.resume"] = "resume" + (".dir" if "dir" in config["resume"] else
                                                       ".step" if "step" in config["resume"] else " (latest)")


def apply_run(config: dict[str, Any], run_name: Any, output_dir: Any, out: Applied) -> str | None:
    name = None
    if run_name is not None:
        name = check_name("run_name", run_name, "the run folder output_dir/run_name")
        config["run"] = {"name": name}
        out.honored["run_name"] = "run.name"
    if output_dir is not None:
        config["output_dir"] = check_text("output_dir", output_dir)
        out.honored["output_dir"] = "output_dir"
    if name is None:
        out.notes.append("run.name is unset, so each launch writes to a fresh output_dir/<envs>--<model>--<8 hex> "
                         "folder; pass run_name (and output_dir) for a run you may want to resume.")
    return name


def apply_nodes(config: dict[str, Any], split: tuple[int, int], per_node: int | None, slurm: Any,
                run_name: str | None, label: str, out: Applied) -> None:
    """Several machines: prime-rl's SLURM launcher, each train node's GPUs all to the trainer, each
    inference node's to vLLM (gpus_per_node / tensor_parallel_size engines per node)."""
    n_infer, n_train = split
    deployment: dict[str, Any] = {"type": "multi_node", "num_train_nodes": n_train, "num_infer_nodes": n_infer}
    if per_node is not None:
        deployment["gpus_per_node"] = per_node
        out.honored["gpus"] = "deployment.gpus_per_node"
    config["deployment"] = deployment
    apply_slurm(config, slurm, run_name, label, out)
    out.honored["nodes"] = "deployment.num_train_nodes, deployment.num_infer_nodes"
    gpus = per_node or PRIME_RL_GPUS_PER_NODE
    if _lora_on(config):
        out.notes.append("LoRA weights reach vLLM through the filesystem (prime-rl forces it with LoRA): output_dir "
                         "must be on a filesystem every node shares.")
    out.notes.append(
        f"{n_train} trainer node(s) x {gpus} GPUs and {n_infer} inference node(s) x {gpus} GPUs under SLURM: each "
        "inference node runs gpus_per_node / inference.vllm.tensor_parallel_size vLLM engines behind one router."
    )


def apply_slurm(config: dict[str, Any], slurm: Any, run_name: str | None, label: str, out: Applied) -> None:
    """[slurm]: `rl` writes an sbatch script from prime-rl's template (single_node_rl.sbatch.j2 for a
    single_node deployment, multi_node_rl.sbatch.j2 otherwise: configs/rl.py, auto_setup_slurm_template)."""
    spec = {} if slurm is None else check_mapping("slurm", slurm, SLURM_KEYS, "{'partition': 'gpu', 'account': 'me'}")
    table: dict[str, Any] = {"job_name": run_name or f"pick-a-method-{label.replace(' ', '-')}"}
    for key, value in spec.items():
        if key == "cleanup_grace_period":
            table[key] = as_int("slurm['cleanup_grace_period']", value, 0, "seconds before teardown.")
        elif key == "shared_fs":
            table[key] = as_bool("slurm['shared_fs']", value)
        else:
            table[key] = check_text(f"slurm['{key}']", value)
        out.honored[f"slurm.{key}"] = f"slurm.{key}"
    config["slurm"] = table
    out.needs.append("a SLURM cluster: `rl` writes an sbatch script and submits it (sbatch)")


def apply_slurm_node(config: dict[str, Any], slurm: Any, run_name: str | None, label: str, out: Applied) -> None:
    """One node through SLURM: prime-rl's single_node_rl.sbatch.j2 asks for `--gres=gpu:<gpus_per_node>` (default 8,
    src/prime_rl/entrypoints/rl.py renders it from deployment.gpus_per_node), so the node is sized to the GPUs the
    run uses, not prime-rl's default."""
    apply_slurm(config, slurm, run_name, label, out)
    deployment = config["deployment"]
    used = deployment["num_infer_gpus"] + deployment["num_train_gpus"]
    deployment["gpus_per_node"] = max(used, deployment.get("gpus_per_node", 0))
    out.honored["gpus"] = "deployment.num_infer_gpus, deployment.num_train_gpus, deployment.gpus_per_node"
    out.notes.append(
        f"SLURM: prime-rl's single-node sbatch template asks for gres gpu:{deployment['gpus_per_node']} (the run's "
        "GPUs, deployment.gpus_per_node) and an exclusive node, so the job holds the whole node; for a node shared "
        "with other jobs, set slurm's template_path to a copy of prime-rl's template without its exclusive line."
    )


def _lora_on(config: dict[str, Any]) -> bool:
    return "lora" in config["trainer"].get("model", {})


def apply_inference(config: dict[str, Any], max_model_len: Any, gpu_memory_utilization: Any, out: Applied) -> None:
    vllm: dict[str, Any] = {}
    if max_model_len is not None:
        vllm["max_model_len"] = as_int("max_model_len", max_model_len, 1, "vLLM's context length (prompt + completion).")
        out.honored["max_model_len"] = "inference.vllm.max_model_len"
        seq_len, cap = config.get("seq_len"), config["orchestrator"]["train"]["sampling"]["max_completion_tokens"]
        if vllm["max_model_len"] <= cap:
            out.warnings.append(f"max_model_len {vllm['max_model_len']} leaves no room for a prompt next to the "
                                f"{cap}-token completion cap; raise it above prompt + {cap}.")
        if isinstance(seq_len, int) and vllm["max_model_len"] > seq_len:
            out.warnings.append(f"max_model_len {vllm['max_model_len']} is above seq_len {seq_len}: the trainer cuts "
                                f"samples longer than seq_len; raise seq_len with overrides={{'seq_len': {vllm['max_model_len']}}} "
                                "or lower it.")
    if gpu_memory_utilization is not None:
        vllm["gpu_memory_utilization"] = as_float("gpu_memory_utilization", gpu_memory_utilization, gt=0.0, le=1.0,
                                                  fix="The share of each inference GPU's memory vLLM may take.")
        out.honored["gpu_memory_utilization"] = "inference.vllm.gpu_memory_utilization"
    if vllm:
        config["inference"].setdefault("vllm", {}).update(vllm)


def split_value(taskset: str, split: Any) -> dict[str, Any]:
    """The taskset keys that select ``split``: a bundled taskset's own key (tasksets.py), or the caller's mapping;
    each refusal's fix comes from the same tables, so following it gives a config that loads."""
    keys = T.taskset_keys(taskset)
    if isinstance(split, Mapping):
        if not split or not all(isinstance(k, str) and k for k in split):
            raise ValueError(f"eval_split as a mapping names the taskset's own keys, e.g. {{'split': 'test'}}; got {show(split)}")
        unknown = [k for k in split if keys is not None and k not in keys]
        refused = [k for k in split if keys and keys.get(k) is not None and split[k] not in keys[k]]
        if unknown or refused:
            what = (f"{', '.join(map(repr, unknown))} is not a key of" if unknown else
                    f"{refused[0]!r} takes {', '.join(map(repr, keys[refused[0]]))} in")  # type: ignore[index]
            raise ValueError(f"eval_split {show(dict(split))}: {what} the {T.name_part(taskset)!r} taskset. "
                             f"Fix: {T.eval_split_advice(taskset)}.")
        return {k: v for k, v in split.items()}
    text = check_text("eval_split", split)
    table = T.split_table(taskset)
    if table is None:
        if keys is not None:  # bundled, with no split key
            raise ValueError(f"eval_split {text!r}: {T.name_part(taskset)} has no split key. Fix: "
                             f"{T.eval_split_advice(taskset)}.")
        raise ValueError(
            f"eval_split: the taskset {taskset!r} names its split key itself (reverse-text's is 'dataset_split', "
            f"gsm8k's 'split'), and this writer does not know {taskset!r}'s. Fix: pass the key with the split, "
            f"eval_split={{'<its split key>': {text!r}}}, e.g. eval_split={{'split': {text!r}}}."
        )
    key, allowed, _default = table
    if allowed is not None and text not in allowed:
        raise ValueError(f"eval_split {text!r}: the taskset {taskset!r} has the splits {', '.join(allowed)} "
                         f"(its key {key!r}). Fix: {T.eval_split_advice(taskset)}.")
    return {key: text}


def apply_eval(config: dict[str, Any], taskset: str, eval_taskset: Any, eval_split: Any, out: Applied) -> None:
    """Point [[orchestrator.eval.source]] at another taskset and/or split (a fresh source table, named after the
    taskset's name part and the split: prime-rl writes its env-server file under that name)."""
    if eval_taskset is None and eval_split is None:
        return
    ev = check_taskset(eval_taskset) if eval_taskset is not None else taskset
    keys = split_value(ev, eval_split) if eval_split is not None else {}
    eval_source = T.source(ev, "-".join(str(v) for v in keys.values()) or None)
    eval_source["env"]["taskset"].update(keys)
    for key in keys:
        out.honored["eval_split"] = f"orchestrator.eval.source.0.env.taskset.{key}"
    if eval_taskset is not None:
        out.honored["eval_taskset"] = "orchestrator.eval.source.0.env.taskset.id"
    config["orchestrator"]["eval"]["source"] = [eval_source]


def apply_scheduler(config: dict[str, Any], scheduler: Any, warmup_steps: Any, steps: int, out: Applied) -> None:
    if scheduler is None and warmup_steps is None:
        return
    spec: dict[str, Any]
    if scheduler is None or isinstance(scheduler, str):
        kind = "linear" if scheduler is None else scheduler
        if kind not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)} (or a table with `type`); got {show(kind)}")
        spec = {"type": kind}
    else:
        spec = check_mapping("scheduler", scheduler, ("type", "warmup_steps", "decay_steps", "min_lr"),
                             "{'type': 'cosine', 'warmup_steps': 10, 'min_lr': 1e-7}")
        if spec.get("type") not in SCHEDULERS:
            raise ValueError(f"scheduler['type'] must be one of {', '.join(SCHEDULERS)}; got {show(spec.get('type'))}")
    kind = spec["type"]
    if kind == "constant":
        if warmup_steps is not None or len(spec) > 1:
            raise ValueError("scheduler 'constant' takes no warmup or decay; use scheduler='linear' with "
                             "warmup_steps=<n> (warm up, then hold the rate)")
        config["trainer"]["scheduler"] = {"type": "constant"}
        out.honored["scheduler"] = "trainer.scheduler.type"
        return
    if warmup_steps is not None:
        spec["warmup_steps"] = warmup_steps
    table = {"type": kind}
    table["warmup_steps"] = as_int("warmup_steps", spec.get("warmup_steps", PRIME_RL_WARMUP_STEPS), 0, "steps of linear warmup.")
    if kind == "linear":
        table["decay_steps"] = as_int("scheduler['decay_steps']", spec.get("decay_steps", LINEAR_DECAY_STEPS), 0,
                                      "steps of decay.")
        if table["warmup_steps"] == 0 and table["decay_steps"] == 0:
            raise ValueError("scheduler 'linear' needs warmup_steps > 0 or decay_steps > 0; for a flat rate use "
                             "scheduler='constant'")
        if table["warmup_steps"] + table["decay_steps"] > steps:
            raise ValueError(f"warmup_steps ({table['warmup_steps']}) + decay_steps ({table['decay_steps']}) must not "
                             f"exceed steps ({steps}); shorten them or raise steps")
    elif table["warmup_steps"] >= steps:
        raise ValueError(f"warmup_steps ({table['warmup_steps']}) must be less than steps ({steps}) for a cosine "
                         "schedule; shorten the warmup or raise steps")
    if "min_lr" in spec:
        value = spec["min_lr"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"scheduler['min_lr'] must be a number >= 0; got {show(value)}")
        table["min_lr"] = float(value)
    config["trainer"]["scheduler"] = table
    out.honored["scheduler"] = "trainer.scheduler.type"
    out.honored["warmup_steps"] = "trainer.scheduler.warmup_steps"
    for key in ("decay_steps", "min_lr"):
        if key in spec:
            out.honored[f"scheduler.{key}"] = f"trainer.scheduler.{key}"
