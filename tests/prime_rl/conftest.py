"""Fixtures for the prime-rl config writer and tokenizer check tests."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for _p in (REPO, HERE):  # the package from the checkout (installed or not); this folder's helper module
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

# Everything these tests read lives in this repository: prime-rl configs written from its
# schema facts (fixtures/known_good), and the key names its config classes define (fixtures/documented_keys.toml).
FIXTURES = HERE / "fixtures"
KNOWN_GOOD = FIXTURES / "known_good"


@pytest.fixture(scope="session")
def examples() -> dict[str, dict]:
    """Known-good prime-rl `rl` configs at 559b44772, parsed: {file name: config}."""
    found = {p.name: tomllib.loads(p.read_text()) for p in sorted(KNOWN_GOOD.glob("*.toml"))}
    assert len(found) >= 5, f"expected the known-good configs in {KNOWN_GOOD}, found {sorted(found)}"
    return found


@pytest.fixture(scope="session")
def documented_keys() -> set[str]:
    """Every key name prime-rl's config classes define that a writer may emit."""
    table = tomllib.loads((FIXTURES / "documented_keys.toml").read_text())["sources"]
    return {name for names in table.values() for name in names}
