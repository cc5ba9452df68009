"""Shared fixtures: the seed skill's own graded rows (check.py of whileai's pick-a-method v2.0.0, rebuilt from
their description in shared/reference/anchor-whileai.md sections 1.6 and 5)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rowkit import MODEL, TEACHER, rows_from_passes  # noqa: E402


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
