"""The trainer config checks: a loud line at the end of the run when verl's check could not run."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import verl_check  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_verl: needs verl (pip install --no-deps 'verl==0.9.1') and the test extra")


def pytest_terminal_summary(terminalreporter):
    missing = verl_check.verl_missing()
    if missing:
        terminalreporter.write_sep("!", "VERL CONFIG CHECKS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(
            f"{missing} is not installed, so verl_config's output was not composed onto verl's config: "
            "pip install --no-deps 'verl==0.9.1' (plus the [test] extra); CI=true or PICK_A_METHOD_REQUIRE_VERL=1 "
            "turns the skip into a failure.", red=True)
