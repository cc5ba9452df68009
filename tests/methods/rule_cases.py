"""The rules and batches the dispatch and memory tests share."""

import torch

from pick_a_method import methods
from pick_a_method.methods import Batch

F64 = torch.float64


def rules():
    """Every rule the device policy runs without a host read, one object per branch."""
    return {
        "grpo": lambda: methods.GRPO(group_size=8),
        "grpo_std": lambda: methods.GRPO(group_size=8, normalize_std=True),
        "max_rl": lambda: methods.MaxRL(group_size=8),
        "opd_reverse_kl": lambda: methods.OPD(teacher="t"),
        "opd_forward_kl": lambda: methods.OPD(teacher="t", divergence="forward_kl"),
        "opd_jsd": lambda: methods.OPD(teacher="t", divergence="jsd"),
        "opsd": lambda: methods.OPSD(divergence="forward_kl"),
        "async_icepop": lambda: methods.Async(method={"name": "grpo", "group_size": 8}, correction="icepop"),
        "async_ipo": lambda: methods.Async(method={"name": "grpo", "group_size": 8}, correction="ipo"),
        "async_tis": lambda: methods.Async(method={"name": "grpo", "group_size": 8}, correction="tis"),
        "async_opd": lambda: methods.Async(method={"name": "opd", "teacher": "t"}, correction="ipo"),
        "flash_reinforce": lambda: methods.FlashReinforce(trust=0.05),
        "sao": lambda: methods.SAO(),
        "bpco": lambda: methods.BPCO(),
    }


# the rules whose inputs are host values by nature: rae's EMA baselines are Python state (one read of the rewards
# in the hot path), GroupwiseGrading calls a grader and ReinforceAda reads each group's info on the host
HOST_RULES = {
    "rae": lambda: methods.RAE(),
    "groupwise": lambda: methods.GroupwiseGrading(group_size=8),
    "reinforce_ada": lambda: methods.ReinforceAda(keep=8),
}


def batch(B, T=8, dtype=torch.float32, seed=0, *, stale=False, short=False, mask=None):
    g = torch.Generator().manual_seed(seed)
    lp = (-1.0 + 0.3 * torch.randn(B, T, generator=g, dtype=F64)).clamp(max=-1e-4)
    blp = (lp + 0.2 * torch.randn(B, T, generator=g, dtype=F64)).clamp(max=-1e-4)
    if mask is None and short:
        mask = torch.rand(B, T, generator=g) > 0.3
        mask[:, 0] = True
        mask[1, 2:] = False  # two action tokens: lambda = 0 under BPCO's alpha
    return Batch(rewards=(torch.rand(B, generator=g, dtype=F64) < 0.5).double(), logprobs=lp.to(dtype), mask=mask,
                 behavior_logprobs=blp.to(dtype), teacher_logprobs=(lp - 0.1).to(dtype),
                 values=torch.rand(B, T, generator=g, dtype=F64).to(dtype),
                 staleness=torch.tensor([0, 9] + [0] * (B - 2)) if stale else None)
