"""The YAML that TRL's ``trl <grpo|dpo|sft|distillation> --config FILE`` reads, for every method TRL can run.

``trl_config(method, model=...)`` maps the project's method objects onto TRL 1.16.0's config classes (the
project's GRPO is ``loss_type: dapo`` with ``scale_rewards: none``; Async's icepop and tis are TRL's
``token_mask`` and ``token_truncate`` importance-sampling modes; OPD is TRL's DistillationTrainer), and
returns the text with which knobs TRL honors, which it ignores and why, what to fill in and the launch
command. A method TRL cannot run is refused with a ``ValueError`` that says what to do instead.

    constants.py  the TRL facts the writer relies on (version, modes, launch defaults), with sources
    options.py    what ``trl_config`` takes, declared once (``TrlOptions``)
    plan.py       what each method becomes in TRL: command, keys, knobs honored / ignored, refusals
    build.py      ``trl_config``: arguments, batch split, overrides, YAML, write, result

Importing this package never imports TRL, torch or transformers.
"""

from pick_a_method._lazy import lazy_names

# Loaded on first use: the listing and `--help` import options.py alone.
_EXPORTS = {"trl_config": "build", "TrlOptions": "options", "TRL_VERSION": "constants"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
