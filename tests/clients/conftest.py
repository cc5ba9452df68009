"""Real MCP clients written by others (the MCP Inspector CLI, the conformance suite, Gemini CLI) against the installed
server.

They are node programs, provisioned by `.ci/node.sh` under `.npm-local/` (never globally). When node 22 or the
packages are missing the tests that need them SKIP with the cause, and the run ends with a banner that says
so; set PICK_A_METHOD_REQUIRE_NODE=1 to make that a failure instead.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_LOCAL = Path(os.environ.get("PICK_A_METHOD_NPM_PREFIX") or REPO / ".npm-local")
NODE = NPM_LOCAL / "node22" / "node_modules" / "node" / "bin" / "node"
TOOLS = NPM_LOCAL / "tools" / "node_modules"
MIN_NODE = (22, 19, 0)  # @modelcontextprotocol/inspector 2.x: engines.node >= 22.19.0
PROVISION = "run .ci/node.sh (it installs node 22 and the npm packages under .npm-local/)"

_skipped: list[str] = []


@dataclass(frozen=True)
class Peers:
    node: Path
    node_version: str
    inspector_js: Path
    inspector_version: str
    conformance_js: Path
    conformance_version: str
    env: dict[str, str]

    def inspector(self, *args: str) -> list[str]:
        return [str(self.node), str(self.inspector_js), *args]

    def conformance(self, *args: str) -> list[str]:
        return [str(self.node), str(self.conformance_js), *args]


def _package(name: str) -> tuple[Path, str]:
    """The bin script and version of an installed npm package under .npm-local/tools, or a reason it is missing."""
    meta = TOOLS / name / "package.json"
    if not meta.is_file():
        raise LookupError(f"{name} is not installed under {TOOLS}")
    data = json.loads(meta.read_text())
    bins = data.get("bin") or {}
    script = next(iter(bins.values())) if isinstance(bins, dict) else bins
    return (meta.parent / script).resolve(), data["version"]


@functools.cache
def _find_peers() -> Peers | str:
    """Peers, or the reason they cannot be had (a string)."""
    if not NODE.is_file():
        return f"node 22 not found at {NODE}"
    try:
        out = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, timeout=30)
        version = out.stdout.strip()
        parts = tuple(int(p) for p in version.lstrip("v").split("."))
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        return f"{NODE} does not run: {e}"
    if parts < MIN_NODE:
        return f"{NODE} is {version}; the MCP Inspector 2.x needs node >= {'.'.join(map(str, MIN_NODE))}"
    try:
        inspector, inspector_version = _package("@modelcontextprotocol/inspector")
        conformance, conformance_version = _package("@modelcontextprotocol/conformance")
    except (LookupError, OSError, ValueError, KeyError) as e:
        return str(e)
    if int(inspector_version.split(".")[0]) < 2:
        return (f"@modelcontextprotocol/inspector is {inspector_version} (what npm picks on node 20); "
                f"these tests drive the 2.x CLI")
    env = {**os.environ,
           "PATH": os.pathsep.join([str(NODE.parent), str(TOOLS / ".bin"), os.environ.get("PATH", "")]),
           "MCP_INSPECTOR_SECRET_STORE": "memory",  # no keychain; the Inspector stores nothing on disk
           "NO_COLOR": "1", "FORCE_COLOR": "0", "npm_config_update_notifier": "false"}
    return Peers(NODE, version, inspector, inspector_version, conformance, conformance_version, env)


def _missing(reason: str) -> None:
    """A loud skip naming what is missing; a failure where CI asked for the peers (PICK_A_METHOD_REQUIRE_NODE=1)."""
    reason = f"MCP client peers unavailable: {reason}; {PROVISION}"
    if os.environ.get("PICK_A_METHOD_REQUIRE_NODE") == "1":
        pytest.fail(reason + " (PICK_A_METHOD_REQUIRE_NODE=1)")
    _skipped.append(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def peers(tmp_path_factory) -> Peers:
    """Node 22 and the npm packages, or a loud skip naming what is missing."""
    found = _find_peers()
    if isinstance(found, str):
        _missing(found)
    home = tmp_path_factory.mktemp("node-home")  # the Inspector writes ~/.mcp-inspector
    return Peers(**{**found.__dict__, "env": {**found.env, "HOME": str(home)}})


@pytest.fixture(scope="session")
def gemini(peers) -> tuple[Path, str]:
    """Gemini CLI's script and version (.ci/node.sh installs it beside the Inspector)."""
    try:
        return _package("@google/gemini-cli")
    except (LookupError, OSError, ValueError, KeyError) as e:
        _missing(str(e))


def server_command() -> list[str]:
    """The installed console script (the one a user registers with a client), next to this interpreter first."""
    beside = Path(sys.executable).with_name("pick-a-method")
    exe = str(beside) if beside.is_file() else shutil.which("pick-a-method")
    if not exe:
        pytest.fail("the console script pick-a-method is not installed: pip install -e '.[test]'")
    return [exe]


def pytest_terminal_summary(terminalreporter):
    if _skipped:
        terminalreporter.write_sep("!", "MCP CLIENT TESTS SKIPPED (Inspector, conformance, Gemini CLI)", red=True,
                                   bold=True)
        for reason in dict.fromkeys(_skipped):
            terminalreporter.write_line(reason, red=True)
