"""The installed versions the server needs, checked before it imports them: a user whose `mcp` was moved out of
range by another package (langchain-mcp-adapters pins mcp 1.x) gets one line naming it and the fix, not a
ModuleNotFoundError from deep inside the SDK."""

from __future__ import annotations

import importlib.metadata

from .extras import pip_install

# The ranges pyproject.toml declares (a test keeps them equal).
NEEDS = {"mcp": ((2, 3), (3,)), "pydantic": ((2,), (3,))}


def _parts(version: str) -> tuple[int, ...]:
    out = []
    for piece in version.split("."):
        digits = piece[:len(piece) - len(piece.lstrip("0123456789"))]  # the leading digits: 0rc1 -> 0
        if not digits:
            break
        out.append(int(digits))
        if digits != piece:
            break
    return tuple(out)


def problem() -> str | None:
    """None when every needed package is installed within its range; else one line saying what to do."""
    for name, (low, high) in NEEDS.items():
        want = f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return f"pick-a-method needs {name}{want}, which is not installed: {pip_install(name + want)}"
        if not low <= _parts(have) < high:
            return (f"pick-a-method needs {name}{want}, but {name} {have} is installed (another package may have "
                    f"moved it): {pip_install(name + want)} (or give pick-a-method its own environment: uvx)")
    return None
