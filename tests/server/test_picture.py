"""The picture for people and agents: the sketch under the verdict (no escape codes off a terminal), --plot's PNG
and SVG (decoded, parsed; never over an existing file without --overwrite), the MCP image block beside the same
structured verdict, and without matplotlib an error that names the [plot] extra and the line to run."""

import base64
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from mcp import Client
from PIL import Image

import numpy as np
from rowkit import EXAMPLES, MODEL, rows_from_passes
from pick_a_method import routing
from pick_a_method.routing.pictures.route import picture
from pick_a_method.server import cli, plot
from pick_a_method.server.app import create_server
from pick_a_method.server.sketch import sketch, wants_colour

MIXED, STUDENT, TEACHER = (str(EXAMPLES / f) for f in ("mixed.jsonl", "student.jsonl", "teacher_strong.jsonl"))
INSPECT = EXAMPLES.parent / "tests" / "fixtures" / "eval_tools" / "inspect_ai"
BEFORE, AFTER = (str(INSPECT / folder / "0.3.285" / "standin_sums.eval") for folder in (".", "trained"))
# matplotlib made unimportable, as on the light install (find_spec then answers None, and an import fails)
NO_MATPLOTLIB = "import sys\nsys.modules['matplotlib'] = None\n"


def decoded(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()  # the whole file, not only its header
    assert image.format == "PNG" and 500 <= image.width <= 2400 and 400 <= image.height <= 900, image.size
    return image


def run_cli(*args, code=""):
    return subprocess.run([sys.executable, "-c", code + "import sys\nfrom pick_a_method.server.cli import main\n"
                           "sys.exit(main(sys.argv[1:]))", *args], capture_output=True, text=True, timeout=120)


# -- the sketch -------------------------------------------------------------------------------------------------


def test_the_sketch_prints_under_the_verdict_with_no_escape_codes_off_a_terminal():
    out = run_cli("route", MIXED, "--model", MODEL)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "\x1b" not in text
    sketch_at = text.index("pass rate per task (80 tasks, 8 rollouts each):")
    assert sketch_at > text.index("grpo: Mixed")  # under the verdict
    assert "█" in text and "<- advised, now" in text and "split share against k" in text
    # the bars' counts are the band's
    lines = text[sketch_at:].splitlines()
    assert lines[1].split()[:2] == ["0", "all"] and lines[1].split()[-1] == "12"
    assert lines[9].split()[:3] == ["1", "all", "pass"] and lines[9].split()[-1] == "11"
    assert sum(int(line.split()[-1]) for line in lines[2:9]) == 57


def test_colour_only_when_asked_and_never_for_a_pipe(monkeypatch):
    rows = routing.read_rows(MIXED)
    p = picture(rows, routing.band(rows))
    assert "\x1b[" in sketch(p, colour=True) and "\x1b" not in sketch(p, colour=False)
    assert sketch(p, colour=True).replace("\x1b[31m", "").replace("\x1b[32m", "").replace("\x1b[34m", "").replace(
        "\x1b[0m", "") == sketch(p, colour=False)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert wants_colour(Terminal()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Terminal())


def test_the_teacher_sketch_and_json_keep_stdout_clean(tmp_path, capsys):
    assert cli.main(["teacher-clears", TEACHER, STUDENT]) == 0
    text = capsys.readouterr().out
    assert "teacher minus student per shared task (48 tasks; mean +0.234" in text and "teacher ahead" in text
    out = tmp_path / "t.png"
    assert cli.main(["band", MIXED, "--json", "--plot", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] == "mixed"  # stdout is the verdict alone
    assert f"picture: wrote {out}" in captured.err
    decoded(out.read_bytes())


# -- --plot -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["route", MIXED, "--model", MODEL],
    ["route", STUDENT, "--model", MODEL, "--teacher-rows", TEACHER],
    ["band", str(EXAMPLES / "floor.jsonl")],
    ["pass-at", str(EXAMPLES / "saturated.jsonl")],
    ["teacher-clears", TEACHER, STUDENT],
    ["after", BEFORE, AFTER, "--random-selection", BEFORE],
])
def test_plot_writes_a_png_that_decodes(command, tmp_path, capsys):
    out = tmp_path / "band.png"
    assert cli.main([*command, "--plot", str(out)]) == 0
    assert f"picture: wrote {out}" in capsys.readouterr().out
    image = decoded(out.read_bytes())
    wide = 3 if "--teacher-rows" in command else 1 if command[0] == "teacher-clears" else 2
    assert image.width > image.height * (wide * 0.9)  # one panel a picture part, side by side


def test_plot_writes_an_svg_that_parses(tmp_path, capsys):
    out = tmp_path / "band.svg"
    assert cli.main(["band", MIXED, "--plot", str(out)]) == 0
    root = ET.fromstring(out.read_bytes())
    assert root.tag.endswith("svg")
    text = out.read_text()
    assert "Pass rate per task" in text and "Split share against k" in text  # titles kept as text


def test_plot_never_replaces_a_file_without_overwrite(tmp_path, capsys):
    out = tmp_path / "band.png"
    out.write_text("keep me")
    assert cli.main(["band", MIXED, "--plot", str(out)]) == 2
    err = capsys.readouterr()
    assert "already exists" in err.err and "--overwrite" in err.err and err.out == ""
    assert out.read_text() == "keep me"
    assert cli.main(["band", MIXED, "--plot", str(out), "--overwrite"]) == 0
    decoded(out.read_bytes())
    assert [p.name for p in tmp_path.iterdir()] == ["band.png"]  # no temporary file left behind


def test_plot_names_the_flag_for_a_wrong_suffix_or_folder(tmp_path, capsys):
    assert cli.main(["band", MIXED, "--plot", str(tmp_path / "band.jpg")]) == 2
    assert "--plot must end in .png or .svg" in capsys.readouterr().err
    assert cli.main(["band", MIXED, "--plot", str(tmp_path / "nope" / "band.png")]) == 2
    assert "for --plot does not exist" in capsys.readouterr().err
    assert cli.main(["--allow-write", str(tmp_path / "inside"), "band", MIXED, "--plot",
                     str(tmp_path / "band.png")]) == 2
    assert "outside the folders" in capsys.readouterr().err and not (tmp_path / "band.png").exists()


# -- MCP --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool, args", [
    ("band", {"rows_path": MIXED}),
    ("pass_at", {"rows_path": MIXED}),
    ("route", {"rows_path": STUDENT, "teacher_rows_path": TEACHER, "model": MODEL}),
    ("teacher_clears", {"teacher_rows_path": TEACHER, "student_rows_path": STUDENT}),
    ("after", {"before_rows_path": BEFORE, "after_rows_path": AFTER}),
])
async def test_picture_true_adds_a_png_beside_the_same_structured_verdict(tool, args):
    async with Client(create_server()) as c:
        plain = await c.call_tool(tool, args)
        pictured = await c.call_tool(tool, {**args, "picture": True})
    assert not plain.is_error and not pictured.is_error, pictured.content[0]
    assert pictured.structured_content == plain.structured_content
    assert [b.type for b in plain.content] == ["text"]
    assert [b.type for b in pictured.content] == ["text", "image"]
    assert pictured.content[0].text == plain.content[0].text
    image = pictured.content[1]
    assert image.mime_type == "image/png"
    decoded(base64.b64decode(image.data))


# -- without matplotlib -----------------------------------------------------------------------------------------


def test_without_matplotlib_the_error_names_the_extra_and_the_line(tmp_path):
    out = run_cli("band", MIXED, "--plot", str(tmp_path / "band.png"), code=NO_MATPLOTLIB)
    assert out.returncode == 2 and out.stdout == ""
    from pick_a_method.server.extras import plot_install  # this interpreter's pip, the [plot] extra's range

    assert "[plot] extra" in out.stderr and plot_install() in out.stderr, out.stderr
    assert "pip install -c constraints.txt '.[plot]'" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "band.png").exists()
    plain = run_cli("band", MIXED, code=NO_MATPLOTLIB)  # the sketch needs no matplotlib
    assert plain.returncode == 0 and "pass rate per task" in plain.stdout
    mcp = subprocess.run([sys.executable, "-c", NO_MATPLOTLIB + (
        "import anyio\nfrom mcp import Client\nfrom pick_a_method.server.app import create_server\n"
        "async def main():\n"
        "    async with Client(create_server()) as c:\n"
        f"        r = await c.call_tool('band', {{'rows_path': {MIXED!r}, 'picture': True}})\n"
        "        assert r.is_error, r\n"
        "        print(r.content[0].text)\n"
        "anyio.run(main)\n")], capture_output=True, text=True, timeout=120)
    assert mcp.returncode == 0, mcp.stderr[-2000:]
    assert "[plot] extra" in mcp.stdout and plot_install() in mcp.stdout


def test_a_fault_in_the_sketch_never_costs_the_verdict(capsys, monkeypatch):
    """Without --plot the sketch is an aid: if drawing it fails, the verdict still prints and the command succeeds."""
    from pick_a_method.routing.pictures import route as picture_module
    from pick_a_method.server import cli

    def broken(*args, **kwargs):
        raise ValueError("a case the picture does not handle")

    monkeypatch.setattr(picture_module, "picture", broken)
    assert cli.main(["band", MIXED]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mixed:") and "(no picture: ValueError: a case the picture does not handle)" in out


def test_the_sketch_shows_the_measured_share_at_the_rows_own_k_and_the_prediction_beside_it():
    rows = routing.read_rows(MIXED)  # 80 tasks x 8: 71% split, the prior predicts 74% for a fresh draw at k=8
    lines = sketch(picture(rows, routing.route(rows, MODEL), model=MODEL)).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("split share against k"))
    assert lines[head] == "split share against k (predicted for a fresh draw of k rollouts per task):"
    now = next(line for line in lines if "<- advised, now" in line)
    assert now.split()[0] == "k=8" and "71% measured (74% predicted)" in now
    assert sum("71%" in line for line in lines) == 1 and not any("74%  <-" in line for line in lines)


def test_the_figure_labels_the_measurement_and_what_the_curve_is_for():
    rows = routing.read_rows(MIXED)
    curve = plot.figure(picture(rows, routing.band(rows))).axes[1]
    labels = [t.get_text() for t in curve.get_legend().get_texts()]
    assert "predicted for a fresh draw of k rollouts per task" in labels
    assert "measured at k=8: 71% (predicted 74%)" in labels


# -- readable at a glance: every picture kind, laid out ---------------------------------------------------------

TOOLS = EXAMPLES.parent / "tests" / "fixtures" / "eval_tools"


def kinds():
    """Every kind of picture: each route the examples give, band, pass_at, teacher_clears alone (one narrow panel
    under a long title) and beside a band, two arms, a run folder named by its version."""
    def read(path, **fields):
        return routing.read_rows(path, fields=fields or None)

    out = {}
    for name in ("mixed", "floor", "saturated", "cut_off", "one_per_prompt", "two_checkpoints", "off_policy"):
        rows = read(EXAMPLES / f"{name}.jsonl")
        out[f"route {name}"] = (rows, routing.route(rows, MODEL), {"model": MODEL})
    rows = read(EXAMPLES / "correct_two_arms.jsonl", reward="correct")
    out["pass_at two arms"] = (rows, routing.pass_at(rows), {})
    out["band floor"] = (read(EXAMPLES / "floor.jsonl"), routing.band(read(EXAMPLES / "floor.jsonl")), {})
    student, strong, weak = (read(EXAMPLES / f"{n}.jsonl") for n in ("student", "teacher_strong", "teacher_weak"))
    out["teacher_clears"] = (student, routing.teacher_clears(weak, student), {"teacher_rows": weak})
    out["route with a teacher"] = (student, routing.route(student, MODEL, teacher_rows=strong),
                                   {"model": MODEL, "teacher_rows": strong})
    for tool in ("verl/0.9.1", "inspect_ai/0.3.285", "lm_eval/0.4.13/repeats"):
        rows = read(TOOLS / tool)
        out[f"route {tool}"] = (rows, routing.route(rows), {})
    before, trained = read(BEFORE), read(AFTER)  # after: files the real eval tool wrote, two policies
    out["after inspect"] = (before, routing.after(before, trained), {"after_rows": trained})
    base, r1 = (read(TOOLS / "verifiers" / f / "0.3.1") for f in (".", "trained"))
    out["after verifiers, a control"] = (base, routing.after(base, r1, random_selection=base), {"after_rows": r1})
    other = read(EXAMPLES / "student.jsonl")  # other tasks, no prompts: nothing pairs them (an inspect log pairs
    out["after not comparable"] = (before, routing.after(before, other), {"after_rows": other})  # a vf-eval's)
    out["after binned, controls and guards"] = after_binned()
    return out


def after_binned():
    """300 tasks at k=16 (the rates binned), both controls and two guards: the longest labels and the most rows."""
    rng = np.random.default_rng(0)
    arm = lambda p, model, n=300, k=16: rows_from_passes(rng.binomial(k, p, n).tolist(), k=k, model=model)  # noqa
    before, trained = arm(0.5, "Qwen/Qwen2.5-Math-7B"), arm(0.6, "acme/Qwen2.5-Math-7B-grpo-seed1")
    g0, g1, g2 = arm(0.5, "b", 100, 4), arm(0.5, "a", 100, 4), arm(0.5, "a", 100, 4)
    v = routing.after(before, trained, random_reward=arm(0.58, "rr"), random_selection=arm(0.52, "rs"),
                      guards={"mmlu": (g0, g1), "safety": (g0, g2)})  # the same rows twice would not compare
    return before, v, {"after_rows": trained}


KINDS = kinds()


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_text_and_legend_lies_inside_the_figure_and_no_legend_covers_the_data(kind):
    rows, verdict, kwargs = KINDS[kind]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plot.figure(picture(rows, verdict, **kwargs))
    renderer = FigureCanvasAgg(fig).get_renderer()  # what the PNG is drawn with
    inside = fig.bbox.padded(1)
    title, caption = fig._suptitle, fig.texts[-1]
    for text in (title, caption):  # the title and caption fit the figure's width, however narrow
        box = text.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, (
            text.get_text(), box, fig.bbox)
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0, (kind, box)
        # nothing the axes draw (bars, curve, the measured marker, the marked lines) lies under the legend
        assert not box.overlaps(ax.get_window_extent(renderer)), (kind, ax.get_title())
        assert not box.overlaps(caption.get_window_extent(renderer))
        for other in fig.axes:
            assert not box.overlaps(other.xaxis.label.get_window_extent(renderer))
    assert not title.get_window_extent(renderer).overlaps(caption.get_window_extent(renderer))
    for ax in fig.axes:  # the panel titles under the figure's
        assert not ax.title.get_window_extent(renderer).overlaps(title.get_window_extent(renderer))


def test_the_narrow_teacher_picture_wraps_its_title_rather_than_clip_it():
    rows, verdict, kwargs = KINDS["teacher_clears"]
    p = picture(rows, verdict, **kwargs)
    fig = plot.figure(p)
    assert fig.bbox.width == 572 and len(p.title) > 55  # 13-point bold: wider than 572 pixels on one line
    assert "\n" in fig._suptitle.get_text() and fig._suptitle.get_text().replace("\n", " ") == p.title
    rows, verdict, kwargs = KINDS["route mixed"]
    assert "\n" not in plot.figure(picture(rows, verdict, **kwargs))._suptitle.get_text()  # wide enough: one line


def test_the_cut_off_picture_draws_the_cut_off_passes_not_the_rates_truncation_decides():
    rows, verdict, kwargs = KINDS["route cut_off"]
    assert verdict.route == "fix_reward" and verdict.methods == []
    p = picture(rows, verdict, **kwargs)
    assert p.band is None and p.paired is None and "()" not in p.caption
    assert p.caption.startswith("Route: fix_reward. 18 of 18 replies cut off at the token cap passed")
    assert "so they are not drawn" in p.caption
    q1 = next(t for t in verdict.trace if t.name == "truncated_passes").evidence
    bars = {b.kind: b.count for b in p.cut_off.bars}
    assert bars["cut_passed"] == p.cut_off.n_truncated_passes == q1["count"]
    assert bars["cut_passed"] + bars["cut_failed"] == q1["truncated_rows"]
    assert sum(bars.values()) == q1["rows_stating_truncation"]
    fig = plot.figure(p)
    assert [ax.get_title() for ax in fig.axes] == ["Cut off at the token cap: 18 passed"]
    text = sketch(p)
    assert "cut off, passed" in text and "split share" not in text and "pass rate per" not in text


@pytest.mark.parametrize("path, title", [("verl/0.9.1", "verl/0.9.1: route grpo"),
                                         ("verl/0.9.1/1.jsonl", "0.9.1/1.jsonl: route grpo"),
                                         ("verifiers/0.3.1/results.jsonl", "results.jsonl: route fix_reward")])
def test_a_title_names_a_folder_with_its_parent(path, title):
    rows = routing.read_rows(TOOLS / path)
    assert picture(rows, routing.route(rows)).title == title


# -- after ------------------------------------------------------------------------------------------------------


def test_the_after_picture_shows_the_verdicts_own_numbers():
    rows, verdict, kwargs = KINDS["after inspect"]
    p = picture(rows, verdict, **kwargs)
    assert p.title == "acme/Qwen3-8B-r1 vs Qwen/Qwen3-8B: proven (not yet attributed: no control arm)"
    assert p.band is None and p.paired is None
    t = p.per_task
    assert sum(map(sum, t.counts)) == t.n_tasks == verdict.n_tasks == 10 and t.k_before == t.k_after == 4
    assert [lv.label for lv in t.before_levels] == ["0", "1/4", "2/4", "3/4", "1"]
    assert (t.total("higher"), t.total("lower"), t.total("same")) == (verdict.flips.up, verdict.flips.down,
                                                                       verdict.flips.same)
    assert t.mean_before == pytest.approx(verdict.arms[0].pass_at_1)
    row = p.diffs.rows[0]
    assert (row.label, row.mean_diff, row.ci95, row.reading) == ("after - before", verdict.paired.mean_diff,
                                                                 verdict.paired.ci95, "above_0")
    assert p.caption.startswith("Proven: after - before +0.275 [+0.050, +0.455] lies above 0. 10 tasks: 7 higher")
    fig = plot.figure(p)
    assert [ax.get_title() for ax in fig.axes] == ["Per task: pass rate before and after (10 tasks)",
                                                   "Paired differences, 95% intervals (10 tasks)"]
    text = sketch(p)
    assert "pass rate per task, before (rows) against after (columns) (10 tasks, k=4):" in text
    assert "  7 higher after, 1 lower, 2 the same; 1 fail -> pass, 0 pass -> fail" in text
    assert "after - before  " in text and "+0.275 [+0.050, +0.455]" in text


def test_the_after_picture_lists_each_control_and_guard_and_bins_what_is_no_small_j_over_k():
    rows, verdict, kwargs = KINDS["after binned, controls and guards"]
    p = picture(rows, verdict, **kwargs)
    assert [r.label for r in p.diffs.rows] == [
        "after - before", "after - random_selection", "random_selection - before", "after - random_reward",
        "random_reward - before", "guard mmlu: after - before", "guard safety: after - before"]
    assert p.diffs.rows[4].ci95 == verdict.random_reward.gain.ci95 and p.diffs.rows[4].reading == "above_0"
    assert p.diffs.rows[5].ci95 == verdict.guards[0].tested_ci  # at the level Holm tested it
    assert p.per_task.binned and [lv.label for lv in p.per_task.after_levels] == ["0", "0-.25", ".25-.50",
                                                                                 ".50-.75", ".75-1", "1"]
    assert "(or in the same bin)" in p.caption and sum(map(sum, p.per_task.counts)) == 300


def test_arms_not_comparable_draw_nothing_and_say_why():
    rows, verdict, kwargs = KINDS["after not comparable"]
    p = picture(rows, verdict, **kwargs)
    assert verdict.verdict == "not_comparable" and p.per_task is None and p.diffs is None
    assert p.caption.startswith("Not comparable: the arms share 0 of the 58 tasks") and "Nothing is drawn" in p.caption
    assert sketch(p) == ""


def test_the_after_sketch_prints_under_the_verdict():
    out = run_cli("after", BEFORE, AFTER)
    assert out.returncode == 0, out.stderr
    assert out.stdout.index("pass rate per task, before (rows) against after") > out.stdout.index("proven: ")
    assert "paired differences with 95% intervals over 10 tasks" in out.stdout and "\x1b" not in out.stdout
