"""The registry: each method object under its table name, and ``make_method`` for any spelling."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from pick_a_method.common.methods import METHODS as TABLE, method_info
from pick_a_method.methods.objects.async_method import Async
from pick_a_method.methods.objects.base import REGISTERED, Method

# Defining a class registers it (base.REGISTERED): every family module of this package is imported for that, so a new
# family file needs no line here.
for _family in pkgutil.iter_modules([str(Path(__file__).parent)]):
    importlib.import_module(f"{__package__}.{_family.name}")

# In the table's order; every entry with an update rule has its object (tests/methods/test_method_table.py).
METHODS: dict[str, type[Method]] = {m.name: REGISTERED[m.name] for m in TABLE.values() if m.rule}


def method_names() -> list[str]:
    """The canonical registry names."""
    return list(METHODS)


def make_method(name: str | Method, **knobs: Any) -> Method:
    """Build a method object from a name (any spelling common/methods.py reads) and its knobs.

    ``make_method("GRPO", group_size=4)``, ``make_method("MaxRL")``, ``make_method("flash_reinforce",
    trust=0.01)``, ``make_method("Async", method={"name": "rae", "decay": 0.9}, correction="icepop")``;
    ``"async grpo"`` is short for ``Async(method="grpo")``. An unknown name raises ValueError listing
    the known ones; a bad knob raises ValueError with the allowed range.
    """
    if isinstance(name, Method):
        return type(name)(**{**_raw_knobs(name), **knobs}) if knobs else name
    info, inner = method_info(name)
    if inner is not None:
        if "method" in knobs:
            raise ValueError(f"{name!r} already names the inner method; drop the 'method' knob")
        return Async(method=inner.name, **knobs)
    if info.name not in METHODS:
        raise ValueError(f"{info.label} has no update rule here: {', '.join(info.trainers)} trains it, so write its "
                         f"config with that trainer's config tool; known methods: {', '.join(METHODS)}")
    return METHODS[info.name](**knobs)


def _raw_knobs(obj: Method) -> dict[str, Any]:
    return {key: getattr(obj, key) for key in type(obj).model_fields}

