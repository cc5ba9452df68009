"""The picture (routing.picture) drawn with matplotlib, as PNG or SVG bytes, and written to a file.

matplotlib comes with the [plot] extra and is imported here, inside the functions, on the Agg backend (no
display): never by the router, nor by the server's start-up. Without it the error names the extra and the line
that installs it.
"""

from __future__ import annotations

import importlib.util
import io
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pick_a_method.routing.picture import KIND_NAMES, PREDICTED_FOR

from .extras import MissingExtra, plot_install

# The [plot] extra installed in a clone (the hint's other line, extras.plot_install, works wherever it came from).
IN_THE_CLONE = "pip install -c constraints.txt '.[plot]'"
FORMATS = {".png": "png", ".svg": "svg"}
# One colour per bar kind: all fail and the student ahead red, split and the teacher ahead green, all pass blue.
COLOURS = {"all_fail": "#c0392b", "student_ahead": "#c0392b", "split": "#27ae60", "teacher_ahead": "#27ae60",
           "all_pass": "#2e6fba", "tie": "#7f8c8d"}
PANEL_INCHES = (5.2, 4.0)
DPI = 110


def require_matplotlib(what: str = "the picture") -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingExtra(f"{what} needs matplotlib, which the light install leaves out; install the [plot] extra: "
                           f"{plot_install()} (or, in a clone of pick-a-method: {IN_THE_CLONE})")


def draw(picture: Any, fmt: str = "png") -> bytes:
    """The picture's panels side by side, with its title above and its caption below, as `fmt` bytes."""
    require_matplotlib()
    from matplotlib.figure import Figure  # a Figure outside pyplot draws to bytes with no backend to pick

    panels = [name for name, on in (("rates", picture.band is not None and picture.band.n_groups),
                                    ("curve", picture.band is not None and picture.band.curve),
                                    ("paired", picture.paired is not None)) if on]
    fig = Figure(figsize=(PANEL_INCHES[0] * max(1, len(panels)), PANEL_INCHES[1] + 0.9), dpi=DPI)
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    for ax, name in zip(axes, panels):
        {"rates": _rates, "curve": _curve, "paired": _paired}[name](ax, picture)
    if not panels:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "no graded rows, no shared tasks: nothing to draw", ha="center", va="center")
    fig.suptitle(picture.title, fontsize=13, fontweight="bold")
    width = int(len(panels or [1]) * PANEL_INCHES[0] * 14)  # characters of caption per line at 10 pt
    fig.text(0.5, 0.02, "\n".join(textwrap.wrap(picture.caption, width)), ha="center", va="bottom", fontsize=10)
    fig.tight_layout(rect=(0, 0.09, 1, 0.95))
    out = io.BytesIO()
    metadata = {"Software": None} if fmt == "png" else {"Date": None}  # the same rows give the same bytes
    fig.savefig(out, format=fmt, metadata=metadata)
    return out.getvalue()


def write_plot(picture: Any, out: Any, *, overwrite: bool, allowed_roots: Sequence[Any] | None = None) -> Path:
    """Draw the picture in the format out's suffix names (.png or .svg) and write it with the config writers'
    checks (folder, allowed roots, no clobber without overwrite) and atomic write."""
    from pick_a_method.common.write import check_out, write_config

    where = dict(suffixes=tuple(FORMATS), why="the picture is drawn in the format it names", overwrite=overwrite,
                 allowed_roots=allowed_roots, argument="--plot")
    path = check_out(out, **where)  # a refused path before the drawing: no render for nothing
    return write_config(out, draw(picture, FORMATS[path.suffix.lower()]), **where)


def _bars(ax: Any, bars: list[Any], xs: list[float], width: float, extra: Sequence[Any] = (),
          where: str = "upper center") -> None:
    """The bars with their counts on top, and a legend of each kind's total (then `extra`: the marked lines)."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    drawn = ax.bar(xs, [b.count for b in bars], width=width, color=[COLOURS[b.kind] for b in bars],
                   edgecolor="white", linewidth=0.8)
    for rect, bar in zip(drawn, bars):
        if bar.count:
            ax.annotate(str(bar.count), (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center",
                        va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    seen: dict[str, int] = {}
    for b in bars:
        seen[b.kind] = seen.get(b.kind, 0) + b.count
    handles = [Patch(facecolor=COLOURS[kind], label=f"{KIND_NAMES[kind]} ({count})")
               for kind, count in seen.items()]
    handles += list(extra)
    ax.legend(handles=handles, loc=where, fontsize=8, frameon=False, ncol=1 if extra else len(handles))
    ax.margins(y=0.7 if extra else 0.18)  # room for the legend above the bars
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of tasks: no 2.5
    ax.spines[["top", "right"]].set_visible(False)


def _rates(ax: Any, picture: Any) -> None:
    b = picture.band
    exact = b.bars[1].low == b.bars[1].high  # one bar per j/k (else bins)
    step = b.bars[1].low if exact else b.bars[1].high - b.bars[1].low  # 1/k, or a bin's width
    if exact:
        xs = [bar.low for bar in b.bars]
        ticks, labels = xs, [bar.label for bar in b.bars]
    else:  # the all-fail and all-pass bars a bin's width outside 0 and 1, apart from the bins they are not
        xs = [-step] + [(bar.low + bar.high) / 2 for bar in b.bars[1:-1]] + [1 + step]
        inner = [round(x, 2) for x in (0.2, 0.4, 0.6, 0.8)]
        ticks, labels = [-step, *inner, 1 + step], ["0", *(f"{x:g}" for x in inner), "1"]
    _bars(ax, b.bars, xs, 0.8 * step)
    ax.set_xlim(min(xs) - step, max(xs) + step)
    ax.set_xticks(ticks, labels, fontsize=8)
    ax.set_title(f"Pass rate per {b.unit[:-1]} ({b.n_groups} {b.unit})", fontsize=11)
    ax.set_xlabel("pass rate: passes / rollouts" + (" (groups of unequal size, binned)" if b.uneven else
                                                    f" (k = {b.k})"))
    ax.set_ylabel(b.unit)


def _curve(ax: Any, picture: Any) -> None:
    b = picture.band
    ks = [p.k for p in b.curve]
    share = [100 * p.share for p in b.curve]
    with_ci = [p for p in b.curve if p.ci95]
    if with_ci:
        ax.fill_between([p.k for p in with_ci], [100 * p.ci95[0] for p in with_ci], [100 * p.ci95[1] for p in with_ci],
                        color=COLOURS["split"], alpha=0.15, linewidth=0, label="95% interval")
    ax.plot(ks, share, "-o", color=COLOURS["split"], markersize=4, label=f"predicted for {PREDICTED_FOR}")
    if b.measured_split_share is not None and b.k >= 2:
        also = f" (predicted {b.predicted(b.k):.0%})" if b.measured_at_k is not None else ""
        ax.plot([b.k], [100 * b.measured_split_share], "D", color="black", markersize=6,
                label=f"measured at k={b.k}: {b.measured_split_share:.0%}{also}")
    at = {p.k: p.share for p in b.curve}
    if b.flat:  # a floor or a saturated set: the flat line says it, and so does a word
        ax.text(0.5, 0.5, "0% predicted at every k:\nmore rollouts per task\ndo not make these tasks split",
                transform=ax.transAxes, ha="center", va="center", fontsize=10, color="#555555")
    if b.advised_k is not None:
        ax.axvline(b.advised_k, color="#555555", linestyle="--", linewidth=1)
        ax.annotate(f"advised k={b.advised_k}\n{at.get(b.advised_k, 0):.0%} split", (b.advised_k, 4), xytext=(4, 0),
                    textcoords="offset points", fontsize=8, va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_ylim(0, 100)
    ax.set_title("Split share against k", fontsize=11)
    ax.set_xlabel("k: rollouts per task")
    ax.set_ylabel(f"% of {b.unit} with a pass and a fail")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)


def _paired(ax: Any, picture: Any) -> None:
    p = picture.paired
    exact = [bar for bar in p.bars if bar.low == bar.high]
    gaps = [y.low - x.low for x, y in zip(exact, exact[1:])]
    width = 0.8 * (min(gaps) if gaps else 0.1) if len(exact) == len(p.bars) else 0.08
    ax.axvline(0, color="black", linewidth=0.8)
    marks = [ax.axvline(p.mean_diff, color="black", linestyle="--", linewidth=1.2, label=f"mean {p.mean_diff:+.3f}")]
    if p.ci95:
        marks.append(ax.axvspan(p.ci95[0], p.ci95[1], color="black", alpha=0.1, linewidth=0,
                                label=f"95% interval [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}]"))
    marks.append(ax.axvline(p.effect, color="#8e44ad", linestyle=":", linewidth=1.5,
                            label=f"effect to prove {p.effect:g}"))
    _bars(ax, p.bars, [(bar.low + bar.high) / 2 for bar in p.bars], width, extra=marks, where="best")
    ax.set_xlim(-1.05, 1.05)
    ax.set_title(f"Teacher minus student ({p.n_shared} shared tasks)", fontsize=11)
    ax.set_xlabel("pass rate difference per task (teacher - student)")
    ax.set_ylabel("tasks")


def picture_png(rows: Any, verdict: Any, **kwargs: Any) -> str:
    """The verdict's picture as base64 PNG, what an MCP image block carries (kwargs: routing.picture.picture's)."""
    import base64

    from pick_a_method.routing.picture import picture

    require_matplotlib()  # before the picture's data is built: the error, not the work, when it is missing
    return base64.b64encode(draw(picture(rows, verdict, **kwargs), "png")).decode("ascii")
