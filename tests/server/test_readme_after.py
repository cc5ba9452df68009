"""README's "After the GPU" section stays true: the loop's commands parse as the command line takes them, the example
on the shipped fixtures prints what the section shows (each line shown whole, `...` for lines left out), and the
verdicts are listed in the order the rule weighs them."""

import re
import shlex

from rowkit import EXAMPLES

from pick_a_method.routing.after_training.rules import VERDICTS
from pick_a_method.server import cli

REPO = EXAMPLES.parent


def section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("### After the GPU: did it work?")
    return text[start:text.index("\n### ", start + 1)]


def blocks() -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"```console\n(.*?)```", section(), re.S)]


def test_the_loop_parses_as_commands():
    loop = [line[2:] for line in blocks()[0] if line.startswith("$ pick-a-method ")]
    assert [shlex.split(c)[1] for c in loop] == ["route", "after"]
    for command in loop:
        words = shlex.split(command.split("  #")[0])[1:]
        args = cli._parser().parse_args(words)
        assert args.command in ("route", "after")
    route, after = (cli._parser().parse_args(shlex.split(c)[1:]) for c in loop)
    assert route.freeze == after.frozen_path == "holdout.json"


def test_the_example_prints_what_the_readme_shows(capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # the paths are the clone's
    example = blocks()[1]
    assert example[0].startswith("$ pick-a-method after ")
    assert cli.main(shlex.split(example[0][2:])[1:]) == 0
    printed = capsys.readouterr().out.splitlines()
    at = 0
    for shown in example[1:]:
        if shown == "...":
            continue
        assert shown in printed[at:], shown  # in the order shown
        at = printed.index(shown, at) + 1


def test_the_verdicts_are_listed_in_the_rules_order():
    listed = re.findall(r"^\d\. `(\w+)`", section(), re.M)
    assert listed == list(VERDICTS)


def test_the_size_it_quotes_is_the_verdicts(monkeypatch):
    from pick_a_method import routing

    monkeypatch.chdir(REPO)
    words = shlex.split(blocks()[1][0][2:])
    v = routing.after(words[2], words[3])
    assert int(re.search(r"`sizing` says (\d+) tasks would", section())[1]) == v.sizing.n_tasks
