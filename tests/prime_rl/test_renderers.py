"""A renderer for every model: the map -> auto, a known family -> its renderer,
anything else -> default, each non-map choice with a warning that names it and how to change it."""

from __future__ import annotations

import pytest
from primerl_schema_table import RENDERERS
from primerl_schema_table import check as table_check

from pick_a_method.trainers.prime_rl import prime_rl_config, validate_prime_rl
from pick_a_method.trainers.prime_rl.renderers import MODEL_RENDERER_MAP, RENDERER_NAMES, choose_renderer


def make(model, **kw):
    return prime_rl_config("reverse-text", kw.pop("method", "grpo"), model=model, **kw)


# The models prime-rl rejected with renderer 'auto', and hub ids that are in the map.
CASES = [
    ("Qwen/Qwen3-8B", None),  # in the map: prime-rl resolves 'auto'
    ("Qwen/Qwen3-4B-Instruct-2507", None),
    ("openai/gpt-oss-20b", None),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1"),
    ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "prime-qwen3"),  # as prime-rl's own reverse-text example sets
    ("my-org/Qwen3-8B-refunds-sft", "qwen3"),  # a fine-tune named after its family
    ("/ckpt/qwen3-8b-step100", "qwen3"),  # a local folder
    ("Qwen/Qwen2.5-7B-Instruct", "default"),  # no Qwen2.5 renderer in prime-rl
    ("google/gemma-3-4b-it", "default"),  # no Gemma 3 renderer
    ("google/gemma-4-31B-it", "default"),  # Gemma 4's came with renderers 0.1.10, after prime-rl's pin
    ("Qwen/Qwen3.8-27B", "default"),  # so did Qwen3.8's
    ("acme/Qwen3.8-27B-refunds-sft", "default"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "default"),  # a different template from Qwen3's
    ("./my-model", "default"),
]


@pytest.mark.parametrize(("model", "written"), CASES)
def test_every_model_gets_a_renderer_prime_rl_accepts(model, written):
    res = make(model)
    assert res.config["orchestrator"].get("renderer") == (None if written is None else {"name": written})
    assert validate_prime_rl(res.config) == [] and table_check(res.config) == []
    warned = [w for w in res.warnings if "MODEL_RENDERER_MAP" in w]
    if written is None:
        assert model in MODEL_RENDERER_MAP and warned == [] and "map: auto" in res.honored["renderer"]
    else:
        (warning,) = warned
        assert f"name = {written!r}" in warning and "renderer='" in warning  # names the choice and the way to change it


def test_the_warnings_advice_is_a_call_that_works():
    res = make("meta-llama/Llama-3.1-8B-Instruct")
    assert "renderer='default'" in res.warnings[0]
    followed = make("meta-llama/Llama-3.1-8B-Instruct", renderer="default")
    assert followed.config["orchestrator"]["renderer"] == {"name": "default"}
    assert not any("MODEL_RENDERER_MAP" in w for w in followed.warnings)
    assert followed.honored["renderer"] == "orchestrator.renderer.name"


def test_opsd_scores_its_hint_with_the_policy_renderer():
    res = make("meta-llama/Llama-3.1-8B-Instruct", method="opsd")
    assert res.config["orchestrator"]["algo"]["renderer"] == res.config["orchestrator"]["renderer"] == {"name": "llama-3"}
    assert "renderer" not in make("Qwen/Qwen3-8B", method="opsd").config["orchestrator"]["algo"]


@pytest.mark.parametrize(("renderer", "match"), [("qwen2", "not one of prime-rl's renderers"), (3, "not one of"),
                                                  ("auto", "resolves only models in the MODEL_RENDERER_MAP")])
def test_bad_renderers_are_refused_with_the_fix(renderer, match):
    with pytest.raises(ValueError, match=match) as err:
        make("meta-llama/Llama-3.1-8B-Instruct", renderer=renderer)
    assert "Fix:" in str(err.value)


def test_renderer_overrides_are_checked_like_the_rest():
    with pytest.raises(ValueError, match="orchestrator.renderer.name: must be one of"):
        make("Qwen/Qwen3-8B", overrides={"orchestrator.renderer.name": "qwen2"})
    with pytest.raises(ValueError, match="orchestrator.renderer.name: 'auto' resolves only"):
        make("meta-llama/Llama-3.1-8B-Instruct", overrides={"orchestrator.renderer": None})
    # prime-rl resolves 'auto' from the tokenizer name when one is set (OrchestratorConfig).
    ok = make("my-org/Qwen3-8B-sft", overrides={"orchestrator.renderer": None, "tokenizer.name": "Qwen/Qwen3-8B"})
    assert validate_prime_rl(ok.config) == []


def test_the_name_lists_agree():
    assert set(RENDERER_NAMES) == set(RENDERERS)  # the library's list and the test table's, written separately
    assert set(MODEL_RENDERER_MAP.values()) <= set(RENDERER_NAMES)
    assert choose_renderer("Qwen/Qwen3-8B").name == "auto"


@pytest.mark.parametrize("model", ["Qwen/Qwen3.8-27B", "acme/Qwen3.8-27B-sft", "thinkingmachines/Inkling",
                                   "poolside/Laguna-S-2.1", "google/gemma-4-E4B-it"])
def test_renderers_newer_than_prime_rls_pin_are_never_written(model):
    # renderers 0.1.10 maps these (qwen3.8, gemma4, inkling, laguna-s-2.1), the renderers commit
    # prime-rl 559b44772 pins (2846a3d) has no such renderer, and prime-rl refused the config the writer wrote.
    res = make(model)
    assert res.config["orchestrator"]["renderer"] == {"name": "default"}
    assert table_check(res.config) == [] and validate_prime_rl(res.config) == []
    (warning,) = [w for w in res.warnings if "MODEL_RENDERER_MAP" in w]
    assert "renderers 0.1.10" in warning and "a prime-rl commit whose renderers pin is 0.1.10 or later" in warning
    kept = make(model, renderer="default")  # the warning's advice: the same file, said on purpose, no warning
    assert kept.config == res.config and not any("MODEL_RENDERER_MAP" in w for w in kept.warnings)


@pytest.mark.parametrize("renderer", ["qwen3.8", "gemma4", "inkling", "laguna-s-2.1"])
def test_a_renderer_newer_than_the_pin_is_refused_naming_the_prime_rl_it_needs(renderer):
    with pytest.raises(ValueError, match="renderers pin is 0.1.10 or later") as err:
        make("Qwen/Qwen3.8-27B", renderer=renderer)
    assert "Fix: renderer='default'" in str(err.value)
    with pytest.raises(ValueError, match="orchestrator.renderer.name: must be one of"):
        make("Qwen/Qwen3.8-27B", overrides={"orchestrator.renderer.name": renderer})


def test_every_family_renderer_written_is_one_the_pin_has():
    from pick_a_method.trainers.prime_rl.renderers import FAMILIES, NEWER_RENDERERS

    assert {renderer for _, renderer, _ in FAMILIES} <= set(RENDERERS) | set(NEWER_RENDERERS)
    written = {choose_renderer(m).name for models in NEWER_RENDERERS.values() for m in models}
    assert written == {"default"} and not set(NEWER_RENDERERS) & set(RENDERERS)
