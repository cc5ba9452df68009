"""The suite reads nothing outside the repository: a fresh clone with nothing beside it runs every test.

Tests once read the prime-rl examples and reference notes from a `../shared` folder next to the clone, and
skipped (silently, to anyone not reading skip reasons) where it was absent. This scan refuses the ways a test
reaches out of the repository; fixtures belong under tests/fixtures/ (or examples/).
"""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REACHING_OUT = re.compile(
    r"""(?:REPO|ROOT)\.parent\b      # the folder the clone sits in
      | \.parent\.parent\.parent\.parent\b | \bparents\[[3-9]\]   # above the root, from tests/<area>/x.py
      | \.\./shared | ["']shared["'] | PICK_A_METHOD_SHARED
      | ["']/work/""",
    re.VERBOSE,
)


def test_no_test_reads_outside_the_repository():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if REACHING_OUT.search(code):
                offenders.append(f"{path.relative_to(TESTS.parent)}:{n}: {line.strip()}")
    assert not offenders, "tests reaching outside the repository (move what they read to tests/fixtures/):\n" + \
        "\n".join(offenders)


def test_the_scan_catches_what_it_is_for():  # so the test above cannot pass by matching nothing
    for line in ['SHARED = REPO.parent / "shared"', "Path(__file__).parent.parent.parent.parent / 'x'",
                 "Path(__file__).resolve().parents[3]", 'open("../shared/reference/prime-rl.md")',
                 'os.environ["PICK_A_METHOD_SHARED"]', 'Path("/work/shared")']:
        assert REACHING_OUT.search(line), line
    for line in ["EXAMPLES = Path(__file__).resolve().parent.parent / 'examples'", "n_shared == 48",
                 "REPO = Path(__file__).resolve().parents[2]"]:
        assert not REACHING_OUT.search(line), line
