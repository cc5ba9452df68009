"""Single-rollout methods: FlashReinforce, SAO and BPCO."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from pydantic import field_validator

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects.base import TEMPERATURE, Method, _float_knob, _int_knob, _optional_rate, _pair


class FlashReinforce(Method):
    """FlashREINFORCE (Hu et al. 2026): batch-mean baseline, sequence trust gate, 1/T weighting.

    See ``methods.rules.single_rollout.flash_reinforce_update`` for the rule and its normalization.
    """

    info: ClassVar[MethodInfo] = M.FLASH_REINFORCE
    rule: ClassVar[str] = "flash_reinforce:flash_reinforce_update"
    off_policy_guard: ClassVar[bool] = True
    samples: ClassVar[int] = D.SINGLE_ROLLOUT_SAMPLES
    batch: ClassVar[int] = D.FLASH_REINFORCE_BATCH

    trust: _float_knob(0.0, None, D.FLASH_REINFORCE_TRUST, allow_inf=True) = D.FLASH_REINFORCE_TRUST
    off_policy_steps: _int_knob(0, D.FLASH_REINFORCE_OFF_POLICY_STEPS) = D.FLASH_REINFORCE_OFF_POLICY_STEPS
    ratio_cap: _float_knob(1.0, None, D.FLASH_REINFORCE_RATIO_CAP, lo_open=False, allow_inf=True) = D.FLASH_REINFORCE_RATIO_CAP
    temperature: TEMPERATURE = D.FLASH_REINFORCE_TEMPERATURE
    max_tokens: _int_knob(1, D.FLASH_REINFORCE_MAX_TOKENS) = D.FLASH_REINFORCE_MAX_TOKENS
    learning_rate: _optional_rate(D.FLASH_REINFORCE_LEARNING_RATE, D.FLASH_REINFORCE_LEARNING_RATE_LORA) = None


class _LengthAdaptiveCritic(Method):
    """What SAO and BPCO share: a critic whose GAE lambda follows the reply's length (LA-GAE), one rollout a prompt,
    and a ratio test that keeps stale tokens out by itself."""

    off_policy_guard: ClassVar[bool] = True
    samples: ClassVar[int] = D.SINGLE_ROLLOUT_SAMPLES

    def gae_lambda(self, length: int) -> float:
        """lambda(L) = max(0, 1 - 1/(gae_alpha * L)); 0 for L < 1 (the rules' ``gae_lambdas``, one trajectory)."""
        return 0.0 if length < 1 else max(0.0, 1.0 - 1.0 / (self.gae_alpha * length))


class SAO(_LengthAdaptiveCritic):
    """SAO (Hou et al. 2026, arXiv:2607.07508): skip-observation LA-GAE critic and a strict ratio band.

    See ``methods.rules.single_rollout.sao_update``.
    """

    info: ClassVar[MethodInfo] = M.SAO
    rule: ClassVar[str] = "single_rollout:sao_update"
    gamma: ClassVar[float] = D.SAO_GAMMA
    batch: ClassVar[int] = D.SAO_BATCH

    ratio: tuple[float, float] = D.SAO_RATIO
    gae_alpha: _float_knob(0.0, None, D.SAO_GAE_ALPHA) = D.SAO_GAE_ALPHA
    critic_steps: _int_knob(1, D.SAO_CRITIC_STEPS) = D.SAO_CRITIC_STEPS
    critic_warmup: _int_knob(0, D.SAO_CRITIC_WARMUP) = D.SAO_CRITIC_WARMUP
    temperature: TEMPERATURE = D.SAO_TEMPERATURE
    max_tokens: _int_knob(1, D.SAO_MAX_TOKENS) = D.SAO_MAX_TOKENS
    learning_rate: _optional_rate(D.SAO_LEARNING_RATE) = None
    critic_learning_rate: _float_knob(0.0, None, D.SAO_CRITIC_LEARNING_RATE) = D.SAO_CRITIC_LEARNING_RATE

    @field_validator("ratio", mode="before")
    @classmethod
    def _ratio(cls, value: Any) -> tuple[float, float]:
        low, high = _pair(value, "ratio")
        if not (0.0 < low < 1.0 < high < math.inf):
            raise ValueError(
                f"ratio must be (low, high) with 0 < low < 1 < high < inf (default {D.SAO_RATIO}; coding band "
                f"{D.SAO_RATIO_CODING}); got {value!r}"
            )
        return low, high


class BPCO(_LengthAdaptiveCritic):
    """BPCO (Qi et al. 2026, arXiv:2608.23566): bounded critic, LA-GAE, sign-dependent DPPO clip.

    See ``methods.rules.single_rollout.bpco_update``.
    """

    info: ClassVar[MethodInfo] = M.BPCO
    rule: ClassVar[str] = "single_rollout:bpco_update"

    clip: _float_knob(0.0, 1.0, D.BPCO_CLIP) = D.BPCO_CLIP
    ratio_cap: _float_knob(1.0, None, D.BPCO_RATIO_CAP, lo_open=False, allow_inf=True) = D.BPCO_RATIO_CAP
    gae_alpha: _float_knob(0.0, None, D.BPCO_GAE_ALPHA) = D.BPCO_GAE_ALPHA
    reward_range: tuple[float, float] = D.BPCO_REWARD_RANGE
    critic_warmup: _int_knob(0, D.BPCO_CRITIC_WARMUP) = D.BPCO_CRITIC_WARMUP
    temperature: TEMPERATURE = D.BPCO_TEMPERATURE
    max_tokens: _int_knob(1, D.BPCO_MAX_TOKENS) = D.BPCO_MAX_TOKENS
    learning_rate: _optional_rate(D.BPCO_LEARNING_RATE) = None
    critic_learning_rate: _float_knob(0.0, None, D.BPCO_CRITIC_LEARNING_RATE) = D.BPCO_CRITIC_LEARNING_RATE

    @field_validator("reward_range", mode="before")
    @classmethod
    def _range(cls, value: Any) -> tuple[float, float]:
        low, high = _pair(value, "reward_range")
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(
                f"reward_range must be a finite pair (low, high) with low < high (default {D.BPCO_REWARD_RANGE}); "
                f"got {value!r}"
            )
        return low, high

    def bound(self, z: float) -> float:
        """The bounded critic head (eq. 9): R_min + (R_max - R_min) * (1/2 + atan(z)/pi)."""
        low, high = self.reward_range
        return low + (high - low) * (0.5 + math.atan(z) / math.pi)

    def unbound(self, value: float) -> float:
        """Inverse of ``bound``; refused at or beyond either end of the reward range."""
        low, high = self.reward_range
        if not (low < value < high):
            raise ValueError(f"unbound needs a value strictly inside reward_range {self.reward_range}; got {value!r}")
        return math.tan(math.pi * ((value - low) / (high - low) - 0.5))


