"""Datasets as in-memory uint8 tensors: the procedural default, CIFAR-10/100 and ImageFolder trees.

Every dataset is a pair of :class:`Split` (uint8 images (N, 3, H, W), int64 labels) so that training and
measurements batch by slicing, with no per-sample Python on the hot path. Images are scaled to [0, 1] at
use; normalisation lives inside the model wrapper.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from ..cache.files import atomic_write, entry_lock
from ..cache.source import source_hash
from ..errors import DatasetError, choices
from .deadleaves import SHAPES, DeadLeavesConfig, render_dead_leaves

__all__ = [
    "Split",
    "ImageDataset",
    "load_dataset",
    "class_balanced_subset",
    "carve_validation",
    "DATASETS",
    "DEFAULT_DATASET",
    "VALIDATION_SEED",
    "split_size",
]

DEFAULT_DATASET = "deadleaves"
DEADLEAVES = {"deadleaves": DeadLeavesConfig(), "deadleaves-hard": DeadLeavesConfig(distractors=0.4)}
DATASETS = (*DEADLEAVES, "cifar10", "cifar100", "folder:PATH")
# Dead leaves: 14,000 generated training images, of which 2,000 become the validation split (12,000 train).
DEADLEAVES_SIZES = {"train": 14_000, "test": 2_000}
DEADLEAVES_VALIDATION = 2_000
VALIDATION_FRACTION = 0.1  # of the training images, for every other dataset
VALIDATION_SEED = 0  # one validation split per dataset, whatever the recipe's seed


@dataclass(frozen=True)
class Split:
    images: torch.Tensor  # uint8 (N, 3, H, W)
    labels: torch.Tensor  # int64 (N,)

    def __len__(self) -> int:
        return len(self.labels)

    def batch(self, index: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor]:
        """Images in [0, 1] as float32 and their labels."""
        return self.images[index].float().div_(255.0), self.labels[index]


@dataclass(frozen=True)
class ImageDataset:
    """``train`` and ``val`` are disjoint parts of the source's training images; ``test`` is its test set.

    Recipes train on ``train``; hyperparameters are chosen on ``val``; claims measure on ``test``.
    """

    name: str
    classes: tuple[str, ...]
    train: Split
    val: Split
    test: Split

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def image_size(self) -> int:
        return int(self.train.images.shape[-1])


def class_balanced_subset(split: Split, fraction: float, seed: int) -> Split:
    """The same random ``fraction`` of every class (at least one image each), in a seeded order."""
    if not 0.0 < fraction <= 1.0:
        raise DatasetError(f"subset fraction={fraction} must be in (0, 1]")
    if fraction == 1.0:
        return split
    gen = torch.Generator().manual_seed(seed)
    keep = []
    for cls in torch.unique(split.labels):
        idx = torch.nonzero(split.labels == cls).flatten()
        n = max(1, round(fraction * len(idx)))
        keep.append(idx[torch.randperm(len(idx), generator=gen)[:n]])
    index = torch.sort(torch.cat(keep)).values
    return Split(split.images[index], split.labels[index])


def carve_validation(split: Split, n_val: int, seed: int = VALIDATION_SEED) -> tuple[Split, Split]:
    """(train, val): a seeded, class-balanced ``n_val`` images (``n_val / classes`` per class) carved out of ``split``."""
    classes = torch.unique(split.labels)
    per_class = n_val // len(classes)
    if per_class < 1:
        raise DatasetError(
            f"a validation split of {n_val} images cannot hold one image of each of {len(classes)} classes"
        )
    gen = torch.Generator().manual_seed(seed)
    chosen = []
    for cls in classes:
        idx = torch.nonzero(split.labels == cls).flatten()
        if len(idx) <= per_class:
            raise DatasetError(
                f"class {int(cls)} has {len(idx)} training images; a validation split needs more than {per_class}"
            )
        chosen.append(idx[torch.randperm(len(idx), generator=gen)[:per_class]])
    val_mask = torch.zeros(len(split), dtype=torch.bool)
    val_mask[torch.cat(chosen)] = True
    return Split(split.images[~val_mask], split.labels[~val_mask]), Split(
        split.images[val_mask], split.labels[val_mask]
    )


def _with_validation(name: str, classes: tuple[str, ...], pool: Split, test: Split, n_val: int) -> ImageDataset:
    train, val = carve_validation(pool, n_val)
    return ImageDataset(name, classes, train, val, test)


def _deadleaves(name: str, cache_dir: Path, seed: int, img_size: int = 32) -> ImageDataset:
    config = DEADLEAVES[name]
    if img_size != config.size:  # the same scene statistics at another resolution
        scale = img_size / config.size
        config = dataclasses.replace(config, size=img_size, r_min=config.r_min * scale, r_max=config.r_max * scale)
    key = hashlib.sha256(repr((config, DEADLEAVES_SIZES, source_hash(__name__))).encode()).hexdigest()[:10]
    path = cache_dir / "data" / f"{name}-{config.size}px-s{seed}-{key}.npz"
    with entry_lock(path):
        arrays = _read_npz(path)
        if arrays is None:
            arrays = {}
            for i, (split, n) in enumerate(DEADLEAVES_SIZES.items()):
                labels = np.random.default_rng([seed, i]).permutation(np.arange(n) % len(SHAPES))
                arrays[f"{split}_images"] = render_dead_leaves(labels, seed=seed * 1000 + i, config=config)
                arrays[f"{split}_labels"] = labels.astype(np.int64)
            atomic_write(path, lambda tmp: _write_npz(tmp, arrays))
    splits = {
        s: Split(
            torch.from_numpy(arrays[f"{s}_images"]).permute(0, 3, 1, 2).contiguous(),
            torch.from_numpy(arrays[f"{s}_labels"]),
        )
        for s in DEADLEAVES_SIZES
    }
    return _with_validation(name, SHAPES, splits["train"], splits["test"], DEADLEAVES_VALIDATION)


def _write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, **cast(dict[str, Any], arrays))  # array names, never savez's own allow_pickle


def _read_npz(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays, or None when the file is absent or unreadable (then it is rebuilt)."""
    if not path.exists():
        return None
    try:
        with np.load(io.BytesIO(path.read_bytes())) as npz:
            return {k: npz[k] for k in npz.files}
    except Exception:  # truncated or corrupt: rebuild rather than load garbage
        return None


def _torchvision_split(dataset) -> Split:
    images = torch.from_numpy(np.asarray(dataset.data)).permute(0, 3, 1, 2).contiguous()
    return Split(images, torch.as_tensor(dataset.targets, dtype=torch.int64))


def _cifar(name: str, root: Path | None, download: bool) -> ImageDataset:
    from torchvision import datasets as tvd

    cls = {"cifar10": tvd.CIFAR10, "cifar100": tvd.CIFAR100}[name]
    if root is None:
        raise DatasetError(f"dataset={name!r} needs --claims-data-root=DIR (a folder holding or receiving it)")
    try:
        train = cls(str(root), train=True, download=download)
        test = cls(str(root), train=False, download=download)
    except Exception as exc:  # torchvision raises RuntimeError or URLError depending on what is missing
        raise DatasetError(
            f"dataset={name!r} not found under --claims-data-root={str(root)!r} and could not be downloaded "
            f"(offline?). Put the extracted python version of {name} there "
            f"(e.g. {root}/{'cifar-10-batches-py' if name == 'cifar10' else 'cifar-100-python'}). Cause: {exc}"
        ) from exc
    pool = _torchvision_split(train)
    return _with_validation(
        name, tuple(train.classes), pool, _torchvision_split(test), round(VALIDATION_FRACTION * len(pool))
    )


def _folder(path: Path, img_size: int) -> ImageDataset:
    """An ImageFolder tree ``PATH/train/<class>/*`` and ``PATH/val/<class>/*`` (or ``test``)."""
    from torchvision import datasets as tvd
    from torchvision import transforms as T

    if not (path / "train").is_dir():
        raise DatasetError(f"folder dataset {str(path)!r} has no 'train' subfolder (expected PATH/train/<class>/...)")
    test_dir = next((path / d for d in ("val", "test") if (path / d).is_dir()), None)
    if test_dir is None:
        raise DatasetError(f"folder dataset {str(path)!r} has neither a 'val' nor a 'test' subfolder")
    tf = T.Compose([T.Resize(img_size), T.CenterCrop(img_size), T.PILToTensor()])
    splits = []
    for d in (path / "train", test_dir):
        ds = tvd.ImageFolder(str(d), transform=tf)
        images = torch.stack([ds[i][0] for i in range(len(ds))])  # ImageFolder's loader converts to RGB
        splits.append((Split(images, torch.as_tensor(ds.targets, dtype=torch.int64)), tuple(ds.classes)))
    (train, classes), (test, test_classes) = splits
    if classes != test_classes:
        raise DatasetError(
            f"folder dataset {str(path)!r}: train classes {classes} differ from {test_dir.name} classes {test_classes}"
        )
    n_val = max(len(classes), round(VALIDATION_FRACTION * len(train)))
    return _with_validation(f"folder:{path}", classes, train, test, n_val)


def load_dataset(
    name: str = DEFAULT_DATASET,
    *,
    cache_dir: Path,
    data_root: Path | None = None,
    seed: int = 0,
    img_size: int = 32,
    download: bool = False,
) -> ImageDataset:
    """Load a dataset by name: ``deadleaves``, ``deadleaves-hard``, ``cifar10``, ``cifar100`` or ``folder:PATH``,
    optionally at another image size: ``NAME@64`` (dead leaves drawn at that size with leaves scaled alike,
    CIFAR resized, a folder's images resized to it)."""
    base, size = split_size(name)
    if size is not None:
        data = load_dataset(base, cache_dir=cache_dir, data_root=data_root, seed=seed, img_size=size, download=download)
        return dataclasses.replace(data, name=name)
    if name in DEADLEAVES:
        return _deadleaves(name, cache_dir, seed, img_size)
    if name in ("cifar10", "cifar100"):
        return _resized(_cifar(name, data_root, download), img_size)
    if name.startswith("folder:"):
        return _folder(Path(name.removeprefix("folder:")).expanduser(), img_size)
    raise DatasetError(f"unknown dataset={name!r}; valid: {choices(DATASETS)} (each also as NAME@SIZE)")


def split_size(name: str) -> tuple[str, int | None]:
    """``'deadleaves@64'`` -> ``('deadleaves', 64)``; a name without a size -> ``(name, None)``."""
    base, at, size = name.rpartition("@")
    if at and size.isdigit():
        if int(size) < 8:
            raise DatasetError(f"dataset={name!r}: image size {size} is too small; give 8 or more")
        return base, int(size)
    return name, None


def _resized(data: ImageDataset, img_size: int) -> ImageDataset:
    if data.image_size == img_size:
        return data
    import torch.nn.functional as F

    def resize(split: Split) -> Split:
        x = F.interpolate(split.images.float(), size=(img_size, img_size), mode="bilinear", antialias=True)
        return Split(x.round().clamp(0, 255).to(torch.uint8), split.labels)

    return dataclasses.replace(data, train=resize(data.train), val=resize(data.val), test=resize(data.test))
