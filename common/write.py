"""Writing a trainer's config file safely, for every writer (prime-rl's TOML, TRL's and verl's YAML).

``out`` is checked (a path with a suffix the trainer reads, in an existing folder, inside the allowed roots,
not an existing file unless ``overwrite``), then written atomically with no-clobber: a reader never sees a
partial file and an existing file is never replaced unless asked, even when two writers race for the name.
"""

from __future__ import annotations

import errno
import os
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pick_a_method.common.paths import expand_user_path


def show(value: Any) -> str:
    """A value for an error message, cut short (an int of thousands of digits cannot even be printed)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# The process umask, read once at import (os.umask can only be read by setting it, which is not thread-safe
# later, when the server writes from worker threads).
_UMASK = os.umask(0)
os.umask(_UMASK)


def write_config(out: Any, text: str | bytes, *, suffixes: tuple[str, ...], why: str, overwrite: bool,
                 allowed_roots: Sequence[Any] | None, argument: str = "out") -> Path:
    """Check ``out``, write ``text`` (or bytes: a picture) there atomically and return the path written.

    ``suffixes`` are the extensions the trainer reads this file by (the first is the example given);
    ``why`` says in a few words why the suffix matters, for the error; ``argument`` is what errors call ``out``.
    """
    path = check_out(out, suffixes, why, overwrite, allowed_roots, argument)
    _write_atomic(path, text, overwrite)
    return path


def check_out(out: Any, suffixes: tuple[str, ...], why: str, overwrite: bool,
               allowed_roots: Sequence[Any] | None, argument: str = "out") -> Path:
    wanted = " or ".join(suffixes)
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError(f"{argument} must be a file path ending in {wanted}; got {show(out)}")
    path = expand_user_path(out, argument)
    if path.suffix.lower() not in suffixes:
        raise ValueError(f"{argument} must end in {wanted} ({why}); got {str(out)!r}")
    if path.is_dir():
        example = str(path / ("config" + suffixes[0]))
        raise ValueError(f"{argument} {str(out)!r} is a folder; give a file path inside it, e.g. {example!r}")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise ValueError(
            f"the folder {str(parent)!r} for {argument} does not exist; create it first "
            f"(mkdir -p {shlex.quote(str(parent))}) "
            "or choose another path"
        )
    if not parent.is_dir():
        raise ValueError(f"the parent {str(parent)!r} of {argument} is not a folder")
    resolved = parent.resolve(strict=True) / path.name
    if path.is_symlink() or path.exists():
        resolved = path.resolve()
    if allowed_roots is not None:
        roots = [expand_user_path(r, "allowed_roots").resolve() for r in allowed_roots]
        if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
            names = ", ".join(str(r) for r in roots) or "(none)"
            raise ValueError(
                f"{argument} {str(out)!r} resolves to {str(resolved)!r}, outside the folders this server may write to: "
                f"{names}. Choose a path under one of them, or add its folder to the allowed roots in the server's "
                "settings."
            )
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise ValueError(
            f"{str(path)!r} already exists; pass overwrite=True to replace it, or choose another path"
        )
    return path


def _write_atomic(path: Path, text: str | bytes, overwrite: bool) -> None:
    """Write `text` to `path` so that no reader ever sees a partial file.

    The text goes to a temporary file in the same folder, is flushed and fsynced, and is then moved
    into place: with ``overwrite`` by rename (atomic replace); without it by a hard link, which fails
    if the name exists, so two writers cannot both win and an existing file is never replaced. On a
    filesystem without hard links the fallback is an exclusive create (O_EXCL). The temporary file is
    removed on every path out.
    """
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        _write_fd(fd, text)
        if overwrite:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise ValueError(
                    f"{str(path)!r} already exists (another writer created it just now); pass overwrite=True to "
                    "replace it, or choose another path"
                ) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                _write_exclusive(path, text)
        _fsync_dir(folder)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _write_exclusive(path: Path, text: str | bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise ValueError(f"{str(path)!r} already exists; pass overwrite=True to replace it") from None
    try:
        _write_fd(fd, text)
    except BaseException:
        os.unlink(path)
        raise


def _write_fd(fd: int, text: str | bytes) -> None:
    """Write ``text`` to the open file ``fd`` with the umask's ordinary file mode, flush it to disk and close it."""
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes it 0600; a config is an ordinary file
    binary = isinstance(text, bytes)
    with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)

