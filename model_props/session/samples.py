"""Measurement samples: the seed each training seed draws its sample with (the two-stage design), and the identity of
the samples a report is measured on (equal identities pair a comparison)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measurements.inputs import TrainingLoss
from .tested import ModelUnderTest

__all__ = ["sample_seed", "identity"]


def sample_seed(measurement_seed: int, train_seed: int) -> int:
    """The seed of the measurement sample of training seed ``train_seed``: a 32-bit word drawn by numpy's
    ``SeedSequence`` from both seeds, so that every training seed has a sample of its own (test images, noise,
    corruption and attack draws, probe splits, Hessian batches), shared by every model compared within that seed, and
    the measurement seed (--claims-seed) still changes them all."""
    return int(np.random.SeedSequence([measurement_seed, train_seed]).generate_state(1)[0])


def identity(store: Any, tested: ModelUnderTest, kind: str, sampling: str) -> str:
    """(``store``: a :class:`~.store.ModelStore`, which calls this.) The identity of the samples a ``kind`` report of ``tested`` is measured on: equal identities mean the
    same test images (and noise draws), or the same augmented Hessian batches, so comparisons pair them."""
    data = store.dataset(tested.dataset).name
    if (folder := store.folder(data)) is not None:  # the same files pair, whatever each model's preprocessing
        train = sampling == "train_images" or kind == "spectrum"
        return f"folder:{folder.root}:{folder.files}:{'train' if train else 'test'}"
    if sampling != "train_images" and kind != "spectrum":
        return f"{data}:test"
    recipe = tested.recipe or store.profile.custom(tested.name)
    split = f"{data}:train:{recipe.subset}" + (f":{recipe.seed}" if recipe.subset < 1.0 else "")
    if kind != "spectrum":
        return split
    loss = TrainingLoss.of(recipe)
    return f"{split}:{loss.augment}:{loss.label_smoothing}:{loss.mixup_alpha}:{loss.cutmix_alpha}"
