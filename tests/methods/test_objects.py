"""Method objects: construction, validation messages, registry, and the no-torch import contract."""

import math
import subprocess
import sys

import pytest

from pick_a_method import methods
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects import (
    BPCO,
    GRPO,
    OPD,
    OPSD,
    RAE,
    SAO,
    Async,
    FlashReinforce,
    GroupwiseGrading,
    MaxRL,
    ReinforceAda,
    make_method,
)


def test_import_does_not_load_torch():
    code = (
        "import sys, methods, methods.objects, methods.defaults, methods.batch, methods.update, methods.preview;"
        "m = methods.make_method('Async', method='rae', correction='icepop');"
        "assert 'torch' not in sys.modules, 'torch imported';"
        "assert 'transformers' not in sys.modules"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_defaults_are_the_documented_ones():
    assert GRPO().group_size == 8 and GRPO().normalize_std is False
    assert RAE().decay == 0.95
    opd = OPD(teacher="Qwen/Qwen3-32B")
    assert (opd.divergence, opd.top_k, opd.samples, opd.temperature, opd.max_tokens) == ("reverse_kl", 32, 4, 1.0, 8192)
    assert opd.resolved_learning_rate(lora=True) == 1e-4 and opd.resolved_learning_rate(lora=False) == 1e-6
    opsd = OPSD()
    assert opsd.anchor == "ema:0.01" and opsd.anchor_parts() == ("ema", 0.01)
    assert opsd.max_tokens == 4096 and opsd.resolved_learning_rate() == 5e-6
    a = Async()
    assert isinstance(a.inner, GRPO) and a.correction == "ipo" and a.ipo_threshold == D.ASYNC_IPO_THRESHOLD
    assert a.ratio == (0.5, 5.0) and a.cap == 2.0 and a.off_policy_steps == 8
    fr = FlashReinforce()
    assert fr.trust == 0.003 and fr.samples == 1 and fr.batch == 128
    assert SAO().ratio == (0.7, 6.0) and SAO().gae_alpha == 1.5
    assert BPCO().clip == 0.2 and BPCO().gae_alpha == 0.4 and BPCO().reward_range == (0.0, 1.0)
    assert ReinforceAda().max_draws == 32


def test_opd_teacher_forms():
    o = OPD(teacher="Qwen/Qwen3-32B@https://teacher.example/v1")
    assert o.teacher_ref == ("Qwen/Qwen3-32B", "https://teacher.example/v1")
    assert OPD(teacher="vllm:m@http://h:8000/v1").teacher_ref == ("m", "http://h:8000/v1")
    assert OPD(teacher={"name": "m", "base_url": "http://h/v1"}).teacher_ref == ("m", "http://h/v1")
    # an '@' not followed by a URL is part of the name
    assert OPD(teacher="org/model@step-40").teacher_ref == ("org/model@step-40", None)
    with pytest.raises(ValueError, match="give one of them"):
        OPD(teacher="m@http://a/v1", base_url="http://b/v1")
    with pytest.raises(ValueError, match="http"):
        OPD(teacher="m", base_url="ftp://x")


@pytest.mark.parametrize(
    "cls, knobs, needle",
    [
        (OPD, dict(teacher="t", top_k=0), "top_k must be an integer >= 1"),
        (OPD, dict(teacher="t", samples=0), "samples must be an integer >= 1"),
        (OPD, dict(teacher="t", temperature=0), r"temperature must be a number in \(0, 2\]"),
        (OPD, dict(teacher="t", temperature=2.5), r"\(0, 2\]"),
        (OPD, dict(teacher="t", max_tokens=0), "max_tokens must be an integer >= 1"),
        (OPD, dict(teacher="t", learning_rate=-1e-5), "finite number > 0"),
        (OPD, dict(teacher="t", divergence="kl"), "reverse_kl, forward_kl, jsd"),
        (OPD, dict(teacher=""), "served model"),
        (OPSD, dict(anchor="ema:1"), "0 < rate < 1"),
        (OPSD, dict(anchor="live:0.1"), "'initial' or 'live'"),
        (OPSD, dict(template="no field"), "{demonstration}"),
        (OPSD, dict(template="{demonstration} {other}"), "only the field"),
        (OPSD, dict(privileged="has space"), "identifier"),
        (OPSD, dict(max_tokens=0), ">= 1"),
        (Async, dict(method="sft"), "Async wraps one of grpo"),
        (Async, dict(method="opd"), "needs the teacher"),
        (Async, dict(method=FlashReinforce()), "cannot be wrapped"),
        (Async, dict(method=Async()), "cannot be wrapped"),
        (Async, dict(off_policy_steps=-1), ">= 0"),
        (Async, dict(correction="clip"), "ipo, icepop, tis"),
        (Async, dict(ipo_threshold=1.5), r"\(0, 1\]"),
        (Async, dict(ratio=(0.5, 0.9)), "0 < low <= 1 <= high"),
        (Async, dict(ratio=(0, 2)), "0 < low"),
        (Async, dict(cap=0.9), r"\[1, inf\)"),
        (FlashReinforce, dict(trust=math.nan), r"\(0, inf\]"),
        (FlashReinforce, dict(trust=-1), r"\(0, inf\]"),
        (SAO, dict(ratio=(0.7, 1.0)), "0 < low < 1 < high"),
        (SAO, dict(ratio=3), "pair"),
        (SAO, dict(gae_alpha=0), "gae_alpha"),
        (BPCO, dict(clip=1.5), r"\(0, 1\]"),
        (BPCO, dict(critic_warmup=1.5), "integer"),
        (BPCO, dict(reward_range=(0, math.inf)), "finite pair"),
        (GRPO, dict(group_size=0), ">= 1"),
        (GRPO, dict(group_size=True), "integer"),
        (GRPO, dict(normalize_std="yes"), "true or false"),
        (RAE, dict(decay=1.0), r"\[0, 1\)"),
        (MaxRL, dict(nonsense=1), "Extra inputs"),
        (GroupwiseGrading, dict(grader=3), "callable"),
        (GroupwiseGrading, dict(mode="both"), "reward, advantage"),
        (GroupwiseGrading, dict(floor=1.0), r"\[0, 1\)"),
        (GroupwiseGrading, dict(min_factor=0), r"\(0, 1\]"),
        (ReinforceAda, dict(keep=1), ">= 2"),
        (ReinforceAda, dict(keep=8, round_size=4), "round_size must be >= keep"),
        (ReinforceAda, dict(exit="never"), "balanced, positive"),
        (ReinforceAda, dict(threshold=math.nan), "threshold"),
    ],
)
def test_bad_knobs_are_refused_with_the_range(cls, knobs, needle):
    with pytest.raises(ValueError, match=needle):
        cls(**knobs)


def test_objects_are_frozen():
    g = GRPO()
    with pytest.raises(ValueError):
        g.group_size = 4  # type: ignore[misc]


def test_async_normalizes_inner_and_accepts_eps_alias():
    a = Async(method="MaxRL", correction="ICEPOP", ratio=[0.7, 6.0], eps=0.2)
    assert isinstance(a.inner, MaxRL) and a.correction == "icepop" and a.ratio == (0.7, 6.0)
    assert a.ipo_threshold == 0.2
    r = RAE(decay=0.9)
    assert Async(method=r).inner is r
    b = Async(method={"name": "opd", "teacher": "t@http://h/v1", "top_k": 8})
    assert isinstance(b.inner, OPD) and b.inner.top_k == 8 and b.inner_name == "opd"
    with pytest.raises(ValueError, match="same knob"):
        Async(eps=0.2, ipo_threshold=0.3)


def test_registry_spellings():
    spellings = {
        "GRPO": GRPO, "grpo": GRPO, "max_rl": MaxRL, "MaxRL": MaxRL, "max-rl": MaxRL, "rae": RAE, "RAE": RAE,
        "OPSD": OPSD, "opsd": OPSD, "Async": Async, "FlashReinforce": FlashReinforce,
        "flash_reinforce": FlashReinforce, "FlashREINFORCE": FlashReinforce, "SAO": SAO, "BPCO": BPCO,
        "GroupwiseGrading": GroupwiseGrading, "groupwise_grading": GroupwiseGrading,
        "ReinforceAda": ReinforceAda, "reinforce_ada": ReinforceAda,
    }
    for spelling, cls in spellings.items():
        assert type(make_method(spelling)) is cls, spelling
    assert type(make_method("OPD", teacher="t")) is OPD
    assert type(make_method("opd", teacher="t")) is OPD
    a = make_method("Async", method={"name": "rae", "decay": 0.9}, correction="tis")
    assert isinstance(a.inner, RAE) and a.inner.decay == 0.9 and a.correction == "tis"
    assert isinstance(make_method("async max_rl").inner, MaxRL)
    assert set(methods.METHODS) == {
        "grpo", "max_rl", "rae", "opd", "opsd", "async", "flash_reinforce", "sao", "bpco",
        "groupwise_grading", "reinforce_ada",
    }
    with pytest.raises(ValueError, match="known methods: grpo"):
        make_method("sft")
    with pytest.raises(ValueError, match="group_size"):
        make_method("grpo", group_size=0)


def test_bpco_bound_roundtrip_and_lambda():
    b = BPCO()
    assert b.bound(0) == pytest.approx(0.5)
    assert b.bound(1) == pytest.approx(0.75) and b.bound(-1) == pytest.approx(0.25)
    assert b.unbound(b.bound(0.3)) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        b.unbound(1.0)
    s = SAO()
    assert s.gae_lambda(1) == pytest.approx(1 / 3) and s.gae_lambda(3) == pytest.approx(7 / 9)
    assert s.gae_lambda(0) == 0.0 and b.gae_lambda(2) == 0.0


def test_rae_state_lives_outside_the_frozen_knobs():
    r = RAE()
    assert r.baseline() == 0.0
    r.reset({"p0": 0.4})
    assert r.baselines == {"p0": 0.4}
    r.reset()
    assert r.baselines == {}
