"""The picture on the command line: the text sketch under the verdict of every tool that draws one (`pictured`), and
`--plot FILE.png|.svg`, both drawn from the rows the command read (never read twice), as the MCP tool draws it
(each tool's `picture_of`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

def plot_flags(c: argparse.ArgumentParser) -> None:
    c.add_argument("--plot", metavar="FILE", help="also draw the picture into FILE.png or FILE.svg (needs the [plot] "
                                                  "extra: matplotlib)")
    c.add_argument("--overwrite", action="store_true", help="replace an existing file at --plot")


def remember(args: argparse.Namespace, argument: str, rows: Any) -> Any:
    """Keep the rows a command read under the argument that named them, for its picture."""
    vars(args).setdefault("rows_read", {})[argument] = rows
    return rows


def picture_lines(args: argparse.Namespace, verdict: Any) -> tuple[str, str]:
    """(the sketch to print under the verdict, or "" with --json; the line that says where --plot wrote the
    picture, or ""). --plot is written here, before anything is printed: a refused file (it exists, the extra is
    missing) fails the command with nothing half-shown. Colour only for a terminal (sketch.wants_colour)."""
    a = getattr(args, "arguments", None)
    if a is None or not a.pictured or (args.json and not args.plot):  # --json alone: the verdict, nothing drawn
        return "", ""
    if args.plot:
        from .plot import require_matplotlib

        require_matplotlib("--plot")  # before the picture is built: the error, not the work, when it is missing
    own = a.cli_picture(args, verdict)
    if own is not None:
        return own
    from pick_a_method.routing.pictures.route import picture

    from .sketch import sketch, wants_colour

    try:
        subject, kwargs = a.picture_of(getattr(args, "rows_read", {}))  # the rows read, by row set: as over MCP
        p = picture(subject, verdict, **kwargs)
        below = "" if args.json else "\n" + sketch(p, wants_colour(sys.stdout))  # a blank line apart from the verdict
    except Exception as e:  # noqa: BLE001 -- the sketch is an aid: without --plot, a fault in it never costs the verdict
        if args.plot:
            raise
        return f"\n(no picture: {type(e).__name__}: {e})", ""
    wrote = ""
    if args.plot:
        from .cli_flags import write_roots  # cli_flags imports this module's plot_flags
        from .plot import write_plot

        wrote = f"picture: wrote {write_plot(p, args.plot, overwrite=args.overwrite, allowed_roots=write_roots(args))}"
    return below, wrote
