"""Every tool's argument model, in the order the listing and `--help` show them (route first: start there).

`after` is served where the core has it (pick_a_method.routing.after); its arguments are declared either way, so the
listing's size budget (tests/server/test_agent_fit.py) counts it.
"""

from __future__ import annotations

from .declare import Arguments
from .track_tool import TrackArguments
from .rows_tools import (AfterArguments, BandArguments, HoldoutSizeArguments, PassAtArguments, RouteArguments,
                         TeacherClearsArguments, TruncatedPassesArguments)
from .writer_tools import (PreviewUpdateArguments, PrimeRlConfigArguments, TrlConfigArguments,
                           VerlConfigArguments)

DECLARED: tuple[type[Arguments], ...] = (
    RouteArguments, TruncatedPassesArguments, BandArguments, PassAtArguments, TeacherClearsArguments,
    HoldoutSizeArguments, AfterArguments, TrackArguments, PreviewUpdateArguments, PrimeRlConfigArguments, TrlConfigArguments,
    VerlConfigArguments)


def has_after() -> bool:
    from pick_a_method import routing  # the package only: its names load their modules on first use

    return "after" in routing.__all__


def served() -> tuple[type[Arguments], ...]:
    """The tools the server and the command line offer: every one declared, `after` once the core has it."""
    return tuple(m for m in DECLARED if m is not AfterArguments or has_after())


def by_tool(name: str) -> type[Arguments] | None:
    """The declaration of a tool (`route`) or a command (`prime-rl-config`), served or not."""
    return next((m for m in DECLARED if name in (m.tool, m.command())), None)
