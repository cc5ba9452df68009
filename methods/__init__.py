"""pick-a-method's training methods: validated method objects and their update rules in torch.

``import pick_a_method.methods`` is cheap and never imports torch; the update rules import it on first call.

    >>> from pick_a_method import methods
    >>> m = methods.make_method("FlashReinforce", trust=0.01)
    >>> upd = m.update(trajectories)            # list of dicts or a methods.Batch (log-probs may carry grad)
    >>> upd.loss(logprobs).backward()           # grad wrt logprobs == -upd.coefficients

examples/train_tiny.py is a complete training loop around these calls.
"""

from pick_a_method.methods import defaults, objects
from pick_a_method.methods.batch import Batch
from pick_a_method.methods.objects import *  # noqa: F403 - the method objects and their registry, as objects.__all__ lists them
from pick_a_method.methods.preview import NextStep, PreviewRow, UpdatePreview, preview_update
from pick_a_method.methods.update import Update

__all__ = [
    "defaults",
    "Batch",
    "Update",
    "preview_update",
    "UpdatePreview",
    "PreviewRow",
    "NextStep",
]
__all__ += objects.__all__
