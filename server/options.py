"""What a server operator can set: read caps, a time budget per call, the folders it may read and write."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Caps a stray call cannot blow through; each is raised by its option or environment variable.
DEFAULT_MAX_ROWS = 20_000_000
DEFAULT_MAX_BYTES = 8 << 30  # 8 GiB read from one file
DEFAULT_CALL_SECONDS = 300.0


def _env(name: str, default: Any, kind: type, words: str) -> Any:
    """The environment variable `name` read as `kind` (int or float), else `default`; a bad value names itself."""
    value = os.environ.get(name)
    try:
        return kind(value) if value else default
    except ValueError:
        raise ValueError(f"{name}={value!r} is not {words}") from None


def _roots() -> tuple[Path, ...]:
    """PICK_A_METHOD_ROOTS (os.pathsep between folders), else the default (common.paths, loaded only here: the
    command line's --help loads no routing module)."""
    from pick_a_method.common.paths import default_roots, expand_user_path

    value = os.environ.get("PICK_A_METHOD_ROOTS", "")
    given = tuple(Path(os.path.realpath(expand_user_path(v, "PICK_A_METHOD_ROOTS")))
                  for v in value.split(os.pathsep) if v.strip())
    return given or default_roots()


@dataclass(frozen=True)
class ServerOptions:
    max_rows: int = field(default_factory=lambda: _env("PICK_A_METHOD_MAX_ROWS", DEFAULT_MAX_ROWS, int,
                                                      "a whole number"))
    max_bytes: int = field(default_factory=lambda: _env("PICK_A_METHOD_MAX_BYTES", DEFAULT_MAX_BYTES, int,
                                                       "a whole number"))
    call_seconds: float = field(default_factory=lambda: _env("PICK_A_METHOD_CALL_SECONDS", DEFAULT_CALL_SECONDS, float,
                                                             "a number of seconds"))
    # The folders every path is confined to, where the client declares no roots of its own (server/roots.py):
    # --root DIR or PICK_A_METHOD_ROOTS, else the folder the server started in unless that is /, the home folder
    # itself or a system folder (then none: every path is refused, with how to allow one).
    roots: tuple[Path, ...] = field(default_factory=_roots)
    # The config writers write only below these (the roots, unless --allow-write names others).
    write_roots: tuple[Path, ...] = field(default_factory=_roots)
