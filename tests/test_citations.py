"""Citations a reader can follow: no comment, docstring or document in the repository points at a source outside it
(a notes file, a reference folder) or at an issue number of this project. A fact names its public source instead: a
paper (arXiv id), an upstream file at a tag or commit, a package at a version, a URL; a public project's issue is
written with its repository (`pytest-asyncio#1191`, `prime-rl #2540`).

tests/fixtures/ holds what real tools wrote, word for word, and is not scanned.
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt", ".cfg", ".yaml", ".yml"}
SKIPPED = {REPO / "tests" / "fixtures", Path(__file__).resolve()}

UNFOLLOWABLE = re.compile(
    r"""issue[ ]?\#?\d+ | issues?[ ]\d+ | issues[ ]\# | issue-\d+ | issue_\d+ | \(issue | the[ ]issue's  # this project's issues
      | (?<![/\w])reference/ | prime-rl\.md | anchor-whileai | seed-pick | torch-methods\.md | mcp\.md  # notes kept
      | after-the-gpu | DESIGN\.md                                                       # outside the repository
      | the[ ]seed's | seed[ ]section                            # "the seed": name it (whileai's pick-a-method skill)
    """,
    re.VERBOSE | re.IGNORECASE,
)
# (file, text on the line): a hit there is not a citation.
ALLOWED = {
    ("tests/test_self_contained.py", '/reference/prime-rl.md")\''),  # a path its scan must refuse, not a citation
}


def _files():
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        if (path.suffix in SUFFIXES and path.is_file() and not any(p.startswith(".") for p in rel.parts)
                and rel.parts[0] not in {"build", "node_modules"} and not rel.parts[0].endswith(".egg-info")
                and not any(s == path or s in path.parents for s in SKIPPED)):
            yield rel, path


def test_every_citation_names_a_public_source():
    hits = []
    for rel, path in _files():
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if UNFOLLOWABLE.search(line) and not any(rel.as_posix() == f and text in line for f, text in ALLOWED):
                hits.append(f"{rel.as_posix()}:{n}: {line.strip()}")
    assert not hits, ("cite the public source (a paper, an upstream file at a commit, a package version, a URL), "
                      "not a notes file or an issue number:\n" + "\n".join(hits))


def test_the_scan_reads_the_repository_and_catches_what_it_is_for():  # so the test above cannot pass by reading nothing
    scanned = {rel.as_posix() for rel, _ in _files()}
    assert {"README.md", "routing/defaults.py", "trainers/prime_rl/constants.py", "tests/conftest.py"} <= scanned
    assert not any(s.startswith(("tests/fixtures/", ".venv/")) for s in scanned)
    for line in ["(issue 15)", "# Issue 30, item 17:", "issues 16, 23", "the issue-10 target", "issues #396/#397",
                 "def test_issue_16s_arms():", "the issue's bar", "(reference/prime-rl.md section 7)",
                 "anchor-whileai.md section 3.5", "seed-pick-a-method.md section 6", "shared/reference/torch-methods.md",
                 "DESIGN.md, issue 10", "the seed's unpaired rule"]:
        assert UNFOLLOWABLE.search(line), line
    for line in ["pytest-dev/pytest-asyncio#1191", "prime-rl #2540", "anthropics/claude-code#45766",
                 "https://docs.while.ai/reference/methods", "one seed's gain can flip sign at another",
                 "whileai 0.131 simulations/defaults.py TRAIN_MIN_MIXED_TASKS", "arXiv:2411.00640 section 5"]:
        assert not UNFOLLOWABLE.search(line), line
