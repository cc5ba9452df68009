"""The skill's step 7 stays true: each call it shows is one the tools take (checked against their declared
arguments), the loop names route's freeze and `after`, and the verdicts are listed in the order the rule weighs
them."""

import ast
import re

from pick_a_method.routing.after_training.rules import VERDICTS
from pick_a_method.server.arguments import by_tool
from pick_a_method.server.skill import skill_text


def step_7() -> str:
    text = skill_text()
    return text[text.index("## 7. "):]


def test_every_call_in_step_7_is_one_the_tool_takes():
    calls = re.findall(r"`((\w+)\([^`]*\))`", step_7())
    assert [tool for _, tool in calls] == ["route", "holdout_size", "track", "after"]
    for text, tool in calls:
        call = ast.parse(text, mode="eval").body
        arguments = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        by_tool(tool).model_validate(arguments)  # a misspelt or undeclared argument raises
    route, _, _, after = (ast.parse(t, mode="eval").body for t, _ in calls)
    frozen = {k.arg: ast.literal_eval(k.value) for k in after.keywords}["frozen_path"]
    assert {k.arg: ast.literal_eval(k.value) for k in route.keywords}["freeze"] == frozen


def test_the_verdicts_are_listed_in_the_rules_order():
    listed = re.findall(r"`(\w+)` \(", step_7().split("the first that holds:")[1])
    assert listed[:len(VERDICTS)] == list(VERDICTS)


def test_the_guard_shown_is_the_pair_after_takes():
    guard = re.search(r"`guards=(\[[^`]*\])`", step_7())[1]
    a = by_tool("after").model_validate({"before_rows_path": "b", "after_rows_path": "a",
                                         "guards": ast.literal_eval(guard)})
    assert a.guards == ["math=before.jsonl,after.jsonl"]
