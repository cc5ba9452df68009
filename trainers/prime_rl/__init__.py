"""The TOML that prime-rl's ``rl`` command reads, for every method prime-rl can run.

``prime_rl_config(taskset, method, model=...)`` builds the config as a dict, checks every key and
value against this package's copy of prime-rl's schema (prime-rl does not ship its config classes to
PyPI, so a writer has to carry the schema itself), writes it with a TOML library, reads it back, and
returns what it wrote together with which knobs prime-rl honors (and under which key), which it
cannot honor (and why), warnings, what must exist where it runs (``needs``), version notes and the
launch command.

Target: prime-rl commit 559b44772 (tag v0.8.1.dev67, 2026-08-21). The schema changes from month to
month; every fact used here is cited to the file it comes from in github.com/PrimeIntellect-ai/prime-rl at
that commit (its config classes in ``packages/prime-rl-configs``, its examples and debug configs), or in the
verifiers and renderers commits it pins. A method prime-rl
cannot run (FlashReinforce, SAO, BPCO, GroupwiseGrading, ReinforceAda; an ``icepop`` or ``tis``
correction; grpo or max_rl with one rollout per prompt) is refused with a ``ValueError`` that says
why and what to do instead.

One module per job:

    constants.py  the prime-rl facts the writer relies on (target commit, seats, tasksets' keys, limits), with sources
    renderers.py  renderers' MODEL_RENDERER_MAP and renderer names, and the renderer chosen for a model
    schema.py     prime-rl's `rl` schema (keys, types, ranges) and the version notes
    rules.py      ``validate_prime_rl``: the schema plus prime-rl's cross-field rules
    plan.py       what each method becomes in prime-rl: algorithm, knobs honored / ignored, refusals, each
                  registered for its entry in common/methods.py (``PLANS``, a trainers/plans.py ``Plans``)
    tasksets.py   what a taskset id means to prime-rl, and the train / eval source tables written for it
    options.py    what ``prime_rl_config`` takes, declared once (``PrimeRlOptions``: the library call, the MCP
                  schema and the command's flags)
    args.py       checks of the arguments
    knobs.py      the run knobs (W&B, checkpoints, run folder, nodes/SLURM, vLLM, eval split, schedule)
    overrides.py  the caller's dotted overrides
    tokenizers.py OPD's tokenizer agreement
    build.py      ``prime_rl_config``: the steps in order, the config dict, the result
    report.py     the TOML text, summary, next step, version notes, needs

The result, the argument plumbing and the atomic, confined, no-clobber write are shared with the other writers
(trainers/config_result.py, common/write.py).

Importing this package never imports torch or transformers.
"""

from pick_a_method._lazy import lazy_names

# Loaded on first use: the listing and `--help` import options.py alone.
_EXPORTS = {"PrimeRLConfig": "build", "prime_rl_config": "build", "PrimeRlOptions": "options",
            "PRIME_RL_COMMIT": "constants", "PRIME_RL_TAG": "constants", "validate_prime_rl": "rules"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
