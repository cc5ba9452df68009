"""Every tool's argument model, in the order the listing and `--help` show them (route first: start there).
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


def served() -> tuple[type[Arguments], ...]:
    """The tools the server and the command line offer, in the listing's order."""
    return DECLARED


def by_tool(name: str) -> type[Arguments] | None:
    """The declaration of a tool (`route`) or a command (`prime-rl-config`)."""
    return next((m for m in DECLARED if name in (m.tool, m.command())), None)
