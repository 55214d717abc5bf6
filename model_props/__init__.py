"""model-props: published findings about vision models as executable, statistically honest tests.

The public names below are imported lazily, so that loading the pytest plugin (or ``--help``) does not
import torch.
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
    "capture": "capture",
    "load_dataset": "data",
    "get_recipe": "recipes",
    "list_recipes": "recipes",
    "get_trained": "training",
    "Claim": "claims",
    "get_claim": "claims",
    "list_claims": "claims",
    "evaluate_claim": "evaluation",
    "measure_units": "measures",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'model_props' has no attribute {name!r}")
