"""Every folder one call reads, checked against the allowed roots at once: `after` reads up to four arms, guards and
a manifest, and a refusal that named only the first folder outside left the next arm to fail the same way."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pick_a_method.common.errors import InputError
from pick_a_method.common.paths import HOW_TO_ALLOW


def _paths(a: Any) -> list[tuple[str, str]]:
    """(argument, path) for every path the call reads."""
    out = []
    for what in getattr(a, "row_sets", {}):
        value = getattr(a, f"{what}_path", None)
        for p in (value if isinstance(value, list) else [value]):
            if isinstance(p, str) and p.strip():
                out.append((f"{what}_path", p))
    frozen = getattr(a, "frozen_path", None)
    if isinstance(frozen, str) and frozen.strip():
        out.append(("frozen_path", frozen))
    guards = getattr(a, "guards", None) or []
    items = list(guards.items()) if isinstance(guards, dict) else [
        (p.partition("=")[0], p.partition("=")[2]) if isinstance(p, str) else (getattr(p, "key", ""),
                                                                            getattr(p, "value", ""))
        for p in guards]
    for name, files in items:
        files = files.split(",") if isinstance(files, str) else files if isinstance(files, list) else []
        out += [(f"guards.{name}", f.strip()) for f in files if isinstance(f, str) and f.strip()]
    return out


def _folder(path: str) -> Path | None:
    """The folder a path (or a glob's fixed head) lies in, resolved; None for a path the system cannot look at (too
    long, a NUL byte): the reader's own refusal names that one."""
    head = path.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0] if glob.has_magic(path) else path
    try:
        real = Path(os.path.realpath(os.path.expanduser(head or ".")))
        return real if real.is_dir() else real.parent
    except (OSError, ValueError):
        return None


def check_call_roots(a: Any, roots: Sequence[Path] | None) -> None:
    """Refuse a call that reads two or more folders outside `roots`, naming every one (one outside: the reader's
    own refusal names it)."""
    if roots is None:
        return
    outside: dict[Path, list[str]] = {}
    for argument, path in _paths(a):
        folder = _folder(path)
        if folder is not None and not any(folder == r or folder.is_relative_to(r) for r in roots):
            outside.setdefault(folder, []).append(argument)
    if len(outside) < 2:
        return
    named = "; ".join(f"{', '.join(args)} in {folder}" for folder, args in outside.items())
    allow = " ".join(f"--root {folder}" for folder in outside)
    raise InputError(f"this call reads {len(outside)} folders outside the ones this server may read "
                     f"({', '.join(map(str, roots)) or 'none'}): {named}. Allow all of them at once: {HOW_TO_ALLOW} "
                     f"(here: {allow})", field=_paths(a)[0][0])
