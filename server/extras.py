"""What the light install leaves out: torch and transformers come with the [torch] extra.

The router, the server and the config writers run without them; the update rules (`preview_update`) and the
tokenizer check need them, and say so with the install line instead of an ImportError.
"""

from __future__ import annotations

import importlib.util

# The extra's own packages, runnable as printed wherever pick-a-method came from (it is not on the package index
# yet, so `pip install 'pick-a-method[torch]'` would fail); the ranges are pyproject.toml's [torch] extra.
INSTALL = "pip install 'torch>=2.2,<3' 'transformers>=4.40,<6'"


class MissingExtra(ValueError):
    """A feature that needs the [torch] extra was asked for on a light install."""


def require(module: str, what: str) -> None:
    """Raise MissingExtra naming the extra when `module` (torch or transformers) is not installed."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(f"{what} needs {module}, which the light install leaves out; install the [torch] "
                           f"extra: {INSTALL}")
