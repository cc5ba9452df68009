"""What the light install leaves out: torch and transformers come with the [torch] extra.

The router, the server and the config writers run without them; the update rules (`preview_update`) and the
tokenizer check need them, and say so with the install line instead of an ImportError.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys

# pyproject.toml's [torch] extra (tests/server/test_build.py keeps them equal). The hint names the packages, not
# `pick-a-method[torch]`: pick-a-method is not on the package index yet.
TORCH_SPECS = ("torch>=2.2,<3", "transformers>=4.40,<6")
PLOT_SPECS = ("matplotlib>=3.8,<4",)  # pyproject.toml's [plot] extra (the same test keeps them equal)
# PyTorch's own index of CPU wheels: on Linux, PyPI's torch is the CUDA build (2.8 GB of wheels).
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


class MissingExtra(ValueError):
    """A feature that needs an extra was asked for on a light install."""


def pip_install(*specs: str) -> str:
    """The line that installs `specs` into the environment running now, runnable as printed: this Python's pip, or
    uv's where the environment has none (uv and uvx make them without pip)."""
    packages = " ".join(shlex.quote(s) for s in specs)
    python = shlex.quote(sys.executable)
    if importlib.util.find_spec("pip") is not None:
        return f"{python} -m pip install {packages}"
    return f"uv pip install --python {python} {packages}"


def torch_install() -> str:
    """The [torch] extra's packages, torch as the CPU wheel."""
    return f"{pip_install(*TORCH_SPECS)} --extra-index-url {CPU_INDEX}"


def plot_install() -> str:
    """The [plot] extra's packages."""
    return pip_install(*PLOT_SPECS)


def require(module: str, what: str) -> None:
    """Raise MissingExtra naming the extra when `module` (torch or transformers) is not installed."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(f"{what} needs {module}, which the light install leaves out; install the [torch] "
                           f"extra's packages (torch as the CPU wheel; without --extra-index-url, the CUDA build "
                           f"on Linux): {torch_install()}")
