"""model-props: published findings about vision models as executable, statistically honest tests.

The public names below are imported lazily, so that loading the pytest plugin (or ``--help``) does not
import torch.

Layers, lowest first (each subpackage's ``__init__`` says what it owns and what it may import; a test checks
the import graph): :mod:`.errors` < :mod:`.cache` | :mod:`.provenance` < :mod:`.zoo` | :mod:`.data` |
:mod:`.execution` < :mod:`.anatomy` | :mod:`.training` < :mod:`.measurements` (its functional core,
:mod:`.measurements.functional`, beneath the rest) < :mod:`.claims` < :mod:`.verdicts` < :mod:`.config` <
:mod:`.store` < :mod:`.study` < :mod:`.session` | :mod:`.reporting` | :mod:`.gate` < :mod:`.plugin` | :mod:`.cli` |
:mod:`.mutation` | :mod:`.suite`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "ModelPropsError": "errors",
    "build_model": "zoo",
    "load_checkpoint": "zoo",
    "anatomy": "anatomy",
    "capture": "anatomy",
    "load_dataset": "data",
    "get_recipe": "training.profiles",
    "list_recipes": "training.profiles",
    "get_trained": "training.checkpoints",
    "Claim": "claims",
    "get_claim": "claims",
    "list_claims": "claims",
    "evaluate_checkpoint": "claims",
    "evaluate_architecture": "claims",
    "measure_units": "measurements.units",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'model_props' has no attribute {name!r}")
