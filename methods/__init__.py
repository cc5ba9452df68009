"""pick-a-method's training methods: validated method objects and their update rules in torch.

``import pick_a_method.methods`` is cheap and never imports torch; the update rules import it on first call.
Names load their module on first use (PEP 562), so the server's start-up and the command line's ``--help``
don't load the method objects or the config writers.

    >>> from pick_a_method import methods
    >>> m = methods.make_method("FlashReinforce", trust=0.01)
    >>> upd = m.update(trajectories)            # list of dicts or a methods.Batch (log-probs may carry grad)
    >>> upd.loss(logprobs).backward()           # grad wrt logprobs == -upd.coefficients

examples/train_tiny.py is a complete training loop around these calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pick_a_method._lazy import lazy_names
from pick_a_method.common.methods import METHODS as _TABLE

# The method objects (one per table entry with an update rule, named by the entry) and their registry: listing them
# reads the torch-free method table and imports no object (tests/server/test_lazy_imports.py checks it against
# objects.__all__).
_OBJECTS = ("Method", *(m.object_name for m in _TABLE.values() if m.rule), "METHODS", "make_method", "method_names")

# name -> the submodule that defines it
_EXPORTS = {
    "Batch": "batch",
    "Update": "update",
    "preview_update": "preview", "UpdatePreview": "preview", "PreviewRow": "preview", "NextStep": "preview",
    **dict.fromkeys(_OBJECTS, "objects"),
}

__all__ = ["defaults", "Batch", "Update", "preview_update", "UpdatePreview", "PreviewRow", "NextStep", *_OBJECTS]

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from pick_a_method.methods import defaults, objects
    from pick_a_method.methods.batch import Batch
    from pick_a_method.methods.objects import *  # noqa: F403
    from pick_a_method.methods.preview import NextStep, PreviewRow, UpdatePreview, preview_update
    from pick_a_method.methods.update import Update


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__, globals())
