"""Shared fixtures: the seed skill's own graded rows (check.py of whileai's pick-a-method v2.0.0, rebuilt from
the anchor SDK's description of it), the Hypothesis profiles, and the loud notice when the anchor SDK is absent."""

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The servers under test (in-process, and the ones the tests spawn: they inherit this) may read and write the
# repository and the temporary folders the tests write into, as a user's server would their project folder. The
# tests of the roots themselves set their own (tests/server/test_roots.py).
os.environ.setdefault("PICK_A_METHOD_ROOTS", os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                              tempfile.gettempdir()]))

from rowkit import MODEL, TEACHER, rows_from_passes  # noqa: E402

# Property-based tests: deterministic by default (the same examples on every run and every machine, so CI
# cannot pass or fail by luck); HYPOTHESIS_PROFILE=long searches more, at random, and keeps what it finds in
# .hypothesis/ for the next run. A failure either profile finds is added as an explicit @example / plain test.
settings.register_profile("ci", derandomize=True, database=None, max_examples=120, deadline=None, print_blob=True)
settings.register_profile("long", derandomize=False, max_examples=2000, deadline=None, print_blob=True)
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(HYPOTHESIS_PROFILE)

# The anchor SDK (whileai 0.131, in the [test] extra) for the cross-checks in tests/methods. Absent, those tests
# skip with the install line and the run ends with a banner; PICK_A_METHOD_REQUIRE_ANCHOR=1 (set by .ci/run)
# makes its absence a failure.
ANCHOR = "whileai"
ANCHOR_INSTALL = "pip install -c constraints.txt 'whileai==0.131' (it is in the [test] extra)"
_anchor_missing: list[str] = []


@pytest.fixture
def anchor_sdk():
    """The anchor SDK module, or a loud skip (a failure under PICK_A_METHOD_REQUIRE_ANCHOR=1)."""
    if importlib.util.find_spec(ANCHOR) is None:
        reason = f"the anchor SDK {ANCHOR} is not installed, so the cross-check against it did not run: {ANCHOR_INSTALL}"
        if os.environ.get("PICK_A_METHOD_REQUIRE_ANCHOR") == "1":
            pytest.fail(reason + " (PICK_A_METHOD_REQUIRE_ANCHOR=1)")
        _anchor_missing.append(reason)
        pytest.skip(reason)
    return importlib.import_module(ANCHOR)


REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _the_repository_stays_as_it_was():
    """A route's next step names a config file to write (grpo-prime-rl.toml, ...) relative to the working folder,
    the repository's when tests run: a test that makes such a call must write into its tmp_path instead. Fails the
    test that left a new file in the repository's root."""
    before = set(os.listdir(REPO))
    yield
    new = sorted(set(os.listdir(REPO)) - before - {".pytest_cache", ".hypothesis"})
    for name in new:
        (REPO / name).unlink(missing_ok=True) if (REPO / name).is_file() else None
    assert not new, f"the test wrote {new} into the repository's root: give the call an out in tmp_path"


def pytest_report_header(config):
    return f"hypothesis profile: {HYPOTHESIS_PROFILE} (HYPOTHESIS_PROFILE=long for the longer search)"


def pytest_terminal_summary(terminalreporter):
    if _anchor_missing:
        terminalreporter.write_sep("!", f"ANCHOR CROSS-CHECKS SKIPPED: {ANCHOR} is not installed", red=True, bold=True)
        terminalreporter.write_line(f"{len(_anchor_missing)} tests did not run; {ANCHOR_INSTALL}", red=True)


@pytest.fixture
def mixed_rows():  # passes 0..4 of 4, x8 = 40 tasks: pass@1 0.5, split share 0.6
    return rows_from_passes([0, 1, 2, 3, 4] * 8)


@pytest.fixture
def floor_rows():
    return rows_from_passes([0] * 20)


@pytest.fixture
def saturated_rows():
    return rows_from_passes([4] * 20)


@pytest.fixture
def one_per_prompt():  # 50 tasks, one rollout each, 30 pass
    return [{"task_id": f"p{t}", "reward": float(t < 30), "truncated": False, "model": MODEL} for t in range(50)]


@pytest.fixture
def teacher_made_rows():
    return rows_from_passes([1, 2, 3] * 10, model=TEACHER)


@pytest.fixture
def cut_off_rows():  # 20 truncated passes on top of a floor that reuses ids t0..t4 (as check.py does)
    cut = [{"task_id": f"t{t % 5}", "reward": 1.0, "truncated": True, "model": MODEL} for t in range(20)]
    return cut + rows_from_passes([0] * 10)


@pytest.fixture
def student_rows():  # 48 tasks, 3,3,3,2,3,3,4,3 of 4: pass@1 0.75
    return rows_from_passes([3, 3, 3, 2, 3, 3, 4, 3] * 6, prefix="h")


@pytest.fixture
def weak_teacher_rows():  # pass@1 0.594
    return rows_from_passes([2, 3, 2, 2, 3, 2, 3, 2] * 6, model=TEACHER, prefix="h")


@pytest.fixture
def strong_teacher_rows():  # 48 x 4/4
    return rows_from_passes([4] * 48, model=TEACHER, prefix="h")
