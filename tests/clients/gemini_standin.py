"""A stand-in for the Gemini API on 127.0.0.1, enough for Gemini CLI to run a turn: it records every request, answers
the first one that offers tools with a function call (the one the test asks for), and every later one with text.

Requests that ask for JSON (Gemini CLI's own router and next-speaker checks send a responseJsonSchema) get an object
with each required property filled, so the CLI's own bookkeeping parses. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_FILL = {"string": "stand-in", "number": 1, "integer": 1, "boolean": False, "array": [], "object": {}}


def _filled(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    out = {}
    for name in schema.get("required", list(props)):
        kind = props.get(name, {}).get("type", "string")
        kind = kind[0] if isinstance(kind, list) else kind
        enum = props.get(name, {}).get("enum")
        out[name] = enum[0] if enum else _FILL.get(str(kind).lower(), "stand-in")
    return out


class StandIn:
    """`with StandIn(call) as api:` serves until the block ends; `api.url` is the base URL, `api.requests` the
    request bodies as received (with `path`)."""

    def __init__(self, call: dict[str, Any]) -> None:
        self.call, self.requests = call, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                outer.requests.append({"path": self.path, **body})
                self._answer(outer.answer(body))

            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append({"path": self.path})
                self._answer({})

            def _answer(self, reply: dict[str, Any]) -> None:
                if "alt=sse" in self.path:
                    data, kind = f"data: {json.dumps(reply)}\r\n\r\n".encode(), "text/event-stream"
                else:
                    data, kind = json.dumps(reply).encode(), "application/json"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        parts = [p for c in body.get("contents", []) for p in c.get("parts", [])]
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        if schema:
            part = {"text": json.dumps(_filled(schema))}
        elif body.get("tools") and not any("functionResponse" in p for p in parts):
            part = {"functionCall": self.call}
        else:
            part = {"text": "done"}
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
