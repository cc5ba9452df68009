"""Every rollout read once: the files of one read that hold the same rollouts are told apart by their content, and
all but the first are skipped, with a note that names the file skipped, why, and the one read.

The same rollouts reach a read in three ways: one file named twice (a folder and a file in it, a glob and a name,
a relative and an absolute path), a copy of a file under another name, and one log in two encodings (an inspect
`.eval` and the `inspect log dump` JSON beside it). So: the same file (device and inode) is read once; files whose
format names their rollouts (`Format.rollouts`: a run id and sample ids) are the same where the run and the samples
are, and refused where they share some samples but not all (one log at two moments); other files are the same where
their bytes are (hashed only where two files of the read have the same size).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from pick_a_method.common.errors import InputError
from .base import Format, Probe, ReadArgs, Rollouts

File = tuple[Path, Probe, Format]


def _digest(p: Path) -> str:
    h = hashlib.blake2b(digest_size=20)
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def distinct(files: Sequence[File], args: ReadArgs) -> tuple[list[File], list[str]]:
    """The files that hold rollouts not already read, in order, and a note for each file skipped."""
    kept: list[File] = []
    notes: list[str] = []
    inodes: dict[tuple[int, int], Path] = {}
    runs: list[tuple[Path, Rollouts]] = []
    sizes: dict[int, int] = {}
    for p, _, _ in files:
        size = p.stat().st_size
        sizes[size] = sizes.get(size, 0) + 1
    digests: dict[str, Path] = {}
    named = sum(fmt.rollouts is not None for _, _, fmt in files) > 1  # one such file has nothing to be the same as
    for p, probe, fmt in files:
        st = p.stat()
        inode = (st.st_dev, st.st_ino)
        if inode in inodes:
            first = inodes[inode]
            notes.append(f"skipped {p}: named twice" if first == p else f"skipped {p}: the same file as {first}")
            continue
        inodes[inode] = p
        own = fmt.rollouts(p, probe, args) if named and fmt.rollouts else None
        if own is not None:
            same = _same_run(p, own, runs, args)
            if same is not None:
                notes.append(f"skipped {p}: the same {len(own.keys)} rollouts as {same} ({own.run}: one log, in "
                             f"another form or a copy), read once")
                continue
            runs.append((p, own))
        elif sizes[st.st_size] > 1:
            digest = _digest(p)
            if digest in digests:
                notes.append(f"skipped {p}: the same bytes as {digests[digest]} (a copy), read once")
                continue
            digests[digest] = p
        kept.append((p, probe, fmt))
    return kept, notes


def _same_run(p: Path, own: Rollouts, runs: list[tuple[Path, Rollouts]], args: ReadArgs) -> Path | None:
    """The file already kept that holds exactly `own`'s rollouts; an error where one holds only some of them."""
    for q, theirs in runs:
        if theirs.run != own.run or not theirs.keys & own.keys:
            continue
        if theirs.keys == own.keys:
            return q
        shared = len(theirs.keys & own.keys)
        raise InputError(f"{q} and {p} are the same {own.run} at two moments: they share {shared} rollouts, and hold "
                         f"{len(theirs.keys)} and {len(own.keys)}; reading both would count {shared} rollouts twice. "
                         f"Name only one of them (the complete one)", field=args.argument)
    return None
