"""route takes its options as one model (routing.RouteOptions): the library's keywords, the tool's arguments and
the command's flags are its fields; a misspelt one is refused by name with the closest, never ignored."""

import pytest

from pick_a_method import routing
from pick_a_method.common.errors import InputError
from pick_a_method.server.rows_tools import RouteArguments


def test_a_misspelt_option_is_refused_naming_the_closest():
    rows = routing.read_rows("examples/mixed.jsonl")
    with pytest.raises(InputError, match=r"no option 'triner' \(did you mean 'trainer'\?\)"):
        routing.route(rows, "Qwen/Qwen3-8B", triner="trl")
    with pytest.raises(InputError, match="write_roots"):
        routing.route(rows, "Qwen/Qwen3-8B", write_roots=["/tmp"])  # the server's, passed as allowed_roots


def test_every_route_option_is_an_argument_of_the_tool():
    own = set(routing.RouteOptions.model_fields) - {"write_roots", "params_b"}  # params_b: the library's alone
    assert own <= set(RouteArguments.model_fields)
    rows = routing.read_rows("examples/mixed.jsonl")
    assert routing.route(rows, "Qwen/Qwen3-8B", trainer="trl").next_step.tool == "trl_config"
