"""Measurement samples: the seed each training seed draws its sample with (the two-stage design: a profile's training
seed, or a user's checkpoint file judged among its model's seeds), and the identity of the samples a report is
measured on (equal identities pair a comparison)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..training.loss import TrainingLoss
from ..verdicts.scope import route
from ..verdicts.stats import MIN_SEEDS
from .tested import ModelUnderTest

if TYPE_CHECKING:
    from ..config.settings import Settings

__all__ = ["sample_seed", "replica_sample_seed", "replica_files", "sample_seed_of", "identity"]


def sample_seed(measurement_seed: int, train_seed: int) -> int:
    """The seed of the measurement sample of training seed ``train_seed``: a 32-bit word drawn by numpy's
    ``SeedSequence`` from both seeds, so that every training seed has a sample of its own (test images, noise,
    corruption and attack draws, probe splits, Hessian batches), shared by every model compared within that seed, and
    the measurement seed (--claims-seed) still changes them all."""
    return int(np.random.SeedSequence([measurement_seed, train_seed]).generate_state(1)[0])


def replica_sample_seed(measurement_seed: int, checkpoint_sha256: str) -> int:
    """The seed of the measurement sample of one of a user's checkpoint files (one training seed of its model, an
    architecture verdict's replica): :func:`sample_seed` with the file's sha256 (a 256-bit integer) in place of the
    training seed, which the file does not record.

    Keyed by the weights, not by the file's place in the list: a replica keeps its sample, so its per-seed estimate,
    whatever the order of the files, and when a fourth file joins ``runs/seed*.safetensors`` (an index would move
    every file sorted after the new one onto another sample); two equal files, which are one seed, share theirs. The
    k replicas' samples are then k independent draws, as the t interval over seeds assumes (one sample shared by every
    replica undercovers: ``model_props.verdicts.coverage``), and none is a study seed's (keyed by the training seed),
    so a user's replicas and a reference's study seeds share nothing (Welch's interval)."""
    return sample_seed(measurement_seed, int(checkpoint_sha256, 16))


def replica_files(settings: Settings) -> frozenset[Path]:
    """The --checkpoint files of the user's models judged over their checkpoints (route ``replicas``: 3 or more
    files, each one training seed of its model)."""
    files: set[Path] = set()
    for name, paths in settings.checkpoints.items():
        if len(paths) < MIN_SEEDS:  # one file is one set of weights; two, a usage error the session raises first
            continue
        reference = name in settings.profile_data.recipes  # (a study decides only for a model without files)
        if route(settings.scope, name, checkpoints=len(paths), reference=reference, has_study=False) == "replicas":
            files.update(paths)
    return frozenset(files)


def sample_seed_of(store: Any, tested: ModelUnderTest) -> int:
    """(``store``: a :class:`~.model_store.ModelStore`.) The seed of the sample every report of ``tested``, and of a pair
    it leads, is drawn with. One of :func:`replica_files` (or a mutant of it) has its own,
    :func:`replica_sample_seed` of its file's sha256: replica i is the draw (training seed i, sample i) of the
    two-stage design, and its pair reports (against the partner's run, its seed control replica i + 1, the null)
    are all on sample i. Every other model is measured on the session's
    :attr:`~.model_store.ModelStore.sample_seed`: the profile's recipes (the study seeds' and the live seed's samples,
    and so every cached report of theirs, unchanged), their runs and controls, and a user's single checkpoint (whose
    comparisons with the references pair on that one sample)."""
    if tested.checkpoint_sha256 is not None and tested.checkpoint in replica_files(store.settings):
        return replica_sample_seed(store.settings.seed, tested.checkpoint_sha256)
    return store.sample_seed


def identity(store: Any, tested: ModelUnderTest, kind: str, sampling: str) -> str:
    """(``store``: a :class:`~.model_store.ModelStore`, which calls this.) The identity of the samples a ``kind`` report of ``tested`` is measured on: equal identities mean the
    same test images (and noise draws), or the same augmented Hessian batches, so comparisons pair them. A report on
    a sample other than the session's (:func:`sample_seed_of`) names its sample seed."""
    own = sample_seed_of(store, tested)
    drawn = "" if own == store.sample_seed else f":sample {own}"
    return _images(store, tested, kind, sampling) + drawn


def _images(store: Any, tested: ModelUnderTest, kind: str, sampling: str) -> str:
    """The images (and Hessian batches) of :func:`identity`, whichever sample seed draws from them."""
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
