"""The one place a path argument is decided: expanded (a leading ``~`` or ``~user`` becomes that home folder),
resolved (symlinks, ``..``), then checked against the folders the user allowed (`confine`).

Every argument that takes a path (rows_path and the other *_rows_path, the files a folder or glob names,
preview_update's path, tokenizer folders, the config writers' out, the server's --root and --allow-write) goes
through here, so they all read ``~`` the same way, a home that cannot be found is an InputError that names the
argument (never a traceback, nor a path kept with a literal ``~user`` in it), and a path outside the allowed
roots is refused before anything is read or written. The library (`read_rows` without `roots`) confines nothing:
its caller is the user.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from .errors import InputError


def expand_user_path(value: Any, argument: str) -> Path:
    """``value`` (a str, bytes or os.PathLike) as a Path, with a leading ``~`` / ``~user`` expanded.

    ``argument`` is the name the caller knows the value by (``rows_path``, ``--allow-write``); it starts
    every error message.
    """
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise InputError(f"{argument} must be a file path (a string); got {type(value).__name__}", field=argument)
    text = os.fsdecode(value)  # bytes as the file system encodes names (undecodable bytes kept as surrogates)
    if not text.startswith("~"):
        return Path(text)
    head = text.split("/", 1)[0].split(os.sep, 1)[0]  # "~" or "~user"
    user = head[1:]
    # os.path.expanduser gives the path back unchanged when it finds no home, and with HOME set to ""
    # turns "~/rows.jsonl" into "/rows.jsonl": both are refused here rather than read from the wrong place.
    expanded = os.path.expanduser(text)
    if not user and os.environ.get("HOME", None) == "":
        raise InputError(f"{argument} {text!r}: HOME is set but empty, so ~ names no folder; set HOME or write "
                         f"the path in full", field=argument)
    if expanded == text or expanded.startswith("~"):
        if user:
            why = f"there is no user {user!r} on this machine, so {head} names no home folder"
        else:
            why = "the home folder is unknown (HOME is not set and the current user has no passwd entry)"
        raise InputError(f"{argument} {text!r}: {why}; write the path in full, or ./{text} for a file or folder "
                         f"whose name starts with ~", field=argument)
    return Path(expanded)


# Folders that are never a root by default: a server started there (Claude Desktop spawns stdio servers from /)
# would otherwise read and write the whole machine or the whole home.
SYSTEM_FOLDERS = frozenset({"/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/dev", "/proc", "/sys",
                            "/var", "/opt", "/root", "/tmp", "/System", "/Library", "/Applications", "/Users", "/home",
                            "C:\\", "C:\\Windows", "C:\\Users"})
HOW_TO_ALLOW = ("start the server with --root DIR (repeatable; or PICK_A_METHOD_ROOTS=DIR), or use a client that "
                "declares its roots; the README's 'Use it from an agent' shows the line for each client")


def unsafe_root(folder: Path) -> str | None:
    """Why `folder` may not be a root by default (the file system root, the home folder itself, a system folder),
    or None."""
    real = Path(os.path.realpath(folder))
    if str(real) in SYSTEM_FOLDERS or real == Path(real.anchor):
        return f"{real} is a system folder"
    try:
        home = Path(os.path.realpath(Path.home()))
    except RuntimeError:
        home = None
    if real == home:
        return f"{real} is the home folder itself"
    return None


def default_roots() -> tuple[Path, ...]:
    """The working folder, unless it is one that may not be a root: then none (every path is refused)."""
    cwd = Path.cwd()
    return () if unsafe_root(cwd) else (Path(os.path.realpath(cwd)),)


def confine(value: Any, argument: str, roots: Sequence[Path] | None, *, write: bool = False) -> Path:
    """``value`` expanded and resolved, if it lies in one of ``roots`` (None: no confinement); else an InputError
    naming the argument, the folders allowed and how to allow another."""
    p = expand_user_path(value, argument)
    if roots is None:
        return p
    real = Path(os.path.realpath(p))
    if not roots:
        raise InputError(f"{argument}: this server may not {'write' if write else 'read'} any folder: it was started "
                         f"in {Path.cwd()} ({unsafe_root(Path.cwd()) or 'no root given'}) with no root allowed; "
                         f"{HOW_TO_ALLOW}", field=argument)
    if any(real == r or real.is_relative_to(r) for r in roots):
        return real
    need = real if real.is_dir() else real.parent
    raise InputError(f"{argument} {os.fsdecode(value)!r} resolves to {real}, outside the folders this server may "
                     f"{'write to' if write else 'read'}: {', '.join(map(str, roots))}. Choose a path under one of "
                     f"them, or allow its folder: {HOW_TO_ALLOW} (here: --root {need})", field=argument)
