"""The robustness suite's tally: cases tried and load figures, printed in pytest's terminal summary."""

from __future__ import annotations

import collections

import pytest

TALLY_KEY = pytest.StashKey[dict]()


class Tally:
    """Counts (cases tried per tool) and figures (memory growth, timings) that the summary prints."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.figures: dict[str, str] = {}

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    def figure(self, what: str, value: str) -> None:
        self.figures[what] = value


def pytest_configure(config: pytest.Config) -> None:
    config.stash[TALLY_KEY] = Tally()


@pytest.fixture(scope="session")
def tally(pytestconfig: pytest.Config) -> Tally:
    return pytestconfig.stash[TALLY_KEY]


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    tally = config.stash.get(TALLY_KEY, None)
    if tally is None or not (tally.counts or tally.figures):
        return
    write = terminalreporter.write_line
    terminalreporter.section("robustness")
    fuzz = {k: v for k, v in tally.counts.items() if k.startswith("fuzz ")}
    if fuzz:
        write(f"robustness: {sum(fuzz.values())} generated cases tried through the MCP client ("
              + ", ".join(f"{k[5:]} {v}" for k, v in sorted(fuzz.items())) + ")")
    for k, v in sorted(tally.counts.items()):
        if not k.startswith("fuzz "):
            write(f"robustness: {k}: {v}")
    for k, v in tally.figures.items():
        write(f"robustness: {k}: {v}")
