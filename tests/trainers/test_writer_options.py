"""Each config writer's options are declared once, in its options model (trainers/<trainer>/options.py): the library
call goes through it, and the tool's arguments derive from it, adding only the command line's spelling and the
server's own arguments. A writer option declared again by hand in server/ fails here."""

from __future__ import annotations

import inspect

import pytest

from pick_a_method.common.errors import InputError
from pick_a_method.server.arguments import served
from pick_a_method.server.declare import Arguments, cli_of
from pick_a_method.server.writer_tools import (PrimeRlConfigArguments, TrlConfigArguments, VerlConfigArguments,
                                               WriterArguments)
from pick_a_method.trainers.options import WriterOptions
from pick_a_method.trainers.prime_rl import PrimeRlOptions, prime_rl_config
from pick_a_method.trainers.trl import TrlOptions, trl_config
from pick_a_method.trainers.verl import VerlOptions, verl_config

MODEL = "Qwen/Qwen3-8B"
# What a writer's tool takes that its writer does not: the tokenizers the server compares (into the writer's
# tokenizers_match), and prime-rl's GPU and node splits (the listing shows a count as one integer).
SERVER_ONLY = {"teacher_tokenizer", "student_tokenizer"}
SPLITS = {"inference_gpus", "trainer_gpus", "inference_nodes", "trainer_nodes"}
# (the tool's arguments, the options model, the server's own arguments, the writer, its positional arguments)
WRITERS = [(PrimeRlConfigArguments, PrimeRlOptions, SERVER_ONLY | SPLITS, prime_rl_config,
            {"taskset": "reverse-text", "method": "grpo"}),
           (TrlConfigArguments, TrlOptions, SERVER_ONLY, trl_config, {"method": "grpo"}),
           (VerlConfigArguments, VerlOptions, SERVER_ONLY, verl_config, {"method": "grpo"})]
IDS = ["prime-rl", "trl", "verl"]


def test_every_writer_tool_is_listed_here():
    assert {m for m in served() if issubclass(m, WriterArguments)} == {w[0] for w in WRITERS}


@pytest.mark.parametrize(("tool", "options", "own", "writer", "positional"), WRITERS, ids=IDS)
def test_a_tools_arguments_are_its_options_plus_the_servers_own(tool, options, own, writer, positional):
    assert tool.options() is options
    assert set(tool.model_fields) == set(options.model_fields) | own
    for klass in tool.__mro__:  # no class of the server's declares an option again (a field of its own)
        if issubclass(klass, Arguments):
            assert not set(vars(klass).get("__annotations__", {})) & set(options.model_fields), klass.__name__
    for name, field in options.model_fields.items():  # the same type, default, bounds and description
        listed = tool.model_fields[name]
        assert (listed.annotation, listed.default, listed.metadata, listed.description) == (
            field.annotation, field.default, field.metadata, field.description), name


@pytest.mark.parametrize(("tool", "options", "own", "writer", "positional"), WRITERS, ids=IDS)
def test_the_command_lines_spelling_names_only_real_arguments(tool, options, own, writer, positional):
    for klass in tool.__mro__:
        assert set(vars(klass).get("clis", {})) <= set(tool.model_fields), klass.__name__
    for name in positional:
        assert cli_of(tool, name).positional, name


@pytest.mark.parametrize(("tool", "options", "own", "writer", "positional"), WRITERS, ids=IDS)
def test_the_library_call_takes_the_options_and_names_a_misspelt_one(tool, options, own, writer, positional):
    params = inspect.signature(writer).parameters
    assert list(params)[: len(positional)] == list(positional)  # called as always: prime_rl_config(taskset, method)
    for name, field in options.model_fields.items():  # help() and inspect show every option with its default
        if name not in positional:
            assert params[name].default == (None if field.is_required() else field.default), name
    assert {"allowed_roots", "tokenizers_match"} <= set(params)
    with pytest.raises(InputError, match=r"takes no option 'step' \(did you mean 'steps'\?\)"):
        writer(*positional.values(), model=MODEL, step=10)
    with pytest.raises(ValueError, match="model is required"):
        writer(*positional.values())
    assert writer(*positional.values(), model=MODEL).model == MODEL


def test_the_shared_options_are_declared_on_the_base_only():
    shared = set(WriterOptions.model_fields)
    for options in (PrimeRlOptions, TrlOptions, VerlOptions):
        assert not set(vars(options).get("__annotations__", {})) & shared, options.__name__
