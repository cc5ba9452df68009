"""Each `after` verdict's next step is one a user can take: on the command line its `next:` line parses as a command
and, its placeholders filled with rows files, runs; over MCP its tool and arguments are what that tool takes, and the
call, filled in, answers; `worse` (no call) is an instruction that names the tasks that flipped and the cut-offs."""

import json
import shlex

import numpy as np
import pytest
from mcp import Client
from rowkit import rows_from_passes

from pick_a_method.server import cli
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

BASE, TRAINED = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-r1"
CYCLE = [0, 1, 2, 3, 4, 2, 1, 3]


def passes(n, shift=0, cycle=CYCLE):
    return [min(max(cycle[i % len(cycle)] + shift, 0), 4) for i in range(n)]


def shuffled(n):
    return np.random.default_rng(0).permutation(passes(n)).tolist()


OBSERVED = [[1, 3, 2, 2, 2, 2, 1, 3, 2, 2][i % 10] for i in range(400)]  # +0.025 a task: between 0 and 0.05
# verdict -> the arms' passes of 4 (before, after, and a control where one decides)
CASES = {
    "proven": {"before": passes(200), "after": passes(200, 2)},
    "worse": {"before": passes(200), "after": passes(200, -2)},
    "no_gain": {"before": passes(800), "after": shuffled(800)},
    "underpowered": {"before": passes(24), "after": passes(24, 0, cycle=[1, 0, 2, 4, 3, 2, 1, 3])},
    "underpowered_tasks": {"before": OBSERVED, "after": [OBSERVED[i] + [1, -1, 1, -1, 2, -2, 1, -1, 1, 0][i % 10]
                                                          for i in range(400)]},
    "contamination": {"before": passes(200), "after": passes(200, 1), "random_reward": passes(200, 1)},
    "selection_problem": {"before": passes(200), "after": passes(200, 1), "random_selection": passes(200, 1)},
    "not_comparable": {"before": passes(200), "after": passes(60, 1)},
}
FLAGS = {"random_reward": "--random-reward", "random_selection": "--random-selection"}


def files(tmp_path, case):
    """The case's arms as rows files; not_comparable's after arm scored other tasks."""
    out = {}
    for name, counts in CASES[case].items():
        prefix = "u" if case == "not_comparable" and name == "after" else "t"
        rows = rows_from_passes(counts, k=4, model=BASE if name == "before" else TRAINED, prefix=prefix)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out[name] = str(path)
    return out


def filled(word, arms):
    """A placeholder as a user fills it: an arm's rows file, a guard suite of two rows files."""
    if word == "<name>=<before_rows>,<after_rows>":
        return f"general={arms['before']},{arms['after']}"
    if word.startswith("<") and word.endswith(">"):
        name = word[1:-1].removesuffix("_rows_path")
        return arms.get(name, arms["before"])  # route's <rows_path>: the base's rows
    return word


def command(arms):
    words = ["after", arms["before"], arms["after"]]
    for name, flag in FLAGS.items():
        if name in arms:
            words += [flag, arms[name]]
    return words


@pytest.mark.parametrize("case", list(CASES))
def test_the_next_line_parses_and_filled_in_runs(case, tmp_path, capsys):
    arms = files(tmp_path, case)
    assert cli.main(command(arms) + ["--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["verdict"] == case.removesuffix("_tasks"), verdict["summary"]
    assert cli.main(command(arms)) == 0
    lines = capsys.readouterr().out.splitlines()
    nxt = next(line for line in lines if line.startswith("next: "))[len("next: "):]
    if case == "worse":  # no call: roll back, and what to read
        assert verdict["next_step"]["tool"] is None
        assert nxt.startswith("Roll back to the base checkpoint (after - before ") and "flipped pass -> fail (e.g. t" \
            in nxt and "the share cut off at the token cap is unchanged (0.0%)" in nxt
        return
    words = shlex.split(nxt)
    assert words[0] == "pick-a-method"
    args = cli._parser().parse_args(words[1:])  # the line as printed parses
    assert args.command == verdict["next_step"]["tool"].replace("_", "-")
    needs = verdict["next_step"]["needs"]
    placeholders = [w for w in words if w.startswith("<") or "=<" in w]
    assert len(placeholders) == len(needs) and next(line for line in lines if line.startswith("      fill in: "))
    run = cli._parser().parse_args([filled(w, arms) for w in words[1:]])
    answered = cli._run_command(run)
    assert answered.verdict and answered.next_step is not None


def test_each_verdicts_step_says_what_the_rows_must_hold(tmp_path, capsys):
    said = {}
    for case in CASES:
        (tmp_path / case).mkdir()
        arms = files(tmp_path / case, case)
        assert cli.main(command(arms) + ["--json"]) == 0
        said[case] = json.loads(capsys.readouterr().out)
    step = {case: v["next_step"] for case, v in said.items()}
    assert step["proven"]["arguments"]["guards"] == ["<name>=<before_rows>,<after_rows>"]
    assert step["proven"]["arguments"]["after_rows_path"].endswith("after.jsonl")  # this checkpoint's guards first
    assert "second training seed" in step["proven"]["why"]
    sized = said["underpowered"]["sizing"]
    assert step["underpowered"]["needs"] == [f"{a}_rows_path (re-scored at k={sized['k_needed']})"
                                             for a in ("before", "after")]
    assert f"or on {sized['n_tasks']} held-out tasks at k=4" in step["underpowered"]["why"]
    sized = said["underpowered_tasks"]["sizing"]
    assert sized["k_needed"] is None and step["underpowered_tasks"]["needs"] == [
        f"{a}_rows_path (scored on {sized['n_tasks']} held-out tasks at k=4)" for a in ("before", "after")]
    assert all(n.endswith("(on a clean held-out set)") for n in step["contamination"]["needs"])
    assert "random_reward_rows_path" in step["contamination"]["arguments"]
    assert "clean held-out set" in step["contamination"]["why"]
    assert step["selection_problem"]["arguments"]["random_selection_rows_path"].endswith("random_selection.jsonl")
    assert step["selection_problem"]["needs"] == ["after_rows_path (a checkpoint trained on all the training tasks, "
                                                  "or with the reward fixed)"]
    assert step["no_gain"]["tool"] == "route" and step["no_gain"]["arguments"]["model"] == BASE
    assert "fewer than half" in step["not_comparable"]["why"]
    assert step["worse"]["arguments"]["pass_to_fail"] == said["worse"]["flips"]["pass_to_fail_tasks"]


@pytest.mark.parametrize("case", [c for c in CASES if c != "worse"])
async def test_over_mcp_the_step_filled_in_is_a_call_the_tool_takes(case, tmp_path):
    arms = files(tmp_path, case)
    given = {f"{name}_rows_path": path for name, path in arms.items()}
    async with Client(create_server(ServerOptions(roots=(tmp_path,), write_roots=(tmp_path,)))) as c:
        first = await c.call_tool("after", given)
        assert not first.is_error, first.content[0].text
        step = first.structured_content["next_step"]
        arguments = {k: ([filled(w, arms) for w in v] if isinstance(v, list) and k == "guards" else
                         filled(v, arms) if isinstance(v, str) else v) for k, v in step["arguments"].items()}
        again = await c.call_tool(step["tool"], arguments)
    assert not again.is_error, again.content[0].text
    assert again.structured_content["verdict"]
