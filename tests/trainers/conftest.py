"""The trainer config checks: tests marked needs_verl skip without verl (fail under CI), and a loud line at the end
of the run says so."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402
import verl_check  # noqa: E402

from pick_a_method.trainers.verl import VERL_VERSION  # noqa: E402

_MISSING = verl_check.verl_missing()


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_verl: needs verl (pip install --no-deps 'verl==0.9.1') and the test extra")


@pytest.fixture(autouse=True)
def _verl_installed(request):
    """A test marked needs_verl skips without verl (fails under CI or PICK_A_METHOD_REQUIRE_VERL=1)."""
    missing = _MISSING
    if missing and "needs_verl" in request.keywords:
        reason = (f"verl's config check needs {missing}: pip install --no-deps 'verl=={VERL_VERSION}' (and the test "
                  "extra)")
        if verl_check.VERL_REQUIRED:
            pytest.fail(reason + " (required under CI or PICK_A_METHOD_REQUIRE_VERL=1)")
        pytest.skip(reason)


def pytest_terminal_summary(terminalreporter):
    missing = verl_check.verl_missing()
    if missing:
        terminalreporter.write_sep("!", "VERL CONFIG CHECKS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(
            f"{missing} is not installed, so verl_config's output was not composed onto verl's config: "
            "pip install --no-deps 'verl==0.9.1' (plus the [test] extra); CI=true or PICK_A_METHOD_REQUIRE_VERL=1 "
            "turns the skip into a failure.", red=True)
