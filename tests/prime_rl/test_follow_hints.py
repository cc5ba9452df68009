"""Every hint the prime-rl writer and `route` give, followed as a person would, gives a config that loads:
the writer's refusals ("Fix: name=value", each alternative), the advice in its notes and
warnings, and route's next steps (MCP arguments) with their batch, k and GPUs, over a sweep of calls. "Loads"
is the suite's independent prime-rl checker (primerl_schema_table, with write_subconfigs' file-name rule)."""

from __future__ import annotations

import itertools
import json

import pytest

from hints import FILL, assignments, fix_of, follow
from primerl_schema_table import check as table_check
from pick_a_method.trainers.prime_rl import prime_rl_config
from pick_a_method.trainers.trl import trl_config
from pick_a_method.routing import read_rows, route

MODEL = "Qwen/Qwen3-8B"
TEACHER = {"teacher": "Qwen/Qwen3-32B", "base_url": "http://localhost:8001/v1"}
METHODS = [("grpo", None), ("rae", {"group_size": 1}), ("opd", TEACHER),
           ("async", {"method": {"name": "grpo", "group_size": 8}, "correction": "ipo"}),
           ("async", {"method": "grpo", "correction": "icepop"})]
TASKSETS = ["reverse-text", "gsm8k", "alphabet-sort", "kuhn-poker", "someone/their-taskset@0.1.2"]
SHAPES = [{}, {"nodes": {"inference": 1}}, {"nodes": 2, "gpus": 4, "slurm": {"partition": "gpu"}},
          {"slurm": {"partition": "gpu"}}, {"batch": 60}]
EVALS = [{}, {"eval_split": "test"}, {"eval_split": {"split": "test"}}, {"eval_split": "validation"},
         {"eval_taskset": "x/y@1.0", "eval_split": {"dataset_name": "x/y"}},
         {"max_model_len": 32768, "overrides": {"inference": None}},
         {"eval_split": "test", "overrides": {"orchestrator.eval": None}}]
CALLS = list(itertools.product(METHODS, TASKSETS, SHAPES, EVALS))
THROUGHPUT = {"inference_tokens_per_s_per_gpu": 2000.0, "trainer_tokens_per_s_per_gpu": 8000.0}


def _refused_argument(message: str) -> str:
    return message.split(" ", 1)[0].split("[")[0].rstrip(":")


def _alternative(kwargs: dict, message: str, name: str, value) -> dict:
    """One alternative of a refusal's fix applied; the refused argument gives way to it (a person replaces it)."""
    out = follow(kwargs, name, value)
    refused = _refused_argument(message)
    if refused != name and refused in out and refused != "overrides":
        out.pop(refused)
    return out


def loads(taskset: str, method: str, kwargs: dict, depth: int = 0):
    """The call's result once it loads, following the first alternative of each refusal on the way (a config can
    have two independent problems); fails on a refusal that gives no followable fix."""
    try:
        res = prime_rl_config(taskset, method, **kwargs)
    except ValueError as err:
        options = assignments(fix_of(str(err)))
        assert options and depth < 4, f"a refusal with no fix to follow: {taskset} {method} {kwargs}: {err}"
        return loads(taskset, method, _alternative(kwargs, str(err), *options[0]), depth + 1)
    assert table_check(res.config) == [], (taskset, method, kwargs, table_check(res.config))
    return res


def test_every_hint_of_the_writer_leads_to_a_config_that_loads():
    followed = refused = 0
    for (method, knobs), taskset, shape, evals in CALLS:
        kwargs = {"model": MODEL, "knobs": knobs, **shape, **evals}
        try:
            res = prime_rl_config(taskset, method, **kwargs)
        except ValueError as err:
            refused += 1
            options = assignments(fix_of(str(err)))
            assert options, f"refused with no fix: {taskset} {method} {kwargs}: {err}"
            trials = [_alternative(kwargs, str(err), *o) for o in options]
        else:
            assert table_check(res.config) == [], (taskset, method, kwargs)
            trials = [follow(kwargs, *o) for text in res.notes + res.warnings for o in assignments(fix_of(text) or text)]
        for trial in trials:
            loads(taskset, method, trial)
            followed += 1
    assert refused > 100 and followed > 500  # the sweep reaches the refusals, and their hints get followed


@pytest.mark.parametrize("correction", ["icepop", "tis"])
def test_a_correction_prime_rl_lacks_is_refused_with_a_fix_that_ends_without_a_warning(correction):
    # The fix used to say "together with correction='ipo'", which then warned to drop the
    # correction or the override; followed now, the custom loss carries the correction asked for, and nothing warns.
    knobs = {"method": "grpo", "correction": correction}
    with pytest.raises(ValueError, match=f"no {correction} correction") as err:
        prime_rl_config("gsm8k", "async", model=MODEL, knobs=knobs)
    (name, value), *_ = assignments(fix_of(str(err.value)))
    res = loads("gsm8k", "async", follow({"model": MODEL, "knobs": knobs}, name, value))
    assert res.warnings == [] and res.config["trainer"]["loss"]["type"] == "custom"
    assert res.honored["correction"].startswith("trainer.loss.import_path") and "correction" not in res.ignored
    assert res.config["trainer"]["loss"]["kwargs"] == ({"low": 0.5, "high": 5.0} if correction == "icepop" else {"cap": 2.0})


@pytest.mark.parametrize("taskset", ["kuhn-poker", "alphabet-sort", "reverse-text", "refunds"])
def test_the_eval_split_advice_in_the_warnings_is_the_writers_own(taskset):
    # Said where the user sees it, a warning (it was a note), with the argument to pass.
    res = prime_rl_config(taskset, "rae" if taskset == "kuhn-poker" else "grpo", model=MODEL)
    (note,) = [w for w in res.warnings if "not held out" in w]  # gsm8k: the eval reads its default split, test
    assert not any("not held out" in n for n in res.notes)
    hints = assignments(note)
    assert hints, note  # the note gives a call to follow, not only words
    for name, value in hints:
        kwargs = follow({"model": MODEL}, name, value)
        followed = loads(taskset, "rae" if taskset == "kuhn-poker" else "grpo", kwargs)
        assert table_check(followed.config) == [] and not any("not held out" in w for w in followed.warnings)
    assert ("eval_split=" in note) == (taskset not in ("kuhn-poker", "alphabet-sort"))


@pytest.mark.parametrize("method", ["sft", "dpo", "SFT"])
def test_sft_and_dpo_point_to_trl_config_and_that_call_works(method):
    with pytest.raises(ValueError, match=r"trl_config\(method='(sft|dpo)'") as err:
        prime_rl_config("gsm8k", method, model=MODEL)
    call = str(err.value).split("trl_config(", 1)[1].split(")")[0]
    assert call == f"method={method.lower()!r}, model=<model>"  # one placeholder word an argument: <model>
    assert trl_config(method=method.lower(), model=MODEL).config


def _route_steps(verdict):
    return [s for s in (verdict.next_step, *verdict.alternatives) if s.tool == "prime_rl_config"]


def _filled(value):
    if isinstance(value, dict):
        return {k: _filled(v) for k, v in value.items()}
    return FILL.get(value, value) if isinstance(value, str) else value


EXAMPLES = {"mixed": {}, "async_sampler": {}, "sdk_rows": {}, "floor": {}, "one_per_prompt": {},
            "student": {"teacher_rows": "teacher_strong"}}


@pytest.mark.parametrize("example", EXAMPLES)
def test_routes_next_steps_carry_batch_k_and_gpus_and_load(example, tmp_path):
    rows = read_rows(f"examples/{example}.jsonl")
    extra = {k: read_rows(f"examples/{v}.jsonl") for k, v in EXAMPLES[example].items()}
    seen = 0
    for gpus, throughput, taskset in [(None, None, None), (8, None, "someone/their-taskset@0.1.2"),
                                      (8, THROUGHPUT, "gsm8k"), (16, None, None)]:
        verdict = route(rows, model=MODEL, taskset=taskset, gpus=gpus, throughput=throughput, **extra)
        for step in _route_steps(verdict):
            args = _filled(step.arguments)
            args["out"] = str(tmp_path / f"{seen}-{args['out']}")  # each call writes its own file
            res = loads(args.pop("taskset"), args.pop("method"), args)
            seen += 1
            orch, dep = res.config["orchestrator"], res.config["deployment"]
            if "batch" in args:  # the batch and k route advises are the ones written
                assert orch["batch_size"] == args["batch"] == verdict.cost.rollouts_per_step
                assert orch["group_size"] == verdict.cost.group_size
            else:
                assert "batch is the writer's default" in step.why, step.why
            split = verdict.cost.inference_gpus if verdict.cost else None
            if split:
                assert (dep["num_infer_gpus"], dep["num_train_gpus"]) == (split, verdict.cost.trainer_gpus)
            elif gpus:
                assert dep["num_infer_gpus"] + dep["num_train_gpus"] == gpus and f"gpus={gpus}" in step.why
    assert seen >= 4


def test_routes_gpu_hint_names_the_input_the_split_lacks():
    # With throughput given on rows without token counts, the step said "give route throughput";
    # the input missing is the token counts. Each input is named when it, and only it, is missing; with both, the
    # split is made.
    rows = [json.loads(line) for line in open("examples/mixed.jsonl")]
    counted = [dict(r, completion_tokens=300 + i % 50) for i, r in enumerate(rows)]
    for given, throughput, says in [(rows, THROUGHPUT, ["token counts"]), (counted, None, ["throughput argument"]),
                                    (rows, None, ["token counts", "throughput argument"]), (counted, THROUGHPUT, [])]:
        step = route(given, model=MODEL, gpus=8, throughput=throughput).next_step
        for word in ("token counts", "throughput argument"):
            assert (word in step.why) == (word in says), (word, says, step.why)
        assert isinstance(step.arguments["gpus"], dict) == (not says)  # both given: the split is made
