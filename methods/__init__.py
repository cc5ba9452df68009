"""pick-a-method's training methods: validated method objects and their update rules in torch.

``import methods`` is cheap and never imports torch; the update rules import it on first call.

    >>> import methods
    >>> m = methods.make_method("FlashReinforce", trust=0.01)
    >>> upd = m.update(trajectories)            # list of dicts or a methods.Batch
    >>> upd.loss(logprobs).backward()           # grad wrt logprobs == -upd.coefficients
"""

from methods import defaults, objects
from methods.batch import Batch
from methods.objects import *  # noqa: F403 - the method objects and their registry, as objects.__all__ lists them
from methods.preview import NextStep, PreviewRow, UpdatePreview, preview_update
from methods.update import Update

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
