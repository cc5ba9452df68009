"""PEP 562 lazy packages: a name loads the submodule that defines it on first use.

`routing` and `methods` use it so that `import pick_a_method.routing` (the command line's `--help`, the
server's `tools/list`) loads neither numpy, pyarrow nor the method objects until a name is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_names(package: str, exports: Mapping[str, str], names: Iterable[str],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's `__getattr__` and `__dir__`: `exports` maps a name to the submodule that defines it (or to a
    whole module path, `pick_a_method.common.errors`, for a name another package defines); any
    other attribute is tried as a submodule (`routing.defaults`). A loaded name is cached in `namespace` (the
    package's globals), so the next lookup is a plain attribute."""
    listed = tuple(names)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is not None:
            path = module if module.startswith("pick_a_method.") else f"{package}.{module}"
            value = getattr(importlib.import_module(path), name)
            namespace[name] = value
            return value
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.{name}":
                raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
