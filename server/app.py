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
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, ToolAnnotations
from pydantic import Field, ValidationError

from pick_a_method import routing
from pick_a_method.methods.config_result import TrainerConfig
from pick_a_method.methods.preview import UpdatePreview
from pick_a_method.methods.prime_rl import PrimeRLConfig
from pick_a_method.routing import defaults as D
from pick_a_method.common.paths import confine

from . import extras
from .explain import explain
from .options import ServerOptions
from .roots import allowed, local_or_hub
from .schemas import (Checkpoint, FieldsArg, NameOrPairs, Nodes, OtherPathArg, OtherRowsText, Pairs, PathArg, Row,
                      RowsArg, RowsText, Throughput,
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
`next_step`: the call to make next (`tool`, `arguments`; fill what `needs` lists; `command` is a shell line to
run instead), which every verdict carries. Use `truncated_passes`, `band`, `pass_at` and `teacher_clears` to look at one
question; `holdout_size` to size the held-out set; `prime_rl_config` to write the prime-rl TOML for grpo, max_rl,
rae, opd, opsd or async; `preview_update` to see what a single-rollout method would keep from logged rollouts.
`trl_config` and `verl_config` write TRL and verl configs. Inline rows are row objects or JSONL text (keeps any
field); `fields` maps your field names; knobs and overrides are "key=value" strings, the value read as JSON when
it parses ({key, value} pairs and an object work too).
Read every verdict's `warnings`. The full guide is the resource skill://pick-a-method/SKILL.md.
"""

# One short line an argument: the tool's description, the server's instructions and the skill carry the rest.
Threshold = Annotated[float, Field(description="A row passes when reward >= this")]
Effect = Annotated[float, Field(gt=0, lt=1, description="Gain to prove, e.g. 0.05")]
Knobs = Annotated[Pairs, Field(description="key=value, value read as JSON, e.g. group_size=8; a dotted key nests")]
Tokenizer = Annotated[str | None, Field(description="Local folder or cached hub id")]
TokenizersMatch = Annotated[bool | None, Field(description="Teacher and student share a tokenizer")]
Out = Annotated[str | None, Field(description="Write the file here; omit to only return it")]
Picture = Annotated[bool, Field(description="Add a PNG picture")]
# Said by the name, the type and the default: no description (tests/server/test_agent_fit.py lists them).
Overwrite, Lora, Model, Steps = bool, bool, str, Annotated[int, Field(ge=1)]


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

    async def load(ctx: Context, rows: list[Row] | list[dict[str, Any]] | str | None, path: str | list[str] | None, what: str,
                   required: bool = True, fields: Fields | None = None) -> routing.GradedRows | None:
        mapping = field_map(fields)
        if rows is not None and path is not None:
            raise ToolError(f"give {what} inline or {what}_path, not both")
        if path is not None:
            from anyio import from_thread  # a file read's progress only: not loaded at start-up

            def report(done: int, total: int) -> None:
                from_thread.check_cancelled()  # past the budget: stop reading, don't read on unseen
                from_thread.run(ctx.report_progress, done, total or None, f"read {done:,} bytes of {path}")
            roots = await allowed(ctx, options)
            return await run(routing.read_rows, path, fields=mapping, max_rows=options.max_rows,
                             max_bytes=options.max_bytes, progress=report, argument=f"{what}_path", roots=roots)
        if rows is not None:
            dicts = await run(row_dicts, rows, what)
            if len(dicts) > options.max_rows:
                raise ToolError(f"{len(dicts):,} rows is over the cap of {options.max_rows:,}; raise it with "
                                f"--max-rows (or PICK_A_METHOD_MAX_ROWS), or pass a sample")
            return await run(routing.as_rows, dicts, what=what, fields=mapping)
        if required:
            raise ToolError(f"no {what}: pass {what} (row objects or JSONL text) or {what}_path (a file)")
        return None

    async def pictured(verdict: T, wanted: bool, rows: routing.GradedRows, **kwargs: Any) -> T | CallToolResult:
        """The verdict, and when asked its picture as a PNG image block beside it (server/plot.py draws it)."""
        if not wanted:
            return verdict
        from .plot import picture_png  # matplotlib on first use: never at start-up

        png = await run(picture_png, rows, verdict, **kwargs)
        return CallToolResult(content=[ImageContent(type="image", data=png, mime_type="image/png")],
                              structured_content=verdict.model_dump(mode="json"))

    @mcp.tool(title="Can a cut-off reply pass? (question 1)", annotations=READ_ONLY)
    async def truncated_passes(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                               pass_threshold: Threshold = D.PASS_THRESHOLD,
                               fields: FieldsArg = None) -> routing.TruncatedPasses:
        """Question 1: rows cut off at the token cap that still passed. Above zero: fix the reward first."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        return await run(routing.truncated_passes, graded, pass_threshold=pass_threshold)

    @mcp.tool(title="pass@1 with an interval, pass@k, pass^k", annotations=READ_ONLY)
    async def pass_at(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                      k: Annotated[int | None, Field(ge=1, description="Default: the smallest group")] = None,
                      pass_threshold: Threshold = D.PASS_THRESHOLD,
                      per_task_offset: Annotated[int, Field(ge=0)] = 0,
                      per_task_limit: Annotated[int, Field(ge=0, le=1000)] = 50,
                      fields: FieldsArg = None, picture: Picture = False) -> Annotated[CallToolResult, routing.PassAt]:
        """pass@1 with a 95% task-level interval, unbiased pass@k and pass^k, and per-task pass rates (paged)."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        verdict = await run(routing.pass_at, graded, k=k, pass_threshold=pass_threshold,
                            per_task_offset=per_task_offset, per_task_limit=per_task_limit)
        return await pictured(verdict, picture, graded, pass_threshold=pass_threshold)

    @mcp.tool(title="Floor, saturated or mixed? (question 3)", annotations=READ_ONLY)
    async def band(ctx: Context, rows: RowsText = None, rows_path: PathArg = None,
                   pass_threshold: Threshold = D.PASS_THRESHOLD, fields: FieldsArg = None,
                   picture: Picture = False) -> Annotated[CallToolResult, routing.Band]:
        """Question 3: is each task floor, saturated or mixed; the share that splits, and at larger k."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        verdict = await run(routing.band, graded, pass_threshold=pass_threshold)
        return await pictured(verdict, picture, graded, pass_threshold=pass_threshold)

    @mcp.tool(title="Does the teacher clear the student? (question 5)", annotations=READ_ONLY)
    async def teacher_clears(
            ctx: Context, teacher_rows: RowsText = None, teacher_rows_path: PathArg = None,
            student_rows: OtherRowsText = None, student_rows_path: OtherPathArg = None, effect: Effect = D.PROVE_EFFECT,
            pass_threshold: Threshold = D.PASS_THRESHOLD,
            tokenizers_match: TokenizersMatch = None, teacher_tokenizer: Tokenizer = None,
            student_tokenizer: Tokenizer = None, fields: FieldsArg = None, picture: Picture = False,
    ) -> Annotated[CallToolResult, routing.TeacherClears]:
        """Question 5: does the teacher beat the student by `effect` (95% intervals, paired on shared tasks)?
        Score both on the same tasks at the student's max_tokens; the tokenizers are compared when given."""
        t = await load(ctx, teacher_rows, teacher_rows_path, "teacher_rows", fields=fields)
        s = await load(ctx, student_rows, student_rows_path, "student_rows", fields=fields)
        match, notes = await _tokenizers(ctx, tokenizers_match, teacher_tokenizer, student_tokenizer)
        verdict = await run(routing.teacher_clears, t, s, effect, pass_threshold=pass_threshold,
                            tokenizers_match=match)
        verdict.warnings.extend(notes)
        return await pictured(verdict, picture, s, teacher_rows=t, pass_threshold=pass_threshold)

    @mcp.tool(title="Held-out tasks needed to prove an effect", annotations=READ_ONLY)
    async def holdout_size(
            ctx: Context, effect: Effect = D.PROVE_EFFECT,
            base: Annotated[float | None, Field(ge=0, le=1, description=f"Base pass rate (default {D.HOLDOUT_BASE:g}, or before rows')")] = None,
            k: Annotated[int | None, Field(ge=1, description=f"Rollouts per task (default {D.HOLDOUT_K})")] = None,
            power: Annotated[float, Field(gt=0, lt=1)] = D.HOLDOUT_POWER,
            alpha: Annotated[float, Field(gt=0, lt=1, description="Two-sided")] = D.HOLDOUT_ALPHA,
            task_std: Annotated[float | None, Field(gt=0, description="A task's paired-difference sd, if known")] = None,
            before_rows: RowsText = None, before_rows_path: PathArg = None,
            after_rows: OtherRowsText = None, after_rows_path: OtherPathArg = None, fields: FieldsArg = None,
    ) -> routing.HoldoutSize:
        """Held-out tasks that detect `effect` at `power`: binomial, from a known task sd, or from before/after rows."""
        before = await load(ctx, before_rows, before_rows_path, "before_rows", required=False, fields=fields)
        after = await load(ctx, after_rows, after_rows_path, "after_rows", required=False, fields=fields)
        return await run(routing.holdout_size, effect, base=base, k=k, power=power, alpha=alpha, before=before,
                         after=after, task_std=task_std)

    @mcp.tool(title="Route graded rows to a training method", annotations=READ_ONLY)
    async def route(
            ctx: Context, rows: RowsArg = None, rows_path: PathArg = None,
            model: Annotated[str | None, Field(description="The model you will train, e.g. Qwen/Qwen3-8B")] = None,
            teacher_rows: OtherRowsText = None, teacher_rows_path: OtherPathArg = None,
            taskset: Annotated[str | None, Field(description="prime-rl taskset id for next_step")] = None,
            teacher: Annotated[str | None, Field(description="Default: the teacher rows' model")] = None,
            teacher_base_url: Annotated[str | None, Field(description="The teacher's vLLM URL, for OPD")] = None,
            tokenizers_match: TokenizersMatch = None,
            preference_pairs: Annotated[bool | None, Field(description="Rows hold natural better/worse pairs")] = None,
            pass_threshold: Threshold = D.PASS_THRESHOLD, effect: Effect = D.PROVE_EFFECT,
            fields: FieldsArg = None, trainer: TrainerArg = "prime-rl",
            gpus: Annotated[int | None, Field(description="GPUs for the run, split by throughput")] = None,
            throughput: Annotated[Throughput | None, Field(description="Tokens/s per GPU of vLLM and of the trainer")] = None,
            picture: Picture = False,
    ) -> Annotated[CallToolResult, routing.Route]:
        """Start here. Asks the skill's questions in order and stops at the first that decides: the route, methods,
        warnings, each question's evidence (trace), checks before the GPU, and next_step, the call to make next
        (fill what its `needs` lists)."""
        graded = await load(ctx, rows, rows_path, "rows", fields=fields)
        teacher_graded = await load(ctx, teacher_rows, teacher_rows_path, "teacher_rows", required=False, fields=fields)
        verdict = await run(routing.route, graded, model, teacher_graded, pass_threshold=pass_threshold,
                            effect=effect, taskset=taskset, teacher=teacher, teacher_base_url=teacher_base_url,
                            tokenizers_match=tokenizers_match, preference_pairs=preference_pairs, trainer=trainer,
                            gpus=gpus, throughput=plain(throughput))
        return await pictured(verdict, picture, graded, model=model, teacher_rows=teacher_graded,
                              pass_threshold=pass_threshold, effect=effect)

    async def _tokenizer_check(ctx: Context, teacher: str | None, student: str | None) -> Any:
        if not (teacher and student):
            return None
        roots = await allowed(ctx, options)
        teacher, student = await run(lambda: (local_or_hub(teacher, "teacher_tokenizer", roots),
                                              local_or_hub(student, "student_tokenizer", roots)))
        try:
            extras.require("transformers", "the tokenizer check (teacher_tokenizer/student_tokenizer)")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        from pick_a_method.methods.tokenizer_check import check_tokenizers  # imports transformers on first use
        return await run(check_tokenizers, teacher, student)

    async def _tokenizers(ctx: Context, known: bool | None, teacher: str | None,
                          student: str | None) -> tuple[bool | None, list[str]]:
        check = None if known is not None else await _tokenizer_check(ctx, teacher, student)
        if check is None:
            return known, []
        return {"same": True, "different": False}.get(check.verdict), [f"tokenizers: {check.summary}"]

    @mcp.tool(title="Write the prime-rl config", annotations=WRITES_FILE)
    async def prime_rl_config(
            ctx: Context,
            taskset: Annotated[str, Field(description="prime-rl taskset id")],
            method: Annotated[str, Field(description="grpo, max_rl, rae, opd, opsd or async")],
            model: Model, knobs: Knobs = None, out: Out = None, overwrite: Overwrite = False,
            gpus: Annotated[int | Nodes | None, Field(description="On the node, >= 2 (default 2), or {inference, trainer}; per node with `nodes` (8)")] = None,
            steps: int = 100,
            batch: Annotated[int, Field(description="Rollouts per step")] = 64,
            lora: Lora = True,
            overrides: Annotated[Pairs, Field(description="Dotted prime-rl keys, e.g. trainer.optim.lr=2e-5")] = None,
            teacher_tokenizer: Tokenizer = None, student_tokenizer: Tokenizer = None,
            renderer: Annotated[str | None, Field(description="Default: chosen from the model")] = None,
            wandb: Annotated[WandB | None, Field(description="W&B run")] = None,
            checkpoint: Annotated[Checkpoint | Literal[False] | None, Field(description="resume: true, a step or a step_N folder; false: none")] = None,
            run_name: Annotated[str | None, Field(description="Run folder in output_dir (to resume)")] = None,
            output_dir: Annotated[str | None, Field(description="On the GPU machine")] = None,
            nodes: Annotated[int | Nodes | None, Field(description="SLURM machines: n, or {inference, trainer}")] = None,
            slurm: Annotated[Pairs, Field(description="[slurm] keys, e.g. partition=gpu")] = None,
            max_model_len: int | None = None,
            gpu_memory_utilization: Annotated[float | None, Field(description="vLLM's, (0, 1]")] = None,
            eval_taskset: Annotated[str | None, Field(description="Default: the training one")] = None,
            eval_split: Annotated[NameOrPairs, Field(description="A split name, or [\"<split key>=<split>\"]")] = None,
            scheduler: Annotated[NameOrPairs, Field(description="constant, linear or cosine, or its table as key=value")] = None,
            warmup_steps: int | None = None,
    ) -> PrimeRLConfig:
        """Write prime-rl's `rl` TOML (v0.8) for grpo, max_rl, rae, opd, opsd or async: the text, knobs honored and
        ignored, needs and the launch command. Single-rollout methods are refused with the fix."""
        from pick_a_method.methods.prime_rl import prime_rl_config as write

        check = await _tokenizer_check(ctx, teacher_tokenizer, student_tokenizer)
        write_roots = list(await allowed(ctx, options, write=True)) if out is not None else None
        return await run(lambda: write(taskset, method, model=model, knobs=pairs_dict(knobs, nest=True), out=out,
                                       overwrite=overwrite, gpus=plain(gpus), steps=steps, batch=batch, lora=lora,
                                       overrides=pairs_dict(overrides, nest=False, what="overrides"),
                                       allowed_roots=write_roots, tokenizers_match=check,
                                       renderer=renderer, wandb=plain(wandb), checkpoint=plain(checkpoint),
                                       run_name=run_name, output_dir=output_dir, nodes=plain(nodes),
                                       slurm=pairs_dict(slurm, nest=False, what="slurm"), max_model_len=max_model_len,
                                       gpu_memory_utilization=gpu_memory_utilization, eval_taskset=eval_taskset,
                                       eval_split=plain(eval_split, "eval_split"), scheduler=plain(scheduler, "scheduler"),
                                       warmup_steps=warmup_steps))

    @mcp.tool(title="Write the TRL config", annotations=WRITES_FILE)
    async def trl_config(
            ctx: Context,
            method: Annotated[str, Field(description="grpo, async (icepop or tis), groupwise_grading, opd, sft or dpo")],
            model: Model, knobs: Knobs = None,
            dataset: Annotated[str | None, Field(description="dataset_name; omit for a placeholder in needs")] = None,
            reward_funcs: Annotated[list[str] | None, Field(description="grpo: TRL reward names or import paths")] = None,
            out: Out = None, overwrite: Overwrite = False,
            gpus: Annotated[int, Field(ge=1, description="Per node")] = 1, nodes: Annotated[int, Field(ge=1)] = 1,
            steps: Steps = 100,
            batch: Annotated[int, Field(ge=1, description="Completions (grpo) or examples a step")] = 64,
            lora: Lora = True,
            vllm: Annotated[bool, Field(description="Generate with vLLM on the training GPUs")] = True,
            overrides: Annotated[Pairs, Field(description="TRL keys to set last")] = None,
            teacher_tokenizer: Tokenizer = None, student_tokenizer: Tokenizer = None,
    ) -> TrainerConfig:
        """Write the YAML `trl <grpo|dpo|sft|distillation> --config FILE` reads (TRL 1.16): knobs honored and
        ignored, needs and the launch command. Methods TRL cannot run are refused with what to do."""
        from pick_a_method.methods.trl import trl_config as write

        check = await _tokenizer_check(ctx, teacher_tokenizer, student_tokenizer)
        write_roots = list(await allowed(ctx, options, write=True)) if out is not None else None
        return await run(lambda: write(
            method, model=model, knobs=pairs_dict(knobs, nest=True), dataset=dataset, reward_funcs=reward_funcs,
            out=out, overwrite=overwrite, gpus=gpus, nodes=nodes, steps=steps, batch=batch, lora=lora, vllm=vllm,
            overrides=pairs_dict(overrides, nest=False, what="overrides"), allowed_roots=write_roots,
            tokenizers_match=check))

    @mcp.tool(title="Write the verl config", annotations=WRITES_FILE)
    async def verl_config(
            ctx: Context,
            method: Annotated[str, Field(description="grpo, async (tis or icepop) or opd")],
            model: Model, knobs: Knobs = None,
            train_files: Annotated[list[str] | None, Field(description="verl RL parquet files")] = None,
            val_files: Annotated[list[str] | None, Field(description="Held-out parquet files")] = None,
            reward_function: Annotated[str | None, Field(description="path/to/reward.py:function (default: verl's)")] = None,
            out: Out = None, overwrite: Overwrite = False,
            gpus: Annotated[int, Field(ge=1, description="Per node")] = 8, nodes: Annotated[int, Field(ge=1)] = 1,
            teacher_gpus: Annotated[int, Field(ge=1, description="opd: the teacher pool's GPUs")] = 2,
            steps: Steps = 100,
            batch: Annotated[int, Field(ge=1, description="Rollouts per step")] = 64,
            lora: Lora = True,
            overrides: Annotated[Pairs, Field(description="Dotted verl keys to set last")] = None,
            teacher_tokenizer: Tokenizer = None, student_tokenizer: Tokenizer = None,
    ) -> TrainerConfig:
        """The Hydra overrides (and the YAML) for verl 0.9.1's `python -m verl.trainer.main_ppo`: knobs honored
        and ignored, needs and the launch command."""
        from pick_a_method.methods.verl import verl_config as write

        check = await _tokenizer_check(ctx, teacher_tokenizer, student_tokenizer)
        write_roots = list(await allowed(ctx, options, write=True)) if out is not None else None
        return await run(lambda: write(
            method, model=model, knobs=pairs_dict(knobs, nest=True), train_files=train_files, val_files=val_files,
            reward_function=reward_function, out=out, overwrite=overwrite, gpus=gpus, nodes=nodes,
            teacher_gpus=teacher_gpus, steps=steps, batch=batch, lora=lora,
            overrides=pairs_dict(overrides, nest=False, what="overrides"), allowed_roots=write_roots,
            tokenizers_match=check))

    @mcp.tool(title="Preview a method's update on logged rollouts", annotations=READ_ONLY)
    async def preview_update(
            ctx: Context,
            method: Annotated[str, Field(description="FlashReinforce, SAO, BPCO, GRPO, ... (any update rule)")],
            knobs: Knobs = None,
            trajectories: TrajectoriesArg = None,
            path: Annotated[str | None, Field(description="A JSONL file of trajectories")] = None,
    ) -> UpdatePreview:
        """Run a method's update rule on logged rollouts: what it keeps and why (drift, ratios), i.e. whether the
        traces are too stale to learn from. Needs the [torch] extra."""
        try:
            extras.require("torch", "preview_update")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        from pick_a_method.methods.preview import preview_update as preview  # imports torch on first use

        if path is not None:
            path = str(await run(confine, path, "path", await allowed(ctx, options)))

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
