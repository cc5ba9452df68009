"""Fixtures for the prime-rl config writer and tokenizer check tests."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for _p in (REPO, HERE):  # the package from the checkout (installed or not); this folder's helper module
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

# The shared reference folder: prime-rl.md and the five known-good example configs copied unchanged
# from prime-rl 559b44772. Outside the repository; tests that need it skip when it is absent.
SHARED = Path(os.environ.get("PICK_A_METHOD_SHARED", REPO.parent / "shared"))
EXAMPLES_DIR = SHARED / "primerl" / "examples"
PRIME_RL_MD = SHARED / "reference" / "prime-rl.md"


@pytest.fixture(scope="session")
def examples() -> dict[str, dict]:
    """The known-good prime-rl example configs, parsed: {file name: config}."""
    if not EXAMPLES_DIR.is_dir():
        pytest.skip(f"known-good prime-rl examples not found at {EXAMPLES_DIR} (set PICK_A_METHOD_SHARED)")
    found = {p.name: tomllib.loads(p.read_text()) for p in sorted(EXAMPLES_DIR.glob("*.toml"))}
    assert len(found) == 5, f"expected the five known-good examples, found {sorted(found)}"
    return found


@pytest.fixture(scope="session")
def prime_rl_md() -> str:
    if not PRIME_RL_MD.is_file():
        pytest.skip(f"reference/prime-rl.md not found at {PRIME_RL_MD} (set PICK_A_METHOD_SHARED)")
    return PRIME_RL_MD.read_text()
