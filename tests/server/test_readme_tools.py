"""README's table of tools: every example call is run as written, and every concrete number or word its abridged
answer shows is what the tool answers now (the teacher_clears interval had gone stale unseen)."""

import json
import re

import pytest
from mcp import Client

from rowkit import EXAMPLES
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

REPO = EXAMPLES.parent
ROW = re.compile(r"^\| `(\w+)` \| [^|]+ \| `(\{.*?\})` \| `(\{.*\})` \|$")
# "key": a scalar, or a flat list of numbers: the parts of an abridged answer that are facts, not elisions.
SHOWN = re.compile(r'"(\w+)": (-?\d+(?:\.\d+)?|true|false|null|"[^"]*"|\[-?\d[\d.]*(?:, -?\d[\d.]*)*\])(?=[,}])')


def table() -> list[tuple[str, dict, list[tuple[str, object]]]]:
    rows = []
    for line in (REPO / "README.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            shown = [(key, json.loads(value)) for key, value in SHOWN.findall(m.group(3))]
            rows.append((m.group(1), json.loads(m.group(2)), shown))
    return rows


def first(found, key):
    """The value of the first `key` in a depth-first walk of the answer (the table abridges the nesting)."""
    if isinstance(found, dict):
        if key in found:
            return found[key]
        found = list(found.values())
    if isinstance(found, list):
        for item in found:
            value = first(item, key)
            if value is not None:
                return value
    return None


def same(want, got) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(w, g) for w, g in zip(want, got))
    if isinstance(want, str) and "..." in want:  # an abridged string: its pieces, in order
        at = 0
        for piece in (p.strip() for p in want.split("...")):
            at = got.find(piece, at) if isinstance(got, str) else -1
            if at < 0:
                return False
        return True
    if isinstance(want, float):  # the table shows numbers as rounded for reading
        return isinstance(got, (int, float)) and round(got, len(repr(want).split(".")[1])) == want
    return got == want


def test_the_table_lists_every_documented_tool():
    assert {tool for tool, _, _ in table()} >= {"route", "truncated_passes", "band", "pass_at", "teacher_clears",
                                                "holdout_size", "after", "prime_rl_config", "preview_update"}


@pytest.mark.parametrize("tool,args,shown", table(), ids=[row[0] for row in table()])
async def test_each_example_call_answers_what_the_readme_shows(tool, args, shown, monkeypatch):
    if tool == "preview_update":
        pytest.importorskip("torch")
    monkeypatch.chdir(REPO)  # the calls name paths from the clone's top, as a user there would
    async with Client(create_server(ServerOptions())) as c:
        result = await c.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    stale = [(key, want, first(result.structured_content, key)) for key, want in shown
             if not same(want, first(result.structured_content, key))]
    assert not stale, f"README's {tool} row shows (key, shown, answered): {stale}"
