"""The training task that an executor (:mod:`model_props.execution`) runs: one recipe up to a checkpoint.

Every run goes through :func:`~model_props.training.checkpoints.get_trained`, so results land in the model
cache and a run already there is loaded, not repeated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .recipes import Recipe

if TYPE_CHECKING:
    from .loop import Checkpoint

__all__ = ["train_until"]


def train_until(
    cache_dir: Path, data_root: Path | None, until: Mapping[str, Checkpoint], device: str, recipe: Recipe
) -> dict[str, Any]:
    """Train (or load) ``recipe`` up to the checkpoint ``until[recipe.name]``; its metrics and where it came from."""
    from .checkpoints import get_trained

    trained = get_trained(
        recipe, cache_dir=cache_dir, data_root=data_root, progress=False, checkpoint=until[recipe.name], device=device
    )
    return {
        **trained.metrics,
        "checkpoint": until[recipe.name],
        "from_cache": trained.from_cache,
        "sha256": trained.sha256,
    }
