"""Which evidence judges a model: the one rule for a verdict's scope, used by the session, the plugin's checks
before the run, and the reproduction test.

- ``study``: a reference or variant of a profile with a seed study, given no ``--checkpoint``: judged at
  **architecture** scope from the study's per-seed estimates, against the reviewed expectation snapshot; this
  machine's live weights are judged at checkpoint scope beside it and checked against the study (reproduction).
- ``replicas``: a model given 3 or more checkpoints (its training seeds): **architecture** scope over them.
- ``checkpoint``: anything else (one checkpoint, pretrained weights, a model trained here by the ``custom`` recipe,
  a mutant or a stand-in, a profile without a study, ``--claims-scope checkpoint``): **checkpoint** scope, these
  weights.

A request that cannot be met (``--claims-scope architecture`` with fewer than 3 checkpoints and no study, or 2
checkpoints, which are neither one set of weights nor enough seeds) is a :class:`~model_props.errors.ConfigError`.
"""

from __future__ import annotations

from typing import Literal

from ..errors import ConfigError
from .stats import MIN_SEEDS

__all__ = ["Route", "SCOPES", "route"]

Route = Literal["study", "replicas", "checkpoint"]
SCOPES = ("auto", "checkpoint", "architecture")  # what --claims-scope may ask for


def route(requested: str, model: str, *, checkpoints: int, reference: bool, has_study: bool,
          stand_in: bool = False) -> Route:  # fmt: skip
    """How ``model`` is judged (module docstring): ``checkpoints`` is how many --checkpoint files it has,
    ``reference`` whether it is a recipe of the profile, ``has_study`` whether the profile has a seed study, and
    ``stand_in`` whether it is a mutant or is judged with stand-ins for the models a claim compares with (both are
    about these weights only)."""
    if requested not in SCOPES:
        raise ConfigError(
            f"scope={requested!r} (--claims-scope or [tool.model_props] scope); valid: {', '.join(SCOPES)}"
        )
    if 1 < checkpoints < MIN_SEEDS or (requested == "architecture" and checkpoints < MIN_SEEDS and not stand_in
                                        and not (reference and has_study and checkpoints == 0)):  # fmt: skip
        study = " (or a reference of a profile with a seed study: model-props seed-study)" if reference else ""
        raise ConfigError(
            f"{model}: an architecture verdict needs at least {MIN_SEEDS} checkpoints (one per training seed), got "
            f"{checkpoints}{study}; give --checkpoint='runs/seed*.safetensors' with {MIN_SEEDS}+ files, or one "
            "checkpoint for a verdict about those weights (--claims-scope checkpoint)"
        )
    if stand_in or requested == "checkpoint":
        return "checkpoint"
    if checkpoints >= MIN_SEEDS:
        return "replicas"
    if reference and has_study and checkpoints == 0:
        return "study"
    return "checkpoint"
