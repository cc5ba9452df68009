"""The MCP server: each tool reads its rows, calls its core function off the event loop, and maps errors.

The arguments of every tool are declared once (server/rows_tools.py, server/writer_tools.py); here is only what the
server adds: the client's roots, progress, the time budget, the tokenizer check and the picture. Neither torch nor
transformers is imported here: `preview_update` and the tokenizer check import them on first use, so `initialize`
and `tools/list` answer fast.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import typing
from typing import Any, Callable, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent
from pydantic import Field, ValidationError

from pick_a_method import routing
from pick_a_method.common.paths import confine

from . import extras
from .arguments import served
from .call_roots import check_call_roots
from .declare import Arguments
from .explain import explain
from .options import ServerOptions
from .roots import allowed, local_or_hub, placed
from .schemas import field_map, row_dicts
from .skill import skill_description, skill_text
from .wire import PickServer

log = logging.getLogger("pick_a_method.server")
T = TypeVar("T")

NAME = "pick-a-method"
SKILL_URI = f"skill://{NAME}/SKILL.md"

INSTRUCTIONS = """\
pick-a-method reads graded rollouts (one row per rollout: task_id, reward, truncated, model) and picks the
post-training method. Start with `route` on the rows and the model you will train: it asks the skill's questions in
order and returns the route, each question's evidence (`trace`) and `next_step`, the call to make next (`tool`,
`arguments`; fill what `needs` lists; `command` is a shell line to run instead). Every verdict has `summary`,
`warnings` (read them) and `next_step`. One question alone: `truncated_passes`, `band`, `pass_at`, `teacher_clears`;
`holdout_size` sizes the held-out set, `after` checks the trained model on it; `prime_rl_config`, `trl_config` and
`verl_config` write a trainer's config; `preview_update` runs an update rule on logged rollouts.

What the tools' shared arguments mean (they are not described again on each tool):
- rows: JSONL text, one row object a line (every field is kept); or rows_path: a file (JSONL, JSON, CSV, Parquet),
  an eval run's folder or log (vf-eval, lm-eval, inspect, verl), or a glob. teacher_rows, student_rows,
  before_rows, after_rows, random_selection_rows and random_reward_rows likewise, each with its _path.
- fields: your field names as "name=yours" (["reward=correct", "model=sampling.model"]; a dotted path reaches into
  objects). Names: task_id, reward, truncated, model, arm, tokens, completion, cut_off (finish reasons that mean
  the reply was cut off) and other_rewards (other graders' fields), the last two comma-separated.
- pass_threshold: a row passes when reward >= it. effect: the gain to prove (0.05 = five points). picture: add a PNG.
- knobs (the method's) and overrides (the trainer's own keys, dotted): "key=value" strings, the value read as JSON
  when it parses, a dotted knob nests. out: write the config there (else it is only returned); overwrite: replace a
  file. teacher_tokenizer / student_tokenizer: folders or hub ids to compare; tokenizers_match: say it instead.
The full guide is the resource skill://pick-a-method/SKILL.md.
"""

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

    async def load(ctx: Context, a: Arguments, what: str, required: bool) -> routing.GradedRows | None:
        """One row set of a call: `what` inline, or `what`_path read from the allowed roots with progress."""
        rows, path, mapping = getattr(a, what), getattr(a, f"{what}_path"), field_map(getattr(a, "fields", None))
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

    async def tokenizer_check(ctx: Context, teacher: str | None, student: str | None) -> Any:
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

    async def answer_rows(ctx: Context, a: Any) -> Any:
        """A routing tool: its row sets read, its core called, its picture drawn when asked."""
        check_call_roots(a, await allowed(ctx, options))  # every folder outside named at once, not the first
        rows = {name: await load(ctx, a, name, required) for name, required in a.row_sets.items()}
        extra: dict[str, Any] = {}
        notes: list[str] = []
        if a.compares_tokenizers and a.tokenizers_match is None:
            check = await tokenizer_check(ctx, a.teacher_tokenizer, a.student_tokenizer)
            if check is not None:
                extra["tokenizers_match"] = {"same": True, "different": False}.get(check.verdict)
                notes.append(f"tokenizers: {check.summary}")
        if a.reads_more:  # what its core reads itself (after's manifest) comes from the allowed folders too
            extra["roots"] = await allowed(ctx, options)
        if a.writes and getattr(a, "freeze", None) is not None:  # route's manifest: written inside the write roots
            extra["allowed_roots"] = list(await allowed(ctx, options, write=True))
        verdict = await run(a.call, **rows, **extra)
        verdict.warnings.extend(notes)
        step = getattr(verdict, "next_step", None)
        if step is not None and isinstance(step.arguments.get("out"), str):  # a config file name: where it may go
            step.arguments["out"] = placed(step.arguments["out"], await allowed(ctx, options, write=True))
        if not getattr(a, "picture", False):
            return verdict
        from .plot import picture_png  # matplotlib on first use: never at start-up

        subject, kwargs = a.picture_of(rows)
        png = await run(picture_png, subject, verdict, **kwargs)
        return CallToolResult(content=[ImageContent(type="image", data=png, mime_type="image/png")],
                              structured_content=verdict.model_dump(mode="json"))

    async def answer_writer(ctx: Context, a: Any) -> Any:
        """A config writer: the tokenizer check where both are given, and `out` confined to the write roots."""
        check = await tokenizer_check(ctx, a.teacher_tokenizer, a.student_tokenizer)
        write_roots = list(await allowed(ctx, options, write=True)) if a.out is not None else None
        return await run(a.call, allowed_roots=write_roots, tokenizers_match=check)

    async def answer_preview(ctx: Context, a: Any) -> Any:
        try:
            extras.require("torch", "preview_update")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        path = str(await run(confine, a.path, "path", await allowed(ctx, options))) if a.path is not None else None
        return await run(a.call, path=path, max_bytes=options.max_bytes)

    async def answer_run(ctx: Context, a: Any) -> Any:
        """A tool whose core reads its input itself (track's run folder), inside the allowed roots; the picture
        drawn when asked."""
        verdict = await run(a.call, roots=await allowed(ctx, options))
        if not a.picture:
            return verdict
        from .track_plot import track_png  # matplotlib on first use

        png = await run(track_png, verdict)
        return CallToolResult(content=[ImageContent(type="image", data=png, mime_type="image/png")],
                              structured_content=verdict.model_dump(mode="json"))

    for arguments in served():
        answer = (answer_run if arguments.reads_itself else answer_rows if arguments.row_sets
                  else answer_writer if arguments.writes else answer_preview)
        mcp.serve(arguments, arguments.result(), answer)

    @mcp.resource(SKILL_URI, name=NAME, title="pick-a-method skill", description=skill_description(),
                  mime_type="text/markdown")
    def skill_md() -> str:
        return skill_text()

    @mcp.prompt(name=NAME, title="Pick a post-training method")
    def pick_a_method_prompt(rows_path: typing.Annotated[str | None, Field(description="Your graded rows file.")] = None
                             ) -> str:
        """The pick-a-method skill, to follow on your graded rows."""
        ask = f"\n\nMy graded rows are in {rows_path}. Route them." if rows_path else ""
        return skill_text() + ask

    return mcp
