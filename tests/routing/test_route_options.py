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


def test_a_value_of_the_wrong_kind_is_refused_naming_the_option_not_a_pydantic_dump():
    rows = routing.read_rows("examples/mixed.jsonl")
    with pytest.raises(InputError, match=r"route's option trainer='deepspeed': .*'prime-rl', 'trl' or 'verl'") as e:
        routing.route(rows, "Qwen/Qwen3-8B", trainer="deepspeed")
    assert e.value.field == "trainer"
    with pytest.raises(InputError, match=r"route's option effect=2: .*less than 1") as e:
        routing.route(rows, "Qwen/Qwen3-8B", effect=2)
    assert e.value.field == "effect"


def test_the_tools_arguments_are_routes_options_plus_the_rows_declared_nowhere_else():
    own = {"rows", "rows_path", "teacher_rows", "teacher_rows_path", "fields", "picture"}
    assert set(RouteArguments.model_fields) == set(routing.RouteOptions.model_fields) | own
    for klass in RouteArguments.__mro__:  # no class of the server's declares an option again
        if klass is not routing.RouteOptions and "clis" in vars(klass):
            assert not set(vars(klass).get("__annotations__", {})) & set(routing.RouteOptions.model_fields)
            assert set(vars(klass)["clis"]) <= set(routing.RouteOptions.model_fields)
    for name, field in routing.RouteOptions.model_fields.items():  # the same type, default, bounds, description
        listed = RouteArguments.model_fields[name]
        assert (listed.annotation, listed.default, listed.metadata, listed.description) == (
            field.annotation, field.default, field.metadata, field.description), name


def test_every_route_option_is_an_argument_of_the_tool():
    assert set(routing.RouteOptions.model_fields) <= set(RouteArguments.model_fields)
    rows = routing.read_rows("examples/mixed.jsonl")
    assert routing.route(rows, "Qwen/Qwen3-8B", trainer="trl").next_step.tool == "trl_config"
