"""The methods by name: what each one is, what it needs, and which trainers' writers run it. No torch, no pydantic.

One entry a method, the one place its name and spellings are written. The method objects (methods/objects) take
their name from their entry; each trainer's config writer registers a plan for every method whose entry names
that trainer, and a refusal for the others (trainers/plans.py; tests/methods/test_method_table.py checks that the
two agree); the router reads what a route needs from here. `method_info` reads any spelling.

Like verl's `AdvantageEstimator` enum beside its registered estimators (verl/trainer/ppo/core_algos.py, v0.4.0):
the name is declared once, the implementations register under it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRIME_RL, TRL, VERL = "prime-rl", "trl", "verl"  # the trainers (common/trainers.py describes each)


@dataclass(frozen=True)
class MethodInfo:
    name: str  # canonical: what the tools, the configs and the registry take
    label: str  # how people write it
    source: str  # the paper or upstream code it comes from
    trainers: tuple[str, ...]  # whose config writers run it
    spellings: tuple[str, ...] = ()  # other names for it (compared folded: lower case, no separators)
    rule: bool = True  # an update rule in methods/ (SFT and DPO are the trainers' own, with no rule here)
    grouped: bool = False  # its advantage is group-relative: it needs several rollouts a prompt
    teacher: bool = False  # it needs a teacher model that shares the student's tokenizer
    distill: bool = False  # its loss is a divergence to a teacher's log-probs (OPD: another model's; OPSD: its own)
    wraps: tuple[str, ...] = ()  # Async: the methods it may wrap
    # What its update needs that a trainer must have to run it: a trainer without it refuses the method with this
    # sentence (trainers/plans.py), so no trainer writes its own. Empty for the methods every writer runs.
    needs: str = ""
    object_name: str = ""  # its method object's class in methods/objects: its label unless that is no class name

    def __post_init__(self) -> None:
        if self.rule and not self.object_name:
            object.__setattr__(self, "object_name", self.label)

    def __str__(self) -> str:
        return self.name


GRPO = MethodInfo("grpo", "GRPO", "DeepSeekMath arXiv:2402.03300; Dr. GRPO arXiv:2503.20783",
                  (PRIME_RL, TRL, VERL), ("drgrpo",), grouped=True)
MAX_RL = MethodInfo("max_rl", "MaxRL", "arXiv:2602.02710", (PRIME_RL,), grouped=True,
                    needs="an advantage of (R - mean)/mean per group")
RAE = MethodInfo("rae", "rae", "SPIRAL arXiv:2506.24119 (prime-rl's RAEAlgoConfig)", (PRIME_RL,), ("spiral",),
                needs="a per-agent EMA baseline", object_name="RAE")
OPD = MethodInfo("opd", "OPD", "GKD arXiv:2306.13649; Qwen3 arXiv:2505.09388", (PRIME_RL, TRL, VERL),
                 ("onpolicydistillation",), teacher=True, distill=True)
OPSD = MethodInfo("opsd", "OPSD", "SDFT arXiv:2601.19897; SDPO arXiv:2601.20802", (PRIME_RL,),
                  ("selfdistillation", "onpolicyselfdistillation"), distill=True,
                  needs="self-distillation (the model, shown privileged context, as its own teacher)")
ASYNC = MethodInfo("async", "Async", "ScaleRL arXiv:2510.13786; AReaL arXiv:2505.24298", (PRIME_RL, TRL, VERL),
                   wraps=("grpo", "max_rl", "rae", "opd", "opsd"))
FLASH_REINFORCE = MethodInfo("flash_reinforce", "FlashReinforce",
                             "Hu et al. 2026, github.com/yifanzhang-pro/FlashREINFORCE", (),
                             needs="a batch-mean baseline and a sequence trust gate")
SAO = MethodInfo("sao", "SAO", "arXiv:2607.07508", (), needs="a value critic with length-adaptive GAE")
BPCO = MethodInfo("bpco", "BPCO", "arXiv:2608.23566; github.com/QPHutu/golden_critic", (),
                  needs="a bounded value critic and a clipped DPPO step")
GROUPWISE_GRADING = MethodInfo("groupwise_grading", "GroupwiseGrading", "MiMo-V2.6 technical report (Xiaomi 2026) 4.3",
                               (TRL,), ("groupwise",), grouped=True,
                               needs="rewards reshaped inside each group by a grader that sees the whole group")
REINFORCE_ADA = MethodInfo("reinforce_ada", "ReinforceAda", "arXiv:2510.04996; github.com/RLHFlow/Reinforce-Ada", (),
                           ("reinforceadaseq",), grouped=True,
                           needs="adaptive sampling (drawing rollouts for a prompt until its group splits)")
# The trainers' own supervised methods: no update rule here, TRL's SFTTrainer and DPOTrainer train them.
SFT = MethodInfo("sft", "SFT", "on passing rows only: RFT, Yuan et al. arXiv:2308.01825", (TRL,), rule=False,
                needs="supervised fine-tuning on the passing rows")
DPO = MethodInfo("dpo", "DPO", "Rafailov et al. arXiv:2305.18290", (TRL,), rule=False,
                needs="preference training on chosen/rejected pairs")

METHODS: dict[str, MethodInfo] = {m.name: m for m in (GRPO, MAX_RL, RAE, OPD, OPSD, ASYNC, FLASH_REINFORCE, SAO, BPCO,
                                                        GROUPWISE_GRADING, REINFORCE_ADA, SFT, DPO)}
# The single-rollout methods a route with one rollout a prompt names: three update rules and prime-rl's rae.
SINGLE_ROLLOUT = (FLASH_REINFORCE, SAO, BPCO, RAE)

# OPSD learns from text it is shown in context, which takes about 7B parameters; under it, SFT on a stronger
# model's completions (whileai's pick-a-method skill v2.0.0, github.com/whilehq/whileai-sdk
# skills/pick-a-method/SKILL.md, section 3: on Qwen3-0.6B OPSD lost 0.554 [-0.614, -0.495] to GRPO).
OPSD_MIN_PARAMS_B = 7.0


def fold(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_BY_SPELLING = {fold(s): m for m in METHODS.values() for s in (m.name, m.label, *m.spellings)}


def method_info(text: str) -> tuple[MethodInfo, MethodInfo | None]:
    """(the method, the method Async wraps or None) for any spelling: "GRPO", "grpo", "Dr. GRPO", "On-Policy
    Distillation", "flash-reinforce", "async grpo" (Async around GRPO). ValueError names the known methods."""
    if not isinstance(text, str):
        raise ValueError(f"a method is named by a string such as 'grpo' or 'FlashReinforce'; got {text!r}")
    folded = fold(text)
    if folded in _BY_SPELLING:
        return _BY_SPELLING[folded], None
    if folded.startswith(ASYNC.name) and _BY_SPELLING.get(folded[len(ASYNC.name):], SFT).name in ASYNC.wraps:
        return ASYNC, _BY_SPELLING[folded[len(ASYNC.name):]]
    raise ValueError(f"unknown method {text!r}; known methods: {', '.join(METHODS)} (also spelled GRPO, MaxRL, "
                     f"FlashReinforce, GroupwiseGrading, ReinforceAda, 'on-policy distillation', 'async grpo', ...)")


def run_by(trainer: str) -> list[MethodInfo]:
    """The methods `trainer`'s writer writes, in table order."""
    return [m for m in METHODS.values() if trainer in m.trainers]
