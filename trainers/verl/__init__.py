"""The Hydra overrides (and the same as a YAML file) for verl's ``python -m verl.trainer.main_ppo``.

``verl_config(method, model=...)`` maps the project's method objects onto verl 0.9.1's packaged trainer config
(the project's GRPO is ``adv_estimator=grpo`` with ``loss_agg_mode=token-mean``; Async's tis and icepop are
verl's token-level rollout correction, its staleness bound the v1 async trainer's
``max_off_policy_threshold``; OPD is verl's distillation block), and returns them with which knobs verl
honors, which it ignores and why, what to fill in and the launch command. A method verl cannot run is
refused with a ``ValueError`` that says what to do instead.

    constants.py  the verl facts the writer relies on (version, key prefixes, the teacher's replica)
    options.py    what ``verl_config`` takes, declared once (``VerlOptions``)
    plan.py       what each method becomes in verl: keys, knobs honored / ignored, refusals
    build.py      ``verl_config``: arguments, batch, cluster, overrides, YAML, write, result

Importing this package never imports verl, Ray, torch or transformers.
"""

from pick_a_method._lazy import lazy_names

# Loaded on first use: the listing and `--help` import options.py alone.
_EXPORTS = {"verl_config": "build", "VerlOptions": "options", "VERL_VERSION": "constants"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
