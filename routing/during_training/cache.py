"""Per-step summaries kept between calls, keyed by the step file's size and modification time: a run being written
is read again cheaply (only new or changed steps are read). In memory, for the process's life (the MCP server, or
`track --follow`); the most recently used CACHED_RUNS runs are kept."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .layout import StepFile
from .summary import StepSummary

CACHED_RUNS = 8

_lock = threading.Lock()
_runs: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()


def run_cache(key: tuple[Any, ...]) -> dict[str, Any]:
    """The cache of one run read one way ({"steps": {path: (size, mtime, summary)}, "windows": n judged})."""
    with _lock:
        entry = _runs.pop(key, None) or {"steps": {}, "windows": 0}
        _runs[key] = entry
        while len(_runs) > CACHED_RUNS:
            _runs.popitem(last=False)
        return entry


def cached(entry: dict[str, Any], f: StepFile) -> StepSummary | None:
    hit = entry["steps"].get(str(f.path))
    return hit[2] if hit is not None and hit[:2] == (f.size, f.mtime_ns) else None


def keep(entry: dict[str, Any], f: StepFile, summary: StepSummary) -> None:
    entry["steps"][str(f.path)] = (f.size, f.mtime_ns, summary)


def clear() -> None:
    with _lock:
        _runs.clear()
