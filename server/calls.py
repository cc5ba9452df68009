"""How the MCP server answers a call, by the kind of tool: each reads what the call names (rows, a run folder, a
tokenizer) inside the client's roots, runs the core off the event loop under the call's time budget, and maps errors
to tool errors (server/app.py registers one of these answers per tool).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent
from pydantic import ValidationError

from pick_a_method import routing
from pick_a_method.common.paths import confine

from . import extras
from .call_roots import check_call_roots
from .declare import Arguments
from .explain import explain
from .options import ServerOptions
from .roots import allowed, local_or_hub, placed
from .schemas import field_map, row_dicts

T = TypeVar("T")


class Calls:
    """The server's answers, sharing its options (the time budget, the caps, the roots)."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options

    def answer_for(self, arguments: type[Arguments]) -> Callable[..., Any]:
        """The answer a tool gets, by what it reads."""
        return (self.answer_run if arguments.reads_itself else self.answer_rows if arguments.row_sets
                else self.answer_writer if arguments.writes else self.answer_preview)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run core work on a worker thread under the call's time budget; bad input becomes a tool error."""
        try:
            with anyio.fail_after(self.options.call_seconds):
                return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"the call ran past its {self.options.call_seconds:g} s budget; pass fewer rows, or start "
                            f"the server with a larger --call-seconds") from None
        except ValidationError as e:  # a method's knobs (make_method builds a pydantic model)
            raise ToolError(explain(e)) from None
        except (ValueError, TypeError) as e:  # routing.InputError, method refusals
            raise ToolError(str(e)) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError, OSError) as e:
            raise ToolError(f"{e.__class__.__name__}: {e}") from None

    async def load(self, ctx: Context, a: Arguments, what: str, required: bool) -> routing.GradedRows | None:
        """One row set of a call: `what` inline, or `what`_path read from the allowed roots with progress."""
        rows, path, mapping = getattr(a, what), getattr(a, f"{what}_path"), field_map(getattr(a, "fields", None))
        if rows is not None and path is not None:
            raise ToolError(f"give {what} inline or {what}_path, not both")
        if path is not None:
            from anyio import from_thread  # a file read's progress only: not loaded at start-up

            def report(done: int, total: int) -> None:
                from_thread.check_cancelled()  # past the budget: stop reading, don't read on unseen
                from_thread.run(ctx.report_progress, done, total or None, f"read {done:,} bytes of {path}")
            roots = await allowed(ctx, self.options)
            return await self.run(routing.read_rows, path, fields=mapping, max_rows=self.options.max_rows,
                                  max_bytes=self.options.max_bytes, progress=report, argument=f"{what}_path",
                                  roots=roots)
        if rows is not None:
            dicts = await self.run(row_dicts, rows, what)
            if len(dicts) > self.options.max_rows:
                raise ToolError(f"{len(dicts):,} rows is over the cap of {self.options.max_rows:,}; raise it with "
                                f"--max-rows (or PICK_A_METHOD_MAX_ROWS), or pass a sample")
            return await self.run(routing.as_rows, dicts, what=what, fields=mapping)
        if required:
            raise ToolError(f"no {what}: pass {what} (row objects or JSONL text) or {what}_path (a file)")
        return None

    async def tokenizer_check(self, ctx: Context, teacher: str | None, student: str | None) -> Any:
        if not (teacher and student):
            return None
        roots = await allowed(ctx, self.options)
        teacher, student = await self.run(lambda: (local_or_hub(teacher, "teacher_tokenizer", roots),
                                              local_or_hub(student, "student_tokenizer", roots)))
        try:
            extras.require("transformers", "the tokenizer check (teacher_tokenizer/student_tokenizer)")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        from pick_a_method.methods.tokenizer_check import check_tokenizers  # imports transformers on first use
        return await self.run(check_tokenizers, teacher, student)

    async def answer_rows(self, ctx: Context, a: Any) -> Any:
        """A routing tool: its row sets read, its core called, its picture drawn when asked."""
        check_call_roots(a, await allowed(ctx, self.options))  # every folder outside named at once, not the first
        rows = {name: await self.load(ctx, a, name, required) for name, required in a.row_sets.items()}
        extra: dict[str, Any] = {}
        notes: list[str] = []
        if a.compares_tokenizers and a.tokenizers_match is None:
            check = await self.tokenizer_check(ctx, a.teacher_tokenizer, a.student_tokenizer)
            if check is not None:
                extra["tokenizers_match"] = {"same": True, "different": False}.get(check.verdict)
                notes.append(f"tokenizers: {check.summary}")
        if a.reads_more:  # what its core reads itself (after's manifest) comes from the allowed folders too
            extra["roots"] = await allowed(ctx, self.options)
        if a.writes and getattr(a, "freeze", None) is not None:  # route's manifest: written inside the write roots
            extra["allowed_roots"] = list(await allowed(ctx, self.options, write=True))
        verdict = await self.run(a.call, **rows, **extra)
        verdict.warnings.extend(notes)
        step = getattr(verdict, "next_step", None)
        if step is not None and isinstance(step.arguments.get("out"), str):  # a config file name: where it may go
            step.arguments["out"] = placed(step.arguments["out"], await allowed(ctx, self.options, write=True))
        if not getattr(a, "picture", False):
            return verdict
        from .plot import picture_png  # matplotlib on first use: never at start-up

        subject, kwargs = a.picture_of(rows)
        png = await self.run(picture_png, subject, verdict, **kwargs)
        return CallToolResult(content=[ImageContent(type="image", data=png, mime_type="image/png")],
                              structured_content=verdict.model_dump(mode="json"))

    async def answer_writer(self, ctx: Context, a: Any) -> Any:
        """A config writer: the tokenizer check where both are given, and `out` confined to the write roots."""
        check = await self.tokenizer_check(ctx, a.teacher_tokenizer, a.student_tokenizer)
        write_roots = list(await allowed(ctx, self.options, write=True)) if a.out is not None else None
        return await self.run(a.call, allowed_roots=write_roots, tokenizers_match=check)

    async def answer_preview(self, ctx: Context, a: Any) -> Any:
        try:
            extras.require("torch", "preview_update")
        except extras.MissingExtra as e:
            raise ToolError(str(e)) from None
        roots = await allowed(ctx, self.options)
        path = str(await self.run(confine, a.path, "path", roots)) if a.path is not None else None
        return await self.run(a.call, path=path, max_bytes=self.options.max_bytes)

    async def answer_run(self, ctx: Context, a: Any) -> Any:
        """A tool whose core reads its input itself (track's run folder), inside the allowed roots; the picture
        drawn when asked."""
        verdict = await self.run(a.call, roots=await allowed(ctx, self.options))
        if not a.picture:
            return verdict
        from .track_plot import track_png  # matplotlib on first use

        png = await self.run(track_png, verdict)
        return CallToolResult(content=[ImageContent(type="image", data=png, mime_type="image/png")],
                              structured_content=verdict.model_dump(mode="json"))
