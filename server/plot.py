"""The picture (routing.pictures.route) drawn with matplotlib, as PNG or SVG bytes, and written to a file.

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

from pick_a_method.routing.pictures.route import KIND_NAMES, PREDICTED_FOR

from .extras import MissingExtra, plot_install

# The [plot] extra installed in a clone (the hint's other line, extras.plot_install, works wherever it came from).
IN_THE_CLONE = "pip install -c constraints.txt '.[plot]'"
FORMATS = {".png": "png", ".svg": "svg"}
# One colour per bar kind: all fail and the student ahead red, split and the teacher ahead green, all pass blue.
COLOURS = {"all_fail": "#c0392b", "student_ahead": "#c0392b", "split": "#27ae60", "teacher_ahead": "#27ae60",
           "all_pass": "#2e6fba", "tie": "#7f8c8d", "cut_passed": "#c0392b", "cut_failed": "#7f8c8d",
           "whole_passed": "#2e6fba", "whole_failed": "#bdc3c7", "higher": "#27ae60", "lower": "#c0392b",
           "same": "#7f8c8d", "above_0": "#27ae60", "below_0": "#c0392b", "open": "#7f8c8d"}
EFFECT_COLOUR = "#8e44ad"  # the registered effect (or the effect to prove), marked across a panel
PANEL_INCHES = (5.2, 4.6)
DPI = 110
BELOW = -36  # points from an axes' bottom to its legend: under the tick labels and the axis label


def require_matplotlib(what: str = "the picture") -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingExtra(f"{what} needs matplotlib, which the light install leaves out; install the [plot] extra: "
                           f"{plot_install()} (or, in a clone of pick-a-method: {IN_THE_CLONE})")


def draw(picture: Any, fmt: str = "png") -> bytes:
    """The picture's panels side by side, with its title above and its caption below, as `fmt` bytes."""
    out = io.BytesIO()
    metadata = {"Software": None} if fmt == "png" else {"Date": None}  # the same rows give the same bytes
    figure(picture).savefig(out, format=fmt, metadata=metadata)
    return out.getvalue()


def figure(picture: Any) -> Any:
    """The matplotlib Figure `draw` saves, laid out: every text inside it, every legend clear of the data."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # a Figure outside pyplot draws to bytes with no backend to pick

    panels = [name for name, on in (("rates", picture.band is not None and picture.band.n_groups),
                                    ("curve", picture.band is not None and picture.band.curve),
                                    ("paired", picture.paired is not None),
                                    ("cut_off", getattr(picture, "cut_off", None) is not None),
                                    ("grader", getattr(picture, "grader", None) is not None),
                                    ("length", getattr(picture, "grader", None) is not None
                                     and bool(picture.grader.by_length)),
                                    ("per_task", getattr(picture, "per_task", None) is not None),
                                    ("diffs", getattr(picture, "diffs", None) is not None)) if on]
    fig = Figure(figsize=(PANEL_INCHES[0] * max(1, len(panels)), PANEL_INCHES[1] + 0.9), dpi=DPI)
    FigureCanvasAgg(fig)  # a renderer to measure the title and caption with before the layout
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    for ax, name in zip(axes, panels):
        {"rates": _rates, "curve": _curve, "paired": _paired, "cut_off": _cut_off, "grader": _grader,
         "length": _length, "per_task": _per_task,
         "diffs": _diffs}[name](ax, picture)
    if not panels:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "no graded rows, no shared tasks: nothing to draw", ha="center", va="center")
    return titled(fig, picture.title, picture.caption)


def titled(fig: Any, title_text: str, caption_text: str, gap: float = 18) -> Any:
    """The figure's title above and caption below, each wrapped to the figure's width, and the panels laid out in
    the room left between them (`gap` points above the caption)."""
    title = fig.suptitle(title_text, fontsize=13, fontweight="bold")
    caption = fig.text(0.5, 0.02, caption_text, ha="center", va="bottom", fontsize=10)
    renderer = fig.canvas.get_renderer()
    _fit(title, title_text, fig, renderer)
    _fit(caption, caption_text, fig, renderer)
    bottom = (caption.get_window_extent(renderer).height + gap) / fig.bbox.height
    fig.tight_layout(rect=(0, bottom, 1, 1))  # the layout leaves the title's lines their room
    return fig


def write_plot(picture: Any, out: Any, *, overwrite: bool, allowed_roots: Sequence[Any] | None = None) -> Path:
    """Draw the picture in the format out's suffix names (.png or .svg) and write it with the config writers'
    checks (folder, allowed roots, no clobber without overwrite) and atomic write."""
    from pick_a_method.common.write import check_out, write_config

    where = dict(suffixes=tuple(FORMATS), why="the picture is drawn in the format it names", overwrite=overwrite,
                 allowed_roots=allowed_roots, argument="--plot")
    path = check_out(out, **where)  # a refused path before the drawing: no render for nothing
    return write_config(out, draw(picture, FORMATS[path.suffix.lower()]), **where)


def _fit(text: Any, words: str, fig: Any, renderer: Any) -> None:
    """Wrap a figure's text (the title, the caption) into lines that fit the figure's width, and only where it
    must: a 572-pixel figure of one panel holds fewer characters of a 13-point title than three panels do."""
    room = 0.96 * fig.bbox.width
    width = len(words)
    while text.get_window_extent(renderer).width > room and width > 12:
        width = int(width * room / text.get_window_extent(renderer).width) if "\n" not in text.get_text() else width - 4
        text.set_text("\n".join(textwrap.wrap(words, max(width, 12))))
    while text.get_window_extent(renderer).width > room and text.get_fontsize() > 6:  # a word longer than the room
        text.set_fontsize(text.get_fontsize() - 1)


def _legend_below(ax: Any, handles: Sequence[Any], ncol: int) -> None:
    """The legend under the axes (and its tick and axis labels), where no bar, line or marker can lie under it."""
    from matplotlib.transforms import offset_copy

    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8, frameon=False, ncol=ncol,
              bbox_transform=offset_copy(ax.transAxes, fig=ax.figure, y=BELOW, units="points"))


def _bars(ax: Any, bars: list[Any], xs: list[float], width: float, extra: Sequence[Any] = (),
          legend: bool = True) -> None:
    """The bars with their counts on top, and a legend of each kind's total (then `extra`: the marked lines)."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    drawn = ax.bar(xs, [b.count for b in bars], width=width, color=[COLOURS[b.kind] for b in bars],
                   edgecolor="white", linewidth=0.8)
    for rect, bar in zip(drawn, bars):
        if bar.count:  # on a white ground: a line marked across the bars (a mean, an effect) never hides it
            ax.annotate(str(bar.count), (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center",
                        va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points",
                        bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    seen: dict[str, int] = {}
    for b in bars:
        seen[b.kind] = seen.get(b.kind, 0) + b.count
    handles = [Patch(facecolor=COLOURS[kind], label=f"{KIND_NAMES[kind]} ({count})")
               for kind, count in seen.items()]
    handles += list(extra)
    if legend:
        _legend_below(ax, handles, ncol=len(handles) if len(handles) <= 3 else 2)
    ax.margins(y=0.12)  # room for the counts above the bars
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
        now = b.predicted(b.k) if b.measured_at_k is not None else None
        also = f" (predicted {now:.0%})" if now is not None and f"{now:.0%}" != f"{b.measured_at_k:.0%}" else ""
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
    _legend_below(ax, ax.get_legend_handles_labels()[0], ncol=1)
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
    marks.append(ax.axvline(p.effect, color=EFFECT_COLOUR, linestyle=":", linewidth=1.5,
                            label=f"effect to prove {p.effect:g}"))
    _bars(ax, p.bars, [(bar.low + bar.high) / 2 for bar in p.bars], width, extra=marks)
    ax.set_xlim(-1.05, 1.05)
    ax.set_title(f"Teacher minus student ({p.n_shared} shared tasks)", fontsize=11)
    ax.set_xlabel("pass rate difference per task (teacher - student)")
    ax.set_ylabel("tasks")


def _cut_off(ax: Any, picture: Any) -> None:
    c = picture.cut_off
    xs = list(range(len(c.bars)))
    _bars(ax, c.bars, xs, 0.7, legend=False)  # the ticks name each bar
    ax.set_xticks(xs, [KIND_NAMES[bar.kind].replace(", ", ",\n") for bar in c.bars], fontsize=9)
    ax.set_title(f"Cut off at the token cap: {c.n_truncated_passes} passed", fontsize=11)
    ax.set_ylabel("graded rollouts")


def _grader(ax: Any, picture: Any) -> None:
    """Question 0's counts: blank replies that passed, repeated replies graded both ways."""
    g = picture.grader
    names = ["blank replies\nthat passed", "blank replies\nthat failed", "repeated replies\ngraded both ways",
             "repeated replies\ngraded one way"]
    counts = [g.blank_passes, g.blank_replies - g.blank_passes, g.graded_both_ways,
              g.repeated_replies - g.graded_both_ways]
    colors = ["#d62728", "#bbbbbb", "#d62728", "#bbbbbb"]
    ax.bar(range(4), counts, color=colors, width=0.7)
    ax.set_xticks(range(4), names, fontsize=9)
    ax.set_title(f"The grader: {g.blank_passes} blank passed, {g.graded_both_ways} graded both ways", fontsize=11)
    ax.set_ylabel("replies")


def _length(ax: Any, picture: Any) -> None:
    """The pass rate by the reply's length rank within its task: flat for a grade that ignores length."""
    g = picture.grader
    bins = g.by_length
    ax.bar(range(len(bins)), [b.pass_rate or 0 for b in bins], color="#d62728" if g.length_biased else "#1f77b4",
           width=0.7)
    ax.set_xticks(range(len(bins)), [b.label.replace(" ", "\n") for b in bins], fontsize=9)
    ax.set_ylim(0, 1)
    rho = f" (rho {g.length_rho:+.2f})" if g.length_rho is not None else ""
    ax.set_title(f"Grade against length within tasks{rho}", fontsize=11)
    ax.set_ylabel("pass rate")


def _per_task(ax: Any, picture: Any) -> None:
    """Each cell of tasks (a rate before, a rate after) as a bubble its count wide, the diagonal where nothing moved."""
    from matplotlib.lines import Line2D

    t = picture.per_task
    xs = [lv.middle for lv in t.before_levels]
    ys = [lv.middle for lv in t.after_levels]
    ax.plot([0, 1], [0, 1], color="#999999", linewidth=1, linestyle="--", zorder=1)
    top = max(max(row) for row in t.counts) or 1
    for i, row in enumerate(t.counts):
        for j, count in enumerate(row):
            if count:
                side = t.side(i, j)
                ax.scatter([xs[i]], [ys[j]], s=60 + 900 * count / top, color=COLOURS[side], alpha=0.75,
                           edgecolor="white", linewidth=0.8, zorder=2)
                ax.annotate(str(count), (xs[i], ys[j]), ha="center", va="center", fontsize=8, zorder=3)
    same = " (or same bin)" if t.binned else ""
    handles = [Line2D([], [], marker="o", linestyle="", color=COLOURS[side], markersize=8,
                      label=f"{word} ({t.total(side)})")
               for side, word in (("higher", "higher after"), ("lower", "lower after"), ("same", "same" + same))]
    _legend_below(ax, handles, ncol=3)
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(-0.1, 1.12)  # room for the largest bubble at 1
    ax.set_xticks(xs, [lv.label for lv in t.before_levels], fontsize=8)
    ax.set_yticks(ys, [lv.label for lv in t.after_levels], fontsize=8)
    ax.set_title(f"Per task: pass rate before and after ({t.n_tasks} tasks)", fontsize=11)
    k = f"k = {t.k_before}" if t.k_before == t.k_after else f"k = {t.k_before} before, {t.k_after} after"
    ax.set_xlabel(f"before: mean {t.mean_before:.3f} ({k})")
    ax.set_ylabel(f"after: mean {t.mean_after:.3f}")
    ax.set_aspect("equal", adjustable="box")
    ax.spines[["top", "right"]].set_visible(False)


def _diffs(ax: Any, picture: Any) -> None:
    """Each paired difference as its mean and 95% interval on one axis, beside 0 and the registered effect."""
    d = picture.diffs
    ys = list(range(len(d.rows)))[::-1]  # after - before on top
    for y, r in zip(ys, d.rows):
        colour = COLOURS[r.reading]
        if r.ci95:
            ax.plot(r.ci95, [y, y], color=colour, linewidth=3, solid_capstyle="butt")
        ax.plot([r.mean_diff], [y], "o", color=colour, markersize=7)
        ci = f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]" if r.ci95 else "(no interval)"
        ax.annotate(f"{r.mean_diff:+.3f} {ci}", (r.mean_diff, y), xytext=(0, 7), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8, zorder=4,  # over the marked lines, on white
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    zero = ax.axvline(0, color="black", linewidth=0.8, label="0: no change")
    effect = ax.axvline(d.effect, color=EFFECT_COLOUR, linestyle=":", linewidth=1.5,
                        label=f"registered effect {d.effect:g}")
    ax.set_yticks(ys, [r.label for r in d.rows], fontsize=9)
    ax.set_ylim(-0.6, len(d.rows) - 0.3)
    lo, hi = d.span()
    pad = 0.15 * (hi - lo) or 0.05
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_title(f"Paired differences, 95% intervals ({d.n_tasks} tasks)", fontsize=11)
    ax.set_xlabel("difference in pass rate per task, averaged")
    _legend_below(ax, [zero, effect], ncol=2)
    ax.grid(axis="x", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)


def picture_png(rows: Any, verdict: Any, **kwargs: Any) -> str:
    """The verdict's picture as base64 PNG, what an MCP image block carries (kwargs: routing.pictures.route.picture's)."""
    import base64

    from pick_a_method.routing.pictures.route import picture

    require_matplotlib()  # before the picture's data is built: the error, not the work, when it is missing
    return base64.b64encode(draw(picture(rows, verdict, **kwargs), "png")).decode("ascii")
