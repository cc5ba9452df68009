"""Group-relative methods: prime-rl's grpo, max_rl and rae."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

from pydantic import PrivateAttr

from pick_a_method.common import methods as M
from pick_a_method.common.methods import MethodInfo
from pick_a_method.methods import defaults as D
from pick_a_method.methods.objects.base import Method, _bool_knob, _float_knob, _int_knob, _is_real


class GRPO(Method):
    """Group-relative advantage: A_i = R_i - mean_group(R), optionally divided by the group std.

    prime-rl's ``grpo`` (no std division, the Dr. GRPO form, arXiv:2503.20783) is the default;
    ``normalize_std=True`` gives the DeepSeekMath form (arXiv:2402.03300). A group of one carries
    no gradient (A = 0), as in prime-rl.
    """

    info: ClassVar[MethodInfo] = M.GRPO
    rule: ClassVar[str] = "grouped:grouped_update"
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT
    normalize_std: _bool_knob(D.GRPO_NORMALIZE_STD) = D.GRPO_NORMALIZE_STD


class MaxRL(Method):
    """max_rl (arXiv:2602.02710): A_i = (R_i - mean)/mean per group; a group with mean <= 0 carries 0.

    Assumes non-negative rewards (a pass rate); the update refuses a negative reward.
    """

    info: ClassVar[MethodInfo] = M.MAX_RL
    rule: ClassVar[str] = "grouped:grouped_update"
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT


class RAE(Method):
    """rae (SPIRAL, arXiv:2506.24119): A = R - b with a per-agent EMA baseline b.

    The baseline is read before the trajectory's own reward moves it (b <- decay*b + (1-decay)*R),
    in batch order, exactly as prime-rl's orchestrator does. The baselines are state kept on the
    object (``baselines``, ``reset()``); the knobs stay frozen. Works at group_size 1.
    """

    info: ClassVar[MethodInfo] = M.RAE
    rule: ClassVar[str] = "grouped:grouped_update"
    decay: _float_knob(0.0, 1.0, D.RAE_DECAY, lo_open=False, hi_open=True) = D.RAE_DECAY
    group_size: _int_knob(1, D.RL_ROLLOUTS_PER_PROMPT) = D.RL_ROLLOUTS_PER_PROMPT

    _baselines: dict[str, float] = PrivateAttr(default_factory=dict)

    @property
    def stateful(self) -> bool:
        return True

    @property
    def baselines(self) -> dict[str, float]:
        """A copy of the current per-agent baselines."""
        return dict(self._baselines)

    def baseline(self, agent: str = D.RAE_DEFAULT_AGENT) -> float:
        return self._baselines.get(str(agent), D.RAE_INITIAL_BASELINE)

    def reset(self, baselines: Mapping[str, float] | None = None) -> None:
        """Forget every baseline (or start from the given ones)."""
        self._baselines.clear()
        if baselines:
            for key, value in baselines.items():
                if not (_is_real(value) and math.isfinite(float(value))):
                    raise ValueError(f"baseline for agent {key!r} must be a finite number; got {value!r}")
                self._baselines[str(key)] = float(value)

