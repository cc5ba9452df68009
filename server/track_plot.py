"""track's picture drawn with matplotlib (the [plot] extra, imported on first use, Agg backend): the band's shares
over steps stacked, the reward with its interval, the reply length, each alarm a vertical line at its step."""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any

from .plot import COLOURS, DPI, FORMATS, PANEL_INCHES, require_matplotlib, titled

ALARM_COLOUR = "#8e44ad"


def track_figure(p: Any) -> Any:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(PANEL_INCHES[0] * 3, PANEL_INCHES[1] + 0.9), dpi=DPI)
    FigureCanvasAgg(fig)
    band, reward, length = fig.subplots(1, 3, squeeze=True)
    x = [pt.step for pt in p.points]
    if any(pt.split is not None for pt in p.points):
        shares = [[getattr(pt, k) or 0.0 for pt in p.points] for k in ("all_fail", "split", "all_pass")]
        band.stackplot(x, shares, labels=("all fail", "split", "all pass"),
                       colors=[COLOURS["all_fail"], COLOURS["split"], COLOURS["all_pass"]], alpha=0.85)
        band.set_ylim(0, 1)
        band.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, fontsize=8, frameon=False)
    else:
        band.text(0.5, 0.5, "band not read (no groups)", ha="center", va="center", transform=band.transAxes)
    band.set_title("groups per window: the band", fontsize=10)
    pts = [pt for pt in p.points if pt.reward is not None]
    reward.plot([pt.step for pt in pts], [pt.reward for pt in pts], color=COLOURS["all_pass"], marker="o", ms=3)
    ci = [pt for pt in pts if pt.reward_low is not None]
    if ci:
        reward.fill_between([pt.step for pt in ci], [pt.reward_low for pt in ci], [pt.reward_high for pt in ci],
                            color=COLOURS["all_pass"], alpha=0.2, linewidth=0)
    reward.set_title("mean reward (95% interval)", fontsize=10)
    lens = [pt for pt in p.points if pt.length is not None]
    length.plot([pt.step for pt in lens], [pt.length for pt in lens], color=COLOURS["tie"], marker="o", ms=3)
    length.set_title(f"mean reply length ({p.length_unit or 'not read'})", fontsize=10)
    for ax in (band, reward, length):
        ax.set_xlabel("step")
        ax.spines[["top", "right"]].set_visible(False)
        for m in p.marks:
            ax.axvline(m.step, color=ALARM_COLOUR, linestyle="--", linewidth=1)
            ax.annotate(m.name.replace("_", " "), (m.step, 1), xycoords=("data", "axes fraction"), rotation=90,
                        va="top", ha="right", fontsize=7, color=ALARM_COLOUR)
    return titled(fig, p.title, p.caption, gap=30)


def draw_track(verdict: Any, fmt: str = "png") -> bytes:
    from pick_a_method.routing.during_training.picture import track_picture

    out = io.BytesIO()
    metadata = {"Software": None} if fmt == "png" else {"Date": None}
    track_figure(track_picture(verdict)).savefig(out, format=fmt, metadata=metadata)
    return out.getvalue()


def track_png(verdict: Any) -> str:
    """The picture as base64 PNG, what an MCP image block carries."""
    import base64

    require_matplotlib()
    return base64.b64encode(draw_track(verdict, "png")).decode("ascii")


def track_lines(args: argparse.Namespace, verdict: Any) -> tuple[str, str]:
    """(the sketch under the verdict, or "" with --json; the line saying where --plot wrote)."""
    from pick_a_method.routing.during_training.picture import track_picture

    from .sketch import wants_colour
    from .track_sketch import track_sketch

    below = "" if args.json else "\n" + track_sketch(track_picture(verdict), wants_colour(sys.stdout))
    wrote = ""
    if args.plot:
        from pick_a_method.common.write import check_out, write_config

        from .cli_flags import write_roots

        require_matplotlib("--plot")
        where = dict(suffixes=tuple(FORMATS), why="the picture is drawn in the format it names",
                     overwrite=args.overwrite, allowed_roots=write_roots(args), argument="--plot")
        path = check_out(args.plot, **where)
        wrote = f"picture: wrote {write_config(args.plot, draw_track(verdict, FORMATS[path.suffix.lower()]), **where)}"
    return below, wrote
