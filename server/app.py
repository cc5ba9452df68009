"""The MCP server: each tool reads its rows, calls one core function off the event loop, and maps errors.

Neither torch nor transformers is imported here: `preview_update` and the tokenizer check import them on
first use, so `initialize` and `tools/list` answer fast.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
from typing import Annotated, Any, Callable, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from pick_a_method import routing
from pick_a_method.methods.config_result import TrainerConfig
from pick_a_method.methods.preview import UpdatePreview
from pick_a_method.methods.prime_rl import PrimeRLConfig
from pick_a_method.routing import defaults as D

from . import extras
from .explain import explain
from .options import ServerOptions
from .schemas import (Checkpoint, FieldsArg, NameOrPairs, Nodes, Pairs, PathArg, Row, RowsArg, RowsText, Throughput,
                      TrainerArg, TrajectoriesArg, WandB, Fields, field_map, pairs_dict, plain, row_dicts, trajectory_dicts)
from .skill import skill_description, skill_text
from .wire import PickServer

log = logging.getLogger("pick_a_method.server")
T = TypeVar("T")

NAME = "pick-a-method"
SKILL_URI = f"skill://{NAME}/SKILL.md"
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES_FILE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                              open_world_hint=False)

INSTRUCTIONS = """\
pick-a-method reads graded rollouts (one row per rollout: task_id, reward, truncated, model) and picks the
post-training method. Start with `route` on the rows (rows_path for a file) and the model you will train; it asks
the skill's six questions in order and returns the route, the evidence for each question (`trace`) and
`next_step`, a ready tool call. Use `truncated_passes`, `band`, `pass_at` and `teacher_clears` to look at one
question; `holdout_size` to size the held-out set; `prime_rl_config` to write the prime-rl TOML for grpo, max_rl,
rae, opd, opsd or async; `preview_update` to see what a single-rollout method would keep from logged rollouts.
`trl_config` and `verl_config` write TRL and verl configs. Inline rows are row objects or JSONL text (keeps any
field); `fields` maps your field names; knobs and overrides are [{key, value}] pairs.
Read every verdict's `warnings`. The full guide is the resource skill://pick-a-method/SKILL.md.
"""

Threshold = Annotated[float, Field(description="A row passes when reward >= this.")]
Effect = Annotated[float, Field(gt=0, lt=1, description="The gain to prove, e.g. 0.05 (five points).")]
Knobs = Annotated[Pairs, Field(description="Knobs as {key, value} pairs; a dotted key nests (method.name).")]


def _version() -> str:
    try:
        return importlib.metadata.version(NAME)
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0+local"


def create_server(options: ServerOptions | None = None) -> PickServer:
    options = options or ServerOptions()
    mcp = PickServer(NAME, title="pick-a-method", version=_version(), instructions=INSTRUCTIONS)

    async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run core work on a worker thread under the call's time budget; bad input becomes a tool error."""
        try:
            with anyio.fail_after(options.call_seconds):
                return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"the call ran past its {options.call_seconds:g} s budget; pass fewer rows, or start "
                            f"the server with a larger --call-seconds") from None
        except ValidationError as e:  # a method's knobs (make_method builds a pydantic model)
            raise ToolError(explain(e)) from None
        except (ValueError, TypeError) as e:  # routing.InputError, method refusals
            raise ToolError(str(e)) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError, OSError) as e:
            raise ToolError(f"{e.__class__.__name__}: {e}") from None

    async def load(ctx: Context, rows: list[Row] | list[dict[str, Any]] | str | None, path: str | None, what: str,
                   required: bool = True, fields: Fields | None = None) -> routing.GradedRows | None:
        mapping = field_map(fields)
        if rows is not None and path is not None:
            raise ToolError(f"give {what} inline or {what}_path, not both")
        if path is not None:
            def report(done: int, total: int) -> None:
                anyio.from_thread.check_cancelled()  # past the budget: stop reading, don't read on unseen
                anyio.from_thread.run(ctx.report_progress, done, total or None, f"read {done:,} bytes of {path}")
            return await run(routing.read_rows, path, fields=mapping, max_rows=options.max_rows,
                             max_bytes=options.max_bytes, progress=report, argument=f"{what}_path")
        if rows is not None:
            dicts = await run(row_dicts, rows, what)
            if len(dicts) > options.max_rows:
                raise ToolError(f"{len(dicts):,} rows is over the cap of {options.max_rows:,}; raise it with "
                                f"--max-rows (or PICK_A_METHOD_MAX_ROWS), or pass a sample")
            return await run(routing.as_rows, dicts, what=what, fields=mapping)
        if required:
            raise ToolError(f"no {what}: pass {what} (row objects or JSONL text) or {what}_path (a file)")
        return None

    @mcp.tool(title="Can a cut-off reply pass? (question 1)", annotations=READ_ONLY)
    async def truncated_passes(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                               pass_threshold: Threshold = D.PASS_THRESHOLD,
                               fields: FieldsArg = None) -> routing.TruncatedPasses:
        """Count rows cut off at the token cap that still passed. Above zero: fix the reward first."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        return await run(routing.truncated_passes, graded, pass_threshold=pass_threshold)

    @mcp.tool(title="pass@1 with an interval, pass@k, pass^k", annotations=READ_ONLY)
    async def pass_at(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                      k: Annotated[int | None, Field(ge=1, description="k for pass@k and pass^k; default: the smallest group.")] = None,
                      pass_threshold: Threshold = D.PASS_THRESHOLD,
                      per_task_offset: Annotated[int, Field(ge=0, description="Page through per_task from here.")] = 0,
                      per_task_limit: Annotated[int, Field(ge=0, le=1000, description="Tasks listed in per_task.")] = 50,
                      fields: FieldsArg = None) -> routing.PassAt:
        """Per-task pass rates, pass@1 with a 95% task-level interval, and unbiased pass@k and pass^k."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        return await run(routing.pass_at, graded, k=k, pass_threshold=pass_threshold,
                         per_task_offset=per_task_offset, per_task_limit=per_task_limit)

    @mcp.tool(title="Floor, saturated or mixed? (question 3)", annotations=READ_ONLY)
    async def band(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                   pass_threshold: Threshold = D.PASS_THRESHOLD, fields: FieldsArg = None) -> routing.Band:
        """The per-task band (floor, saturated or mixed), the share of tasks that split, and that share at
        larger k."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        return await run(routing.band, graded, pass_threshold=pass_threshold)

    @mcp.tool(title="Does the teacher clear the student? (question 5)", annotations=READ_ONLY)
    async def teacher_clears(
            ctx: Context, teacher_rows: RowsText = None, teacher_rows_path: PathArg = None,
            student_rows: RowsText = None, student_rows_path: PathArg = None, effect: Effect = D.PROVE_EFFECT,
            pass_threshold: Threshold = D.PASS_THRESHOLD,
            tokenizers_match: Annotated[bool | None, Field(description="Teacher and student share a tokenizer.")] = None,
            teacher_tokenizer: Annotated[str | None, Field(description="Teacher tokenizer (local folder or cached hub id), checked against student_tokenizer.")] = None,
            student_tokenizer: Annotated[str | None, Field(description="Student tokenizer.")] = None,
            fields: FieldsArg = None,
    ) -> routing.TeacherClears:
        """Does the teacher beat the student by `effect` (95% intervals; paired interval on shared tasks)? Score
        both on the same tasks at the student's max_tokens."""
        t = await load(ctx, teacher_rows, teacher_rows_path, "teacher_rows", fields=fields)
        s = await load(ctx, student_rows, student_rows_path, "student_rows", fields=fields)
        match, notes = await _tokenizers(tokenizers_match, teacher_tokenizer, student_tokenizer)
        verdict = await run(routing.teacher_clears, t, s, effect, pass_threshold=pass_threshold,
                            tokenizers_match=match)
        verdict.warnings.extend(notes)
        return verdict

    @mcp.tool(title="Held-out tasks needed to prove an effect", annotations=READ_ONLY)
    async def holdout_size(
            ctx: Context, effect: Effect = D.PROVE_EFFECT,
            base: Annotated[float | None, Field(ge=0, le=1, description=f"Base pass rate (default {D.HOLDOUT_BASE}, or read off before rows).")] = None,
            k: Annotated[int | None, Field(ge=1, description=f"Rollouts per task (default {D.HOLDOUT_K}).")] = None,
            power: Annotated[float, Field(gt=0, lt=1, description="Chance to detect the effect when it is real.")] = D.HOLDOUT_POWER,
            alpha: Annotated[float, Field(gt=0, lt=1, description="Two-sided false-positive rate.")] = D.HOLDOUT_ALPHA,
            task_std: Annotated[float | None, Field(gt=0, description="One task's paired-difference sd, if known.")] = None,
            before_rows: RowsText = None, before_rows_path: PathArg = None,
            after_rows: RowsText = None, after_rows_path: PathArg = None, fields: FieldsArg = None,
    ) -> routing.HoldoutSize:
        """Held-out tasks that detect `effect` at `power`: binomial model, a known task sd, or before/after rows."""
        before = await load(ctx, before_rows, before_rows_path, "before_rows", required=False, fields=fields)
        after = await load(ctx, after_rows, after_rows_path, "after_rows", required=False, fields=fields)
        return await run(routing.holdout_size, effect, base=base, k=k, power=power, alpha=alpha, before=before,
                         after=after, task_std=task_std)

    @mcp.tool(title="Route graded rows to a training method", annotations=READ_ONLY)
    async def route(
            ctx: Context, rows: RowsArg = None, rows_path: PathArg = None,
            model: Annotated[str | None, Field(description="The model you will train, e.g. Qwen/Qwen3-8B.")] = None,
            teacher_rows: RowsText = None, teacher_rows_path: PathArg = None,
            taskset: Annotated[str | None, Field(description="prime-rl taskset id, filled into next_step.")] = None,
            teacher: Annotated[str | None, Field(description="Teacher model name (default: the teacher rows' model).")] = None,
            teacher_base_url: Annotated[str | None, Field(description="The teacher's vLLM server URL, for OPD.")] = None,
            tokenizers_match: Annotated[bool | None, Field(description="Teacher and student share a tokenizer.")] = None,
            preference_pairs: Annotated[bool | None, Field(description="The rows hold natural better/worse pairs per prompt.")] = None,
            pass_threshold: Threshold = D.PASS_THRESHOLD, effect: Effect = D.PROVE_EFFECT,
            fields: FieldsArg = None, trainer: TrainerArg = "prime-rl",
            gpus: Annotated[int | None, Field(description="GPUs for the run; with throughput, split between inference and trainer.")] = None,
            throughput: Annotated[Throughput | None, Field(description="Tokens/s per GPU of vLLM and of the trainer, for that split.")] = None,
    ) -> routing.Route:
        """Start here. Asks the skill's questions in order, stops at the first that decides; returns the route,
        methods, each question's evidence (trace), next_step (a ready call) and checks before the GPU."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        teacher_graded = await load(ctx, teacher_rows, teacher_rows_path, "teacher_rows", required=False, fields=fields)
        return await run(routing.route, graded, model, teacher_graded, pass_threshold=pass_threshold, effect=effect,
                         taskset=taskset, teacher=teacher, teacher_base_url=teacher_base_url,
                         tokenizers_match=tokenizers_match, preference_pairs=preference_pairs, trainer=trainer,
                         gpus=gpus, throughput=plain(throughput))

    async def _tokenizer_check(teacher: str | None, student: str | None) -> Any:
        if not (teacher and student):
            return None
        try:
            extras.require("transformers", "the tokenizer check (teacher_tokenizer/student_tokenizer)")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        from pick_a_method.methods.tokenizer_check import check_tokenizers  # imports transformers on first use
        return await run(check_tokenizers, teacher, student)

    async def _tokenizers(known: bool | None, teacher: str | None, student: str | None) -> tuple[bool | None, list[str]]:
        check = None if known is not None else await _tokenizer_check(teacher, student)
        if check is None:
            return known, []
        return {"same": True, "different": False}.get(check.verdict), [f"tokenizers: {check.summary}"]

    @mcp.tool(title="Write the prime-rl config", annotations=WRITES_FILE)
    async def prime_rl_config(
            taskset: Annotated[str, Field(description="prime-rl taskset id (env.taskset.id).")],
            method: Annotated[str, Field(description="grpo, max_rl, rae, opd, opsd or async.")],
            model: Annotated[str, Field(description="The model to train, e.g. Qwen/Qwen3-8B.")],
            knobs: Annotated[Pairs, Field(description="Knobs as {key, value} pairs, e.g. teacher, base_url (opd); method, correction (async). A dotted key nests.")] = None,
            out: Annotated[str | None, Field(description="Write the TOML here; omit to only return it.")] = None,
            overwrite: Annotated[bool, Field(description="Replace an existing file at `out`.")] = False,
            gpus: Annotated[int | Nodes | None, Field(description="GPUs on the node (at least 2: inference and trainer; default 2), or {inference, trainer}; with `nodes`, GPUs per node (default 8).")] = None,
            steps: Annotated[int, Field(description="max_steps.")] = 100,
            batch: Annotated[int, Field(description="Prompts x rollouts per step (orchestrator batch_size).")] = 64,
            lora: Annotated[bool, Field(description="Train a LoRA adapter.")] = True,
            overrides: Annotated[Pairs, Field(description="prime-rl keys to set: {key: \"trainer.optim.lr\", value: 2e-5} pairs.")] = None,
            teacher_tokenizer: Annotated[str | None, Field(description="opd: the teacher's tokenizer, checked against student_tokenizer.")] = None,
            student_tokenizer: Annotated[str | None, Field(description="opd: the student's tokenizer.")] = None,
            renderer: Annotated[str | None, Field(description="[orchestrator.renderer] name (default, qwen3, ...); omit to choose from the model.")] = None,
            wandb: Annotated[WandB | None, Field(description="W&B run: project, name, entity, offline.")] = None,
            checkpoint: Annotated[Checkpoint | Literal[False] | None, Field(description="interval, keep_last, resume (true, a step, or a .../step_N folder); false: none.")] = None,
            run_name: Annotated[str | None, Field(description="run.name: the run folder output_dir/run_name (needed to resume).")] = None,
            output_dir: Annotated[str | None, Field(description="output_dir on the GPU machine.")] = None,
            nodes: Annotated[int | Nodes | None, Field(description="Machines for a multi-node SLURM run: n, or {inference, trainer}.")] = None,
            slurm: Annotated[Pairs, Field(description="[slurm] keys as {key, value} pairs, e.g. partition=gpu.")] = None,
            max_model_len: Annotated[int | None, Field(description="vLLM max_model_len.")] = None,
            gpu_memory_utilization: Annotated[float | None, Field(description="vLLM gpu_memory_utilization (0-1].")] = None,
            eval_taskset: Annotated[str | None, Field(description="Taskset the eval reads (default: the training one).")] = None,
            eval_split: Annotated[NameOrPairs, Field(description="Eval split name, or [{key: <the taskset's split key>, value}].")] = None,
            scheduler: Annotated[NameOrPairs, Field(description="LR schedule: constant, linear or cosine (or its table as pairs).")] = None,
            warmup_steps: Annotated[int | None, Field(description="LR warmup steps.")] = None,
    ) -> PrimeRLConfig:
        """Write prime-rl's `rl` TOML (v0.8) for grpo, max_rl, rae, opd, opsd or async; returns the text, the knobs
        honored and ignored, warnings and the launch command. Single-rollout methods are refused with the fix."""
        from pick_a_method.methods.prime_rl import prime_rl_config as write

        check = await _tokenizer_check(teacher_tokenizer, student_tokenizer)
        return await run(lambda: write(taskset, method, model=model, knobs=pairs_dict(knobs, nest=True), out=out,
                                       overwrite=overwrite, gpus=plain(gpus), steps=steps, batch=batch, lora=lora,
                                       overrides=pairs_dict(overrides, nest=False),
                                       allowed_roots=list(options.write_roots), tokenizers_match=check,
                                       renderer=renderer, wandb=plain(wandb), checkpoint=plain(checkpoint),
                                       run_name=run_name, output_dir=output_dir, nodes=plain(nodes),
                                       slurm=pairs_dict(slurm, nest=False), max_model_len=max_model_len,
                                       gpu_memory_utilization=gpu_memory_utilization, eval_taskset=eval_taskset,
                                       eval_split=plain(eval_split), scheduler=plain(scheduler),
                                       warmup_steps=warmup_steps))

    @mcp.tool(title="Write the TRL config", annotations=WRITES_FILE)
    async def trl_config(
            method: Annotated[str, Field(description="grpo, async (around grpo; correction icepop or tis), groupwise_grading, opd, sft or dpo.")],
            model: Annotated[str, Field(description="The model to train, e.g. Qwen/Qwen3-8B.")],
            knobs: Annotated[Pairs, Field(description="The method's knobs as {key, value} pairs, e.g. group_size, teacher, correction.")] = None,
            dataset: Annotated[str | None, Field(description="The dataset (dataset_name); omit for a placeholder listed in needs.")] = None,
            reward_funcs: Annotated[list[str] | None, Field(description="grpo: TRL reward names or dotted import paths.")] = None,
            out: Annotated[str | None, Field(description="Write the .yaml here; omit to only return it.")] = None,
            overwrite: Annotated[bool, Field(description="Replace an existing file at `out`.")] = False,
            gpus: Annotated[int, Field(ge=1, description="GPUs per node.")] = 1,
            nodes: Annotated[int, Field(ge=1, description="Machines.")] = 1,
            steps: Annotated[int, Field(ge=1, description="max_steps.")] = 100,
            batch: Annotated[int, Field(ge=1, description="Completions (grpo) or examples per optimizer step.")] = 64,
            lora: Annotated[bool, Field(description="Train a LoRA adapter.")] = True,
            vllm: Annotated[bool, Field(description="Generate with vLLM colocated on the training GPUs.")] = True,
            overrides: Annotated[Pairs, Field(description="TRL keys to set last, as {key, value} pairs.")] = None,
            teacher_tokenizer: Annotated[str | None, Field(description="For opd: the teacher's tokenizer to compare.")] = None,
            student_tokenizer: Annotated[str | None, Field(description="For opd: the student's tokenizer.")] = None,
    ) -> TrainerConfig:
        """Write the YAML that `trl <grpo|dpo|sft|distillation> --config FILE` reads (TRL 1.16), with what TRL honors
        and ignores, what to fill in, and the launch command. Methods TRL cannot run are refused with what to do."""
        from pick_a_method.methods.trl import trl_config as write

        check = await _tokenizer_check(teacher_tokenizer, student_tokenizer)
        return await run(write, method, model=model, knobs=pairs_dict(knobs, nest=True), dataset=dataset, reward_funcs=reward_funcs,
                         out=out, overwrite=overwrite, gpus=gpus, nodes=nodes, steps=steps, batch=batch, lora=lora,
                         vllm=vllm, overrides=pairs_dict(overrides, nest=False), allowed_roots=list(options.write_roots),
                         tokenizers_match=check)

    @mcp.tool(title="Write the verl config", annotations=WRITES_FILE)
    async def verl_config(
            method: Annotated[str, Field(description="grpo, async (around grpo; correction tis or icepop) or opd.")],
            model: Annotated[str, Field(description="The model to train (actor_rollout_ref.model.path).")],
            knobs: Annotated[Pairs, Field(description="The method's knobs as {key, value} pairs.")] = None,
            train_files: Annotated[list[str] | None, Field(description="verl RL parquet files for training.")] = None,
            val_files: Annotated[list[str] | None, Field(description="Held-out parquet files.")] = None,
            reward_function: Annotated[str | None, Field(description="path/to/reward.py:function (default: verl's scorer for each row's data_source).")] = None,
            out: Annotated[str | None, Field(description="Write the Hydra .yaml here; omit to get the overrides only.")] = None,
            overwrite: Annotated[bool, Field(description="Replace an existing file at `out`.")] = False,
            gpus: Annotated[int, Field(ge=1, description="GPUs per node (trainer.n_gpus_per_node).")] = 8,
            nodes: Annotated[int, Field(ge=1, description="Ray nodes (trainer.nnodes).")] = 1,
            teacher_gpus: Annotated[int, Field(ge=1, description="opd: GPUs for the teacher pool.")] = 2,
            steps: Annotated[int, Field(ge=1, description="trainer.total_training_steps.")] = 100,
            batch: Annotated[int, Field(ge=1, description="Rollouts per step (prompts x group size).")] = 64,
            lora: Annotated[bool, Field(description="Train a LoRA adapter.")] = True,
            overrides: Annotated[Pairs, Field(description="Dotted verl keys to set last, as {key, value} pairs.")] = None,
            teacher_tokenizer: Annotated[str | None, Field(description="For opd: the teacher's tokenizer to compare.")] = None,
            student_tokenizer: Annotated[str | None, Field(description="For opd: the student's tokenizer.")] = None,
    ) -> TrainerConfig:
        """The Hydra overrides (and the same as a YAML file) for verl's `python -m verl.trainer.main_ppo` (verl 0.9.1),
        with what verl honors and ignores, what to fill in and the launch command."""
        from pick_a_method.methods.verl import verl_config as write

        check = await _tokenizer_check(teacher_tokenizer, student_tokenizer)
        return await run(write, method, model=model, knobs=pairs_dict(knobs, nest=True), train_files=train_files,
                         val_files=val_files, reward_function=reward_function, out=out, overwrite=overwrite, gpus=gpus,
                         nodes=nodes, teacher_gpus=teacher_gpus, steps=steps, batch=batch, lora=lora,
                         overrides=pairs_dict(overrides, nest=False), allowed_roots=list(options.write_roots), tokenizers_match=check)

    @mcp.tool(title="Preview a method's update on logged rollouts", annotations=READ_ONLY)
    async def preview_update(
            method: Annotated[str, Field(description="Any method with an update rule: FlashReinforce, SAO, BPCO, GRPO, ...")],
            knobs: Knobs = None,
            trajectories: TrajectoriesArg = None,
            path: Annotated[str | None, Field(description="A JSONL file of such trajectories.")] = None,
    ) -> UpdatePreview:
        """Run a method's update rule on logged rollouts: what it admits and why (drift, ratios), i.e. whether
        the traces are too stale to learn from. Needs the [torch] extra."""
        try:
            extras.require("torch", "preview_update")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        from pick_a_method.methods.preview import preview_update as preview  # imports torch on first use

        return await run(lambda: preview(method, pairs_dict(knobs, nest=True), trajectories=trajectory_dicts(trajectories),
                                         path=path, max_bytes=options.max_bytes))

    @mcp.resource(SKILL_URI, name=NAME, title="pick-a-method skill", description=skill_description(),
                  mime_type="text/markdown")
    def skill_md() -> str:
        return skill_text()

    @mcp.prompt(name=NAME, title="Pick a post-training method")
    def pick_a_method_prompt(rows_path: Annotated[str | None, Field(description="Your graded rows file.")] = None) -> str:
        """The pick-a-method skill, to follow on your graded rows."""
        ask = f"\n\nMy graded rows are in {rows_path}. Route them." if rows_path else ""
        return skill_text() + ask

    mcp.seal()  # last: slims every tool's schemas and records its arguments (tools added above this line)
    return mcp
