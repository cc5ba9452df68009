"""The trainers' config writers: what each method becomes in prime-rl (`prime_rl/`), TRL (`trl/`) and verl (`verl/`).

Made from the method table (common/methods.py) and the method objects (methods/): each trainer's `plan.py`
registers, for every method, either a plan (the keys and knobs the trainer honours) or a refusal with the fix
(`plans.py`'s `Plans`); `config_result.py` is the one result every writer returns (text, honoured and ignored
knobs, warnings, needs, the launch command). What each writer takes is declared once, in its `options.py` (the
options they share in `options.py`): the library call, the MCP tool's schema and the command's flags come from it.
Importing this package loads nothing; each writer loads on first use and never imports torch.
"""

from __future__ import annotations

from pick_a_method._lazy import lazy_names

_EXPORTS = {
    "prime_rl_config": "prime_rl", "PrimeRLConfig": "prime_rl",
    "trl_config": "trl", "verl_config": "verl",
    "TrainerConfig": "config_result",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
