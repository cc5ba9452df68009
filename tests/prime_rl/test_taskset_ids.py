"""Taskset ids of every legal form give sources prime-rl can write.

prime-rl's write_subconfigs (src/prime_rl/entrypoints/rl.py:110 at 559b44772) writes one file per source,
configs/envs/<train|eval>/<source name>.json; a source without a name is named after its id, and an
`owner/name@version` id then names a folder that does not exist. The checker here (primerl_schema_table.
env_file_errors) carries that rule independently of the writer's."""

from __future__ import annotations

import pytest

from primerl_schema_table import check as table_check
from primerl_schema_table import env_file_errors
from pick_a_method.trainers.prime_rl import prime_rl_config

MODEL = "Qwen/Qwen3-8B"


def sources(res, part):
    return res.config["orchestrator"][part]["source"]


@pytest.mark.parametrize(("taskset", "name"), [
    ("reverse-text", "reverse-text"), ("someone/their-taskset@0.1.2", "their-taskset"),
    ("my.org/tasks_v2@2.0.0-rc.1", "tasks_v2"), ("owner/name", "name"), ("name@1.0", "name"), ("agg", "agg-taskset"),
])
def test_each_source_is_named_after_the_name_part_and_keeps_the_id(taskset, name):
    res = prime_rl_config(taskset, "grpo", model=MODEL)
    for part in ("train", "eval"):
        (src,) = sources(res, part)
        assert src["name"] == name and src["env"]["taskset"]["id"] == taskset
    assert table_check(res.config) == []


def test_the_checker_catches_what_write_subconfigs_cannot_write():
    res = prime_rl_config("someone/their-taskset@0.1.2", "grpo", model=MODEL)
    broken = res.config | {"orchestrator": {**res.config["orchestrator"],
                                            "train": {**res.config["orchestrator"]["train"],
                                                      "source": [{"env": {"taskset": {"id": "someone/x@1"}}}]}}}
    assert env_file_errors(broken) == ["orchestrator.train.source[0].name: 'someone/x@1' is not one file name under "
                                       "configs/envs/train/ (write_subconfigs)"]
    assert any("write_subconfigs" in e for e in table_check(broken))
    assert env_file_errors({"orchestrator": {"eval": {"source": [{"name": ".."}, {"name": "a" * 251}]}}}) == [
        "orchestrator.eval.source[0].name: '..' is not one file name under configs/envs/eval/ (write_subconfigs)",
        f"orchestrator.eval.source[1].name: {'a' * 251!r} is not one file name under configs/envs/eval/ "
        "(write_subconfigs)"]


def test_eval_taskset_and_a_split_with_a_slash_give_a_file_name():
    res = prime_rl_config("reverse-text", "grpo", model=MODEL, eval_taskset="someone/held-out@1.0",
                          eval_split={"dataset_name": "x/y"})
    (src,) = sources(res, "eval")
    assert src["name"] == "held-out-x-y"
    assert src["env"]["taskset"] == {"id": "someone/held-out@1.0", "dataset_name": "x/y"}
    assert table_check(res.config) == []
    plain = prime_rl_config("gsm8k", "grpo", model=MODEL, eval_taskset="x/y@1.0")
    assert sources(plain, "eval")[0]["name"] == "y" and table_check(plain.config) == []


def test_a_hub_id_of_a_bundled_taskset_reads_its_table():
    # verifiers imports 'someone/reverse-text@2.0' as the module reverse_text: the bundled taskset's keys apply
    res = prime_rl_config("someone/reverse-text@2.0", "grpo", model=MODEL, eval_split="test")
    assert sources(res, "eval")[0]["env"]["taskset"]["dataset_split"] == "test"
    with pytest.raises(ValueError, match="'split' is not a key of the 'reverse-text' taskset"):
        prime_rl_config("someone/reverse-text@2.0", "grpo", model=MODEL, eval_split={"split": "test"})


def test_sources_an_override_adds_are_named_and_de_duplicated():
    extra = [{"env": {"taskset": {"id": "a/gsm8k@1"}}}, {"env": {"taskset": {"id": "b/gsm8k@2"}}}]
    res = prime_rl_config("gsm8k", "grpo", model=MODEL,
                          overrides={"orchestrator.train.source": [{"name": "gsm8k", "env": {"taskset": {"id": "gsm8k"}}},
                                                                   *extra]})
    assert [s["name"] for s in sources(res, "train")] == ["gsm8k", "gsm8k-2", "gsm8k-3"]
    assert [s["env"]["taskset"]["id"] for s in sources(res, "train")] == ["gsm8k", "a/gsm8k@1", "b/gsm8k@2"]
    assert any("'a/gsm8k@1' is not a file name" in n for n in res.notes)
    assert table_check(res.config) == []


def test_a_name_that_is_a_path_is_refused_with_the_fix_and_the_fix_loads():
    with pytest.raises(ValueError, match="write_subconfigs") as err:
        prime_rl_config("gsm8k", "grpo", model=MODEL, overrides={"orchestrator.train.source.0.name": "mine/gsm8k"})
    fix = str(err.value).split("Fix: set ", 1)[1]
    key, value = (part.strip() for part in fix.split(" = ", 1))
    res = prime_rl_config("gsm8k", "grpo", model=MODEL, overrides={key: value.split("'")[1]})
    assert sources(res, "train")[0]["name"] == "gsm8k" and table_check(res.config) == []


def test_adding_a_source_by_index_says_how():
    with pytest.raises(ValueError, match=r"to add one, give the whole list\. Fix: overrides=\{'orchestrator.train.source'"):
        prime_rl_config("gsm8k", "grpo", model=MODEL, overrides={"orchestrator.train.source.1": {"name": "x"}})


@pytest.mark.parametrize("taskset", ["my_tasks.v2", "owner/name.v2@1.0", "a.b/a.b@1"])  # the last: a dotted owner too
def test_a_dot_in_the_name_part_is_refused_with_an_id_that_imports(taskset):
    # verifiers a60a606 imports the name part as a module: 'my_tasks.v2' is a submodule path (loaders.py,
    # _import_plugin); prime-rl's own loader fails on it with ModuleNotFoundError.
    with pytest.raises(ValueError, match="holds a '.'") as err:
        prime_rl_config(taskset, "grpo", model=MODEL)
    fixed = str(err.value).rsplit("e.g. ", 1)[1].rstrip(".").strip("'")
    assert "." not in fixed.rsplit("/", 1)[-1].split("@")[0]
    assert table_check(prime_rl_config(fixed, "grpo", model=MODEL).config) == []
