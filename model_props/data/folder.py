"""A real image folder, streamed: a seeded, class-balanced sample of N images decoded on the fly.

Layout: ``ROOT/val/<class>/*.jpg`` (or ``ROOT/<class>/*.jpg``) for evaluation, optionally ``ROOT/train/<class>/``
for the measurements of the training loss. Files are listed, never read whole: a torch ``DataLoader`` with
workers decodes and transforms them (the model's own evaluation transform, which yields [0, 1] floats), and
decoding stops once N images are in, so memory is bounded by N images at the model's input size, whatever the
folder holds. Unreadable files (corrupt, or not images) are skipped and counted; images smaller than the model's
input are upsampled by the transform, and counted.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..errors import DatasetError
from .datasets import Split

__all__ = ["FolderSample", "class_folders", "evaluation_root", "read_folder"]


@dataclass(frozen=True)
class FolderSample:
    split: Split  # uint8 (N, 3, S, S), labels in the model's output indices
    paths: tuple[str, ...]  # the files the images were decoded from, in order
    files: int  # files under the class folders
    unreadable: int  # of those decoded, the ones that were corrupt or not images (skipped)
    upsampled: int  # images smaller than the model's input on their shorter side

    def describe(self, folder: Path) -> str:
        return (
            f"{len(self.split)} images of {folder} ({self.files} files; {self.unreadable} unreadable skipped; "
            f"{self.upsampled} smaller than the input, upsampled)"
        )


def evaluation_root(root: Path) -> Path:
    """``ROOT/val`` when it exists, else ``ROOT`` itself (its subfolders are the classes)."""
    if not root.is_dir():
        raise DatasetError(f"--claims-data-root {str(root)!r} is not a folder (expected DIR/val/<class>/*.jpg)")
    return root / "val" if (root / "val").is_dir() else root


def class_folders(folder: Path) -> list[Path]:
    """The class subfolders of ``folder``, sorted; two or more, or an error (one class measures nothing)."""
    classes = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(classes) < 2:
        raise DatasetError(
            f"image folder {str(folder)!r} has {len(classes)} class folder{'s' if len(classes) != 1 else ''}; "
            "give two or more (<class>/*.jpg each): accuracy and every claim need several classes"
        )
    return classes


def _interleaved(classes: list[Path], seed: int) -> list[tuple[Path, str]]:
    """Every file, shuffled within its class (seeded) and dealt class by class, so that any prefix is balanced."""
    rng = random.Random(seed)
    per_class = []
    for folder in classes:
        files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
        rng.shuffle(files)
        per_class.append([(f, folder.name) for f in files])
    order = []
    for i in range(max(len(f) for f in per_class)):
        order += [files[i] for files in per_class if i < len(files)]
    return order


class _Decoded(torch.utils.data.Dataset):
    def __init__(self, files: list[tuple[Path, str]], transform: Callable[[Any], torch.Tensor], size: int):
        self.files, self.transform, self.size = files, transform, size

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[torch.Tensor | None, str, bool, str]:
        from PIL import Image

        path, cls = self.files[i]
        try:
            with Image.open(path) as img:
                image = img.convert("RGB")
        except Exception:  # corrupt, truncated or not an image: skipped and counted by the reader
            return None, cls, False, str(path)
        x = self.transform(image)
        return (x * 255).round_().to(torch.uint8), cls, min(image.size) < self.size, str(path)


def _batches(dataset: _Decoded, workers: int) -> Iterator[list[tuple[torch.Tensor | None, str, bool, str]]]:
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=16, num_workers=workers, collate_fn=list, persistent_workers=False
    )
    yield from loader


def read_folder(
    folder: Path,
    label_of: Mapping[str, int],
    n_images: int,
    transform: Callable[[Any], torch.Tensor],
    size: int,
    *,
    seed: int = 0,
    workers: int = 2,
) -> FolderSample:
    """``n_images`` images of ``folder`` (fewer if it has fewer), class-balanced and seeded, transformed and
    quantised to uint8 (the PIL pipelines end in ``ToTensor``, so nothing is lost), labelled by ``label_of``."""
    classes = class_folders(folder)
    files = _interleaved(classes, seed)
    # at most ceil(N / C) images a class (the first N % C classes take one more): an unreadable file's place goes
    # to the next file of its own class, so the sample stays balanced
    quota = {c.name: n_images // len(classes) + (i < n_images % len(classes)) for i, c in enumerate(classes)}
    images, labels, paths = [], [], []
    unreadable = upsampled = 0
    for batch in _batches(_Decoded(files, transform, size), workers):
        for x, cls, small, path in batch:
            if x is None:
                unreadable += 1
            elif quota[cls] > 0:
                quota[cls] -= 1
                images.append(x)
                labels.append(label_of[cls])
                paths.append(path)
                upsampled += small
        if len(images) == n_images:
            break  # the loader's workers stop with it: nothing more is decoded than its prefetch
    if not images:
        raise DatasetError(f"image folder {str(folder)!r}: none of its {len(files)} files is a readable image")
    split = Split(torch.stack(images), torch.tensor(labels, dtype=torch.int64))
    return FolderSample(split, tuple(paths), len(files), unreadable, upsampled)
