"""The folders a tool call may read and write: the MCP client's roots where it declares them (asked on every
call that takes a path, so a `notifications/roots/list_changed` is always seen), else the server's own
(`ServerOptions.roots`: --root, PICK_A_METHOD_ROOTS, or the folder it started in unless that is unsafe).

The 2026-07-28 spec deprecates roots (SEP-2577), and the SDK warns on every use; hosts still send them (Claude
Code, VS Code, the Inspector), so they are read with that warning silenced, and a client that cannot answer
(no back channel, an error, no answer in ROOTS_SECONDS) is treated as one that declared none.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio

from .options import ServerOptions

ROOTS_SECONDS = 5.0
log = logging.getLogger(__name__)


def _path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(os.path.realpath(unquote(parsed.path)))


async def client_roots(ctx: Any) -> tuple[Path, ...] | None:
    """The client's file roots, or None where it declares none (or cannot say)."""
    session = getattr(ctx, "session", None)
    caps = getattr(session, "client_capabilities", None)
    if caps is None or getattr(caps, "roots", None) is None:
        return None
    try:
        from mcp import MCPDeprecationWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            with anyio.fail_after(ROOTS_SECONDS):
                result = await session.list_roots()
    except Exception as e:  # noqa: BLE001 - no back channel, an error reply, a time-out: the server's own roots
        log.warning("the client declares roots but did not list them (%s); using the server's", e.__class__.__name__)
        return None
    paths = tuple(p for p in (_path(str(r.uri)) for r in result.roots) if p is not None)
    return paths or None


async def allowed(ctx: Any, options: ServerOptions, *, write: bool = False) -> tuple[Path, ...]:
    """The roots for this call: the client's, else the server's (for writes, the write roots)."""
    own = await client_roots(ctx)
    if own is not None:
        return own
    return options.write_roots if write else options.roots


def local_or_hub(value: str | None, argument: str, roots: tuple[Path, ...]) -> str | None:
    """A tokenizer argument: a local folder is confined to the roots; a hub id (`Qwen/Qwen3-8B`) is passed on."""
    from pick_a_method.common.paths import confine

    if value is None:
        return None
    local = value.startswith(("/", "~", ".")) or Path(value).exists()
    return str(confine(value, argument, roots)) if local else value


def placed(name: str, roots: Sequence[str | os.PathLike[str]]) -> str:
    """A bare file name a next step gives as `out`, as the file that call may write: unchanged where the working folder
    (where a bare name lands) is inside a write root, else the same name in the first root, so making exactly the
    call the next step names writes the file instead of being refused. A path (with a folder) is the caller's."""
    if not roots or Path(name).name != name:
        return name
    here, real = Path(os.path.realpath(Path.cwd())), [Path(os.path.realpath(r)) for r in roots]
    return name if any(here == r or r in here.parents for r in real) else str(real[0] / name)
