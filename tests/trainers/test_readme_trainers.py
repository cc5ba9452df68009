"""The README's TRL and verl worked examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _example(section: str) -> str:
    text = README.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert len(blocks) == 1, f"README section {section} should hold one worked example"
    return blocks[0]


@pytest.mark.parametrize("section", ["TRL", "verl"])
def test_readme_example_runs(section):
    exec(compile(_example(section), f"README.md ({section})", "exec"), {})
