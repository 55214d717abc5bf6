"""A pretrained model under test (timm or torchvision weights, :mod:`model_props.zoo.pretrained`) and the user's
image folder as it sees it: the evaluation images and, where the folder has ``train/``, the training images, at
the model's input with the model's own transform (:mod:`model_props.data.folder`). Its verdicts are about these
weights (checkpoint scope): no recipe trained it here, so it has no warm-up state and no seeds.

The dataset's name, which keys every measurement of the model, ends in a digest of the decoded images, so that
other images (a changed folder, another seed, another count, another transform) are never read from the cache.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..claims.base import Part
from ..config.settings import Settings
from ..data import Split
from ..data.folder import class_folders, evaluation_root, read_folder
from ..errors import ConfigError
from ..training.loss import TrainingLoss
from ..zoo.pretrained import Pretrained, label_indices, load_pretrained
from .tested import ModelUnderTest, anatomy_on_cpu

__all__ = ["FolderData", "read_images", "pretrained_under_test", "folder_skip", "FOLDER_LOSS"]

# The training loss of a model the suite did not train, as the Hessian and the training NLL read it: plain
# cross-entropy on the folder's train/ images with the evaluation transform: no augmentation, no mixup or label
# smoothing, no weight-decay term (its recipe is unknown).
FOLDER_LOSS = TrainingLoss(augment=(), label_smoothing=0.0, weight_decay=0.0, mixup_alpha=0.0, cutmix_alpha=0.0)


@dataclass(frozen=True)
class FolderData:
    name: str  # the dataset name that keys the measurements (a digest of the decoded images)
    files: str  # a digest of the files the images came from: models measured on the same files pair per image
    root: Path
    test: Split
    train: Split | None  # None: the folder has no train/
    descriptions: tuple[str, ...]
    loss: TrainingLoss = FOLDER_LOSS

    def describe(self) -> str:
        training = (
            "; the training loss (Hessian, training NLL) is plain cross-entropy on train/ with the evaluation "
            "transform: no augmentation, no weight-decay term"
            if self.train is not None
            else f"; no {self.root}/train/: the parts that read the training loss are skipped"
        )
        return "; ".join(self.descriptions) + training


def read_images(root: Path, loaded: Pretrained, n_images: int, *, seed: int = 0) -> FolderData:
    """``n_images`` evaluation images of ``root`` (``root/val`` or ``root`` itself) and as many of ``root/train``."""
    root = root.expanduser()
    folder = evaluation_root(root)
    size = loaded.model.img_size
    workers = min(4, os.cpu_count() or 1)

    def read(path: Path):
        label_of = label_indices([c.name for c in class_folders(path)], loaded.labels, loaded.model.name)
        return read_folder(path, label_of, n_images, loaded.transform, size, seed=seed, workers=workers)

    test = read(folder)
    train = read(root / "train") if folder != root and (root / "train").is_dir() else None
    pixels, files = hashlib.sha256(), hashlib.sha256()
    for sample in (test, *([train] if train else [])):
        pixels.update(sample.split.images.numpy().tobytes())
        pixels.update(sample.split.labels.numpy().tobytes())
        files.update("\n".join(sample.paths).encode() + b"\0")
    name = f"folder:{root}@{size}px:{len(test.split)}img:{pixels.hexdigest()[:16]}"
    descriptions = tuple(s.describe(p) for s, p in ((test, folder), (train, root / "train")) if s is not None)
    return FolderData(name, files.hexdigest()[:16], root, test.split, train.split if train else None, descriptions)


class _Store(Protocol):
    """What a pretrained model needs of the :class:`~.model_store.ModelStore` (which imports this module)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def notify(self) -> Callable[[str], None]: ...

    def add_folder(self, folder: FolderData, classes: tuple[str, ...]) -> Any: ...

    def report_for(self, tested: ModelUnderTest, kind: str) -> Any: ...


def pretrained_under_test(store: _Store, name: str) -> ModelUnderTest:
    """The pretrained model ``name``, on ``--claims-images`` images of the folder ``--claims-data-root``."""
    s = store.settings
    if name in s.checkpoints:
        raise ConfigError(
            f"--model {name!r} names its own weights; give a local file as timm:NAME@pretrained=FILE or "
            "torchvision:NAME@WEIGHTS=FILE, not --checkpoint"
        )
    if s.data_root is None:
        raise ConfigError(
            f"--model {name!r}: a pretrained model is measured on your images; give --claims-data-root=DIR "
            "(DIR/val/<class>/*.jpg, optionally DIR/train/<class>/ for the training loss)"
        )
    loaded = load_pretrained(name)
    for note in loaded.notes:
        store.notify(note)
    folder = read_images(s.data_root, loaded, s.images, seed=s.seed)
    data = store.add_folder(folder, tuple(names[0] for names in loaded.labels))
    model = loaded.model.to(s.device).eval()
    tested = ModelUnderTest(name, model, anatomy_on_cpu(model), {}, None, None, loaded.sha256, dataset=data.name)
    fit = store.report_for(tested, "fit")
    tested.metrics.update(test_accuracy=fit.accuracy(), test_nll=fit.nll())
    store.notify(f"{name}: test accuracy {fit.accuracy():.3f} on {folder.describe()}")
    return tested


def folder_skip(part: Part, folder: FolderData, others: Mapping[str, tuple[str, FolderData | None] | None],
                batch_size: int) -> str | None:  # fmt: skip
    """Why ``part`` does not apply to a model measured on the user's images (``folder``), if it does not: it compares
    with a model (``others``: each it reads beside the model, with the name and images of the stand-in the user
    gave for it, or None) not measured on the same files of the folder, or reads a training loss the folder cannot
    give (Hessian batches of ``batch_size`` training images)."""
    for name, comparator in others.items():
        if comparator is None:
            return (f"it compares with the profile's reference {name}, trained and measured on its own images; "
                    f"give a comparator measured on yours: --claims-versus {name}=SPEC")  # fmt: skip
        stand_in, other = comparator
        if other is None or (other.root, other.files) != (folder.root, folder.files):
            return f"its comparator {stand_in} (for {name}) is not measured on the same images"
    if folder.train is None and (part.report == "spectrum" or part.sampling == "train_images"):
        return "it reads the training loss, and the image folder has no train/<class>/ images to measure it on"
    if part.report == "spectrum" and folder.train is not None and len(folder.train) < batch_size:
        return (
            f"its Hessian batches take {batch_size} training images, and the folder's train/ gave {len(folder.train)}"
        )
    return None
