"""A server whose mcp or pydantic is out of range stops at start-up with one line naming the version and the fix."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from pick_a_method.server import versions

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_checked_ranges_are_the_declared_ones():
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    for name, (low, high) in versions.NEEDS.items():
        spec = next(d for d in deps if re.match(rf"{name}\b", d))
        assert spec == f"{name}>={'.'.join(map(str, low))},<{'.'.join(map(str, high))}", spec


FAKE = ("import importlib.metadata as m, sys\n"
        "real = m.version\n"
        "m.version = lambda name: {fake!r} if name == {name!r} else real(name)\n"
        "from pick_a_method.server.cli import main\n"
        "sys.exit(main([]))\n")


def start_with(name, version):
    return subprocess.run([sys.executable, "-c", FAKE.format(fake=version, name=name)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_an_old_mcp_stops_the_server_with_the_version_and_the_pip_line():
    out = start_with("mcp", "1.30.0")
    assert out.returncode == 3 and out.stdout == ""
    assert "mcp 1.30.0 is installed" in out.stderr and "pip install 'mcp>=2.3,<3'" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_a_pydantic_past_its_range_stops_it_too():
    out = start_with("pydantic", "3.0.0")
    assert out.returncode == 3 and "pydantic 3.0.0 is installed" in out.stderr


def test_versions_in_range_pass():
    assert versions.problem() is None
    assert versions._parts("2.3.0rc1") == (2, 3, 0) and versions._parts("2.10") == (2, 10)
