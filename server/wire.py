"""What goes over the wire, beside the tools themselves: lean schemas, refused unknown arguments, argument errors
that read like the row errors, and a compact text block beside ``structuredContent``.

``PickServer`` is the SDK's ``MCPServer`` with ``call_tool`` wrapped (the one path every transport and the
in-process client take) and ``seal()``, called once the tools are registered, to slim what ``tools/list`` sends.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import ValidationError

from .explain import explain, unknown
from .listing import input_schema, output_schema
from .schemas import ready_arguments


def compact_json(data: Any) -> str:
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # an integer past 64 bits
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class PickServer(MCPServer):
    """MCPServer that refuses undeclared arguments, explains argument errors and sends compact text."""

    _declared: dict[str, list[str]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # MCPServer.__init__ calls the SDK's configure_logging, which imports rich and builds a Console (0.1 s of
        # start-up on a busy 2-core machine) only to hand logging.basicConfig a handler; basicConfig ignores it
        # when the root logger has handlers already (the command line sets them first). Then rich is kept out
        # for the call, and configure_logging takes its own fallback: nothing changes but the time.
        if not logging.getLogger().handlers or "rich" in sys.modules:
            super().__init__(*args, **kwargs)
            return
        sys.modules["rich"] = None  # type: ignore[assignment]  # an import of rich now raises ImportError
        try:
            super().__init__(*args, **kwargs)
        finally:
            del sys.modules["rich"]

    def seal(self) -> None:
        """Slim every registered tool's schemas and record its argument names. Call after the last tool."""
        self._declared = {}
        for tool in self._tool_manager.list_tools():
            tool.description = " ".join(tool.description.split())  # a docstring's line breaks and indents: noise
            tool.parameters = input_schema(tool.parameters)
            if tool.fn_metadata.output_schema is not None:
                tool.fn_metadata.output_schema = output_schema(tool.fn_metadata.output_schema)
                tool.__dict__.pop("output_schema", None)  # a cached_property on the Tool
            self._declared[tool.name] = list(tool.parameters.get("properties", {}))

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        declared = self._declared.get(name)
        if declared is None:
            raise ToolError(unknown("tool", name, list(self._declared)) + f"; the tools: {', '.join(self._declared)}")
        extra = [a for a in arguments if a not in declared]
        if extra:
            said = "; ".join(unknown("argument", a, declared) for a in extra)
            raise ToolError(f"Error executing tool {name}: {said}. {name} takes: {', '.join(declared)}")
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError) and not isinstance(e, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: {explain(e.__cause__)}") from e.__cause__
            raise
        if isinstance(result, CallToolResult) and isinstance(result.structured_content, dict):
            data = result.structured_content
            step = data.get("next_step")
            if isinstance(step, dict) and isinstance(step.get("arguments"), dict):
                step["arguments"] = ready_arguments(step["arguments"])
            images = [c for c in result.content if isinstance(c, ImageContent)]  # a picture asked for (picture=true)
            result.content = [TextContent(type="text", text=compact_json(data)), *images]
        return result
