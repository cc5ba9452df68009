"""What goes over the wire: the tools as their argument models declare them, refused unknown arguments, argument
errors that read like the row errors, and a compact text block beside ``structuredContent``.

``PickServer`` is the SDK's ``MCPServer`` with its two public tool hooks overridden: ``list_tools()`` lists the
declared tools (server/listing.py slims their schemas) and ``call_tool()`` checks a call's arguments against the
tool's model and runs it. Every transport and the in-process client reach tools through these two methods
(tests/server/test_server.py drives both), so no SDK internals are touched; resources and prompts stay the SDK's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp import MCPError
from mcp.types import CallToolResult, ImageContent, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, ValidationError

from .declare import Arguments
from .explain import explain, unknown
from .listing import input_schema, output_schema
from .schemas import ready_arguments

# No idempotentHint on a read-only tool: the MCP spec (ToolAnnotations, 2025-06-18) reads it "only when readOnlyHint
# == false" (22 characters a tool off the listing's budget, tests/server/test_agent_fit.py).
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES_FILE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                              open_world_hint=False)


def compact_json(data: Any) -> str:
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # an integer past 64 bits
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Served:
    """A tool: its argument model, what it answers (the output schema's model), and the few lines that run it."""

    arguments: type[Arguments]
    result: type[BaseModel]
    run: Callable[[Any, Any], Awaitable[Any]]  # (context, the validated arguments) -> a verdict or a CallToolResult

    def listed(self) -> Tool:
        model = self.arguments
        return Tool(name=model.tool, title=model.title, description=model.description(),
                    input_schema=input_schema(model.model_json_schema()),
                    output_schema=output_schema(self.result.model_json_schema(mode="serialization")),
                    annotations=WRITES_FILE if model.writes else READ_ONLY)


class PickServer(MCPServer):
    """MCPServer that serves declared tools, refuses undeclared arguments, explains argument errors and sends
    compact text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.served: dict[str, Served] = {}
        self._listing: list[Tool] | None = None

    def serve(self, arguments: type[Arguments], result: type[BaseModel],
              run: Callable[[Any, Any], Awaitable[Any]]) -> None:
        self.served[arguments.tool] = Served(arguments, result, run)
        self._listing = None

    async def list_tools(self) -> list[Tool]:
        if self._listing is None:  # the schemas are built once, on the first tools/list
            self._listing = [s.listed() for s in self.served.values()]
        return [*self._listing, *await super().list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        served = self.served.get(name)
        if served is None:
            raise ToolError(unknown("tool", name, list(self.served)) + f"; the tools: {', '.join(self.served)}")
        declared = list(served.arguments.model_fields)
        extra = [a for a in arguments if a not in declared]
        if extra:
            said = "; ".join(unknown("argument", a, declared) for a in extra)
            raise ToolError(f"Error executing tool {name}: {said}. {name} takes: {', '.join(declared)}")
        try:
            validated = served.arguments.model_validate(arguments)
        except ValidationError as e:
            raise ToolError(f"Error executing tool {name}: {explain(e)}") from e
        try:
            result = await served.run(context if context is not None else Context(mcp_server=self), validated)
        except MCPError:
            raise
        except ToolError as e:  # expected and fixable: its text reaches the model
            raise ToolError(f"Error executing tool {name}: {e}") from e
        except Exception as e:  # a bug: the SDK logs the traceback; the model sees no internals
            raise UnexpectedToolError(f"Error executing tool {name}") from e
        return self.answer(result)

    @staticmethod
    def answer(result: Any) -> CallToolResult:
        """The verdict as structuredContent, the same object as compact JSON text, and a picture if one was drawn."""
        if isinstance(result, CallToolResult):
            data, images = result.structured_content, [c for c in result.content if isinstance(c, ImageContent)]
        else:
            data, images = result.model_dump(mode="json", by_alias=True), []
        step = data.get("next_step") if isinstance(data, dict) else None
        if isinstance(step, dict) and isinstance(step.get("arguments"), dict):
            step["arguments"] = ready_arguments(step["arguments"])
        return CallToolResult(content=[TextContent(type="text", text=compact_json(data)), *images],
                              structured_content=data)
