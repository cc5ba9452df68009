"""The caps on rows and bytes and the per-call time budget, through the MCP tools: each ends in a tool error
that names the cap and how to raise it, on every rows argument, set by option, flag or environment; and a
call that runs out its budget stops its work instead of reading on unseen.

tests/server/test_server.py has the basic row cap on `band` and one budget error; these add the rest.
"""

from __future__ import annotations

import gzip
import json
import threading
import time

import anyio
import pytest
from mcp import Client

from pick_a_method import routing
from rowkit import MODEL, rows_from_passes
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions
from pick_a_method.server.cli import _options, _parser

MIXED = rows_from_passes([0, 1, 2, 3, 4] * 4)  # 80 rows


def call(options: ServerOptions, tool: str, args: dict, limit: float = 60):
    async def go():
        async with Client(create_server(options)) as c:
            with anyio.fail_after(limit):
                r = await c.call_tool(tool, args)
        return r.is_error, (r.content[0].text if r.content else ""), r.structured_content

    return anyio.run(go)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


ROW_ARGUMENTS = [  # (tool, the rows argument under test, the other arguments the call needs)
    ("truncated_passes", "rows", {}), ("band", "rows", {}), ("pass_at", "rows", {}), ("route", "rows", {}),
    ("route", "teacher_rows", {"rows": MIXED[:8]}),
    ("teacher_clears", "teacher_rows", {"student_rows": MIXED[:8]}),
    ("teacher_clears", "student_rows", {"teacher_rows": MIXED[:8]}),
    ("holdout_size", "before_rows", {}), ("holdout_size", "after_rows", {"before_rows": MIXED[:8]}),
]


@pytest.mark.parametrize("tool, arg, extra", ROW_ARGUMENTS)
@pytest.mark.parametrize("inline", [True, False], ids=["inline", "file"])
def test_the_row_cap_holds_on_every_rows_argument(tmp_path, tool, arg, extra, inline):
    options = ServerOptions(max_rows=50)
    value = MIXED if inline else write_jsonl(tmp_path / "rows.jsonl", MIXED)
    is_error, text, _ = call(options, tool, {**extra, (arg if inline else f"{arg}_path"): value})
    assert is_error, text
    assert ("cap of 50" in text or "more than 50 rows" in text) and "--max-rows" in text, text
    assert "PICK_A_METHOD_MAX_ROWS" in text, text
    is_error, text, _ = call(ServerOptions(max_rows=80), tool, {**extra, (arg if inline else f"{arg}_path"): value})
    assert "--max-rows" not in text, text  # at the cap is allowed


@pytest.mark.parametrize("make, words", [
    (lambda p: write_jsonl(p / "big.jsonl", MIXED * 40), ["over the cap of 10,000 bytes"]),
    (lambda p: (p / "big.jsonl.gz").write_bytes(gzip.compress(json.dumps(MIXED * 40).encode())) and str(p / "big.jsonl.gz"),
     ["more than 10,000 bytes once decompressed"]),
    (lambda p: (p / "big.csv").write_text("task_id,reward\n" + "t,1\n" * 5000) and str(p / "big.csv"),
     ["over the cap of 10,000 bytes"]),
])
def test_the_byte_cap_names_itself_and_how_to_raise_it(tmp_path, make, words):
    path = make(tmp_path)
    for tool, args in [("band", {"rows_path": path}), ("route", {"rows_path": path, "model": MODEL}),
                       ("holdout_size", {"before_rows_path": path})]:
        is_error, text, _ = call(ServerOptions(max_bytes=10_000), tool, args)
        assert is_error and all(w in text for w in words), text
        assert "--max-bytes" in text and "PICK_A_METHOD_MAX_BYTES" in text, text


def test_caps_come_from_the_environment_and_the_flags(monkeypatch, tmp_path):
    monkeypatch.setenv("PICK_A_METHOD_MAX_ROWS", "10")
    monkeypatch.setenv("PICK_A_METHOD_MAX_BYTES", "1000")
    monkeypatch.setenv("PICK_A_METHOD_CALL_SECONDS", "7.5")
    options = ServerOptions()
    assert (options.max_rows, options.max_bytes, options.call_seconds) == (10, 1000, 7.5)
    assert "cap of 10" in call(options, "band", {"rows": MIXED})[1]
    assert "cap of 1,000 bytes" in call(options, "band", {"rows_path": write_jsonl(tmp_path / "r.jsonl", MIXED)})[1]
    flags = _options(_parser().parse_args(["--max-rows", "5", "--max-bytes", "99", "--call-seconds", "0.5"]))
    assert (flags.max_rows, flags.max_bytes, flags.call_seconds) == (5, 99, 0.5)  # a flag beats the environment


def test_a_call_past_its_budget_ends_in_an_error_and_its_read_stops(tmp_path, monkeypatch, tally):
    # 300k rows, ~20 MB: the columnar reader takes ~0.3 s or more here, so a 0.05 s budget ends it mid-read (at
    # 0.2 s the read could finish its last block before the cancellation reached it: a race, not a bug)
    path = write_jsonl(tmp_path / "big.jsonl", rows_from_passes([1, 2, 3] * 25_000))
    finished = threading.Event()
    outcome: list[str] = []
    real = routing.read_rows

    def watched(*args, **kwargs):
        try:
            real(*args, **kwargs)
            outcome.append("read to the end")
            raise AssertionError("unreachable")  # pragma: no cover
        except BaseException as e:  # the cancellation anyio raises in the worker thread
            outcome.append(type(e).__name__)
            raise
        finally:
            finished.set()

    monkeypatch.setattr(routing, "read_rows", watched)

    async def go():
        async with Client(create_server(ServerOptions(call_seconds=0.05))) as c:
            started = time.monotonic()
            r = await c.call_tool("route", {"rows_path": path, "model": MODEL})
            answered = time.monotonic() - started
            # wait with the server still running: a closed event loop would stop the read for its own reasons
            assert await anyio.to_thread.run_sync(finished.wait, 20), "still reading 20 s after the budget error"
            return r, answered, time.monotonic() - started

    r, answered, stopped = anyio.run(go)
    text = r.content[0].text
    assert r.is_error and "0.05 s budget" in text and "--call-seconds" in text, text
    assert outcome and outcome[0] != "read to the end", f"the read went on to the end, {stopped:.2f} s in"
    tally.figure("a 0.05 s budget on a 300k-row read", f"error after {answered:.2f} s, read stopped after {stopped:.2f} s")


def test_a_budget_on_inline_rows_is_an_error_not_a_hang_and_the_server_answers_on():
    rows = [{"task_id": f"t{i % 5000}", "reward": i % 2, "truncated": False, "model": MODEL} for i in range(150_000)]

    async def go():
        async with Client(create_server(ServerOptions(call_seconds=0.05))) as c:
            with anyio.fail_after(120):
                first = await c.call_tool("route", {"rows": rows, "model": MODEL})
            assert first.is_error and "0.05 s budget" in first.content[0].text, first.content[0].text
            # The server answers on. The abandoned call's worker thread may still hold the GIL for a while on a
            # loaded machine (2 busy cores: over 0.05 s), so a budget error on the small call is retried, not failed.
            for _ in range(50):
                small = await c.call_tool("holdout_size", {})
                if not (small.is_error and "0.05 s budget" in small.content[0].text):
                    break
                await anyio.sleep(0.2)
            assert not small.is_error, small.content[0].text

    anyio.run(go)
