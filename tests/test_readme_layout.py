"""The README's Layout and "where a new thing goes" name files and folders that exist, and the import direction
they state holds: methods/ and routing/ never import each other."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _section(readme: str) -> str:
    start = readme.index("## Layout\n")
    return readme[start: readme.index("\n## ", start + 1)]


def test_every_path_the_layout_names_exists():
    text = _section((REPO / "README.md").read_text())
    named = set(re.findall(r"`((?:common|routing|methods|trainers|server|tests)/[\w/.<>]*)`", text))
    folder = None
    for line in text.split("```")[1].splitlines():  # the tree: a folder's line, then its indented lines
        head, sub = re.match(r"^(\w+)/ ", line), re.match(r"^  (\w+)/ ", line)
        folder = head[1] if head else f"{folder.split('/')[0]}/{sub[1]}" if sub else folder
        named |= {f"{folder}/{name}" for name in re.findall(r"\b(\w+\.py)\b", line)}
    missing = [p for p in sorted(named) if "<" not in p and not (REPO / p).exists()]
    assert named and not missing, missing


def test_routing_and_methods_never_import_each_other():
    pattern = {"methods": re.compile(r"^\s*(from|import) (pick_a_method\.routing|\.\.routing)", re.M),
               "routing": re.compile(r"^\s*(from|import) (pick_a_method\.methods|\.\.methods)", re.M)}
    found = [f"{path.relative_to(REPO)}" for side, rx in pattern.items() for path in (REPO / side).rglob("*.py")
             if rx.search(path.read_text())]
    assert found == [], found
