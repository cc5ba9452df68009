"""Every tool's argument model, in the order the listing and `--help` show them (route first: start there).

`after` joins once the core has it (pick_a_method.routing.after); its arguments are declared already, so the
listing's size budget (tests/server/test_agent_fit.py) counts it.
"""

from __future__ import annotations

import importlib.util

from .declare import Arguments
from .rows_tools import (AfterArguments, BandArguments, HoldoutSizeArguments, PassAtArguments, RouteArguments,
                         TeacherClearsArguments, TruncatedPassesArguments)
from .writer_tools import (PreviewUpdateArguments, PrimeRlConfigArguments, TrlConfigArguments,
                           VerlConfigArguments)

DECLARED: tuple[type[Arguments], ...] = (
    RouteArguments, TruncatedPassesArguments, BandArguments, PassAtArguments, TeacherClearsArguments,
    HoldoutSizeArguments, AfterArguments, PreviewUpdateArguments, PrimeRlConfigArguments, TrlConfigArguments,
    VerlConfigArguments)


def has_after() -> bool:
    return importlib.util.find_spec("pick_a_method.routing.after") is not None


def served() -> tuple[type[Arguments], ...]:
    """The tools the server and the command line offer: every one declared, `after` once the core has it."""
    return tuple(m for m in DECLARED if m is not AfterArguments or has_after())


def by_tool(name: str) -> type[Arguments] | None:
    """The declaration of a tool (`route`) or a command (`prime-rl-config`), served or not."""
    return next((m for m in DECLARED if name in (m.tool, m.command())), None)
