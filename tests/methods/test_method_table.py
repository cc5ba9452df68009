"""A method is one entry of common/methods.py: its name and spellings, the trainers that run it. The method objects
take their names from it, each trainer's writer registers a plan for exactly the methods it runs and a refusal for
the rest, and every caller reads a spelling through the same function."""

import pytest

from pick_a_method.common import methods as M
from pick_a_method.common.config_call import config_call
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.methods import objects
from pick_a_method.trainers.config_result import resolve_method
from pick_a_method.trainers.plans import TrainerMethod
from pick_a_method.trainers.prime_rl import plan as prime_rl_plan
from pick_a_method.trainers.trl import plan as trl_plan
from pick_a_method.trainers.verl import plan as verl_plan

BOOKS = {M.PRIME_RL: prime_rl_plan.PLANS, M.TRL: trl_plan.PLANS, M.VERL: verl_plan.PLANS}


def spellings(info: M.MethodInfo) -> list[str]:
    """How people write it: the name, the label, its other spellings, with the separators and cases people use."""
    base = [info.name, info.label, *info.spellings]
    return sorted({*base, *(b.upper() for b in base), *(b.replace("_", "-") for b in base),
                   *(b.replace("_", " ").title() for b in base)})


@pytest.mark.parametrize("trainer", BOOKS)
def test_each_trainer_writes_what_the_table_says_and_refuses_the_rest(trainer):
    book = BOOKS[trainer]
    assert book.missing() == []
    assert set(book.written) == set(M.run_by(trainer))
    for info in M.METHODS.values():
        if info in book.written:
            continue
        with pytest.raises(ValueError, match=r"\S") as err:
            book.plan_of(info)
        assert "Fix" in str(err.value) or TRAINERS[trainer].tool in str(err.value), (trainer, info.name, err.value)


def test_the_method_objects_are_the_table_entries_with_a_rule():
    assert set(objects.METHODS) == {m.name for m in M.METHODS.values() if m.rule}
    for name, cls in objects.METHODS.items():
        assert cls.info is M.METHODS[name] and cls.name == name


@pytest.mark.parametrize("info", list(M.METHODS.values()), ids=lambda m: m.name)
def test_every_spelling_reads_as_the_same_method_everywhere(info):
    knobs = {"teacher": "Qwen/Qwen3-32B"} if info.teacher else {}
    for spelled in spellings(info):
        assert M.method_info(spelled) == (info, None), spelled
        resolved = resolve_method(spelled, knobs)  # what every config writer reads a method with
        assert resolved.info is info, spelled
        if info.rule:
            assert objects.make_method(spelled, **knobs).info is info
        else:
            assert isinstance(resolved, TrainerMethod)


def test_async_spelled_with_its_inner_method():
    for inner in M.ASYNC.wraps:
        for spelled in (f"async {inner}", f"Async-{M.METHODS[inner].label}", f"ASYNC_{inner}"):
            assert M.method_info(spelled) == (M.ASYNC, M.METHODS[inner]), spelled
    with pytest.raises(ValueError, match="unknown method 'async sao'"):
        M.method_info("async sao")  # SAO carries its own off-policy handling: nothing for Async to wrap


def test_preview_update_reads_the_spelling_make_method_does():
    """`preview_update("On-Policy Distillation")` failed with a pydantic error where make_method took it."""
    pytest.importorskip("torch")
    from pick_a_method.methods.preview import preview_update

    batch = [{"reward": 0, "logprobs": [-1.0], "teacher_logprobs": [-0.5]}]
    for spelled in ("On-Policy Distillation", "opd", "OPD"):
        assert preview_update(spelled, trajectories=batch).method == M.OPD.name


@pytest.mark.parametrize("trainer", TRAINERS)
@pytest.mark.parametrize("info", [m for m in M.METHODS.values() if m.trainers], ids=lambda m: m.name)
def test_a_config_call_goes_to_a_trainer_that_runs_the_method(trainer, info):
    knobs = {"method": M.GRPO.name} if info is M.ASYNC else None
    step = config_call(TRAINERS[trainer], info.name, taskset=None, model=None, why="x.", knobs=knobs)
    chosen = next(t for t in TRAINERS.values() if t.tool == step.tool)
    assert chosen.name in info.trainers
    assert (chosen.name == trainer) == (trainer in info.trainers)
    assert step.arguments["out"] == chosen.out_name("async grpo" if info is M.ASYNC else info.name)
