"""What a server operator can set: read caps, a time budget per call, where `prime_rl_config` may write."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# Caps a stray call cannot blow through; each is raised by its option or environment variable.
DEFAULT_MAX_ROWS = 20_000_000
DEFAULT_MAX_BYTES = 8 << 30  # 8 GiB read from one file
DEFAULT_CALL_SECONDS = 300.0


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a whole number") from None


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    try:
        return float(value) if value else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number of seconds") from None


@dataclass(frozen=True)
class ServerOptions:
    max_rows: int = field(default_factory=lambda: _env_int("PICK_A_METHOD_MAX_ROWS", DEFAULT_MAX_ROWS))
    max_bytes: int = field(default_factory=lambda: _env_int("PICK_A_METHOD_MAX_BYTES", DEFAULT_MAX_BYTES))
    call_seconds: float = field(
        default_factory=lambda: _env_float("PICK_A_METHOD_CALL_SECONDS", DEFAULT_CALL_SECONDS))
    # prime_rl_config writes only below these folders (the folder the server started in, unless told otherwise).
    write_roots: tuple[Path, ...] = field(default_factory=lambda: (Path.cwd().resolve(),))
