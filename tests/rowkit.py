"""Row builders shared by the tests (conftest.py puts this folder on sys.path)."""

from pathlib import Path

MODEL, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def rows_from_passes(passes, k=4, *, model=MODEL, prefix="t", truncated=False):
    """One task per entry of `passes`: that many passing rollouts out of k."""
    return [{"task_id": f"{prefix}{t}", "reward": 1.0 if j < c else 0.0, "truncated": truncated, "model": model}
            for t, c in enumerate(passes) for j in range(k)]
