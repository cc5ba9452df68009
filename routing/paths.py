"""The one place a path argument is expanded: a leading ``~`` or ``~user`` becomes that home folder.

Every argument that takes a path (rows_path and the other *_rows_path, preview_update's path, prime_rl_config's
out, the server's --allow-write) goes through expand_user_path, so they all read ``~`` the same way, and a
home that cannot be found is an InputError that names the argument, never a traceback (Path.expanduser
raises RuntimeError) nor a path kept with a literal ``~user`` in it.
"""

from __future__ import annotations

import os
from pathlib import Path
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
