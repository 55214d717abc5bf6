"""The offline default dataset and the other loaders."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model_props.data import SHAPES, class_balanced_subset, load_dataset, render_dead_leaves
from model_props.data import datasets as datasets_module
from model_props.errors import DatasetError

# Natural photographs have radially averaged power spectra ~ 1/f^a with a in about [1.6, 3.2]; the
# issue asks for a log-log slope between -3 and -1.5.
SLOPE_RANGE = (-3.0, -1.5)


@pytest.fixture
def small_sizes(monkeypatch):
    monkeypatch.setattr(datasets_module, "DEADLEAVES_SIZES", {"train": 200, "test": 100})
    monkeypatch.setattr(datasets_module, "DEADLEAVES_VALIDATION", 50)


def radial_power_slope(images: np.ndarray) -> float:
    """Slope of log power vs log radial frequency, grey images (N, H, W), mean over images, f in [2, H/2)."""
    n, h, w = images.shape
    grey = images - images.mean(axis=(1, 2), keepdims=True)
    power = (np.abs(np.fft.fftshift(np.fft.fft2(grey), axes=(1, 2))) ** 2).mean(axis=0)
    yy, xx = np.indices((h, w))
    r = np.hypot(yy - h // 2, xx - w // 2).round().astype(int)
    radial = np.bincount(r.ravel(), power.ravel()) / np.bincount(r.ravel())
    f = np.arange(2, h // 2)
    return float(np.polyfit(np.log(f), np.log(radial[f]), 1)[0])


def test_rendering_is_deterministic_in_the_seed():
    labels = np.arange(40) % 10
    a, b = render_dead_leaves(labels, seed=7), render_dead_leaves(labels, seed=7)
    assert a.dtype == np.uint8 and a.shape == (40, 32, 32, 3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, render_dead_leaves(labels, seed=8))


def test_rendering_does_not_depend_on_chunking():
    labels = np.arange(30) % 10
    assert np.array_equal(render_dead_leaves(labels, seed=3, chunk=4), render_dead_leaves(labels, seed=3, chunk=1000))


def test_spectrum_slope_is_natural_image_like(dataset):
    images = dataset.test.images[:512].float().mean(dim=1).numpy()
    slope = radial_power_slope(images)
    assert SLOPE_RANGE[0] <= slope <= SLOPE_RANGE[1], f"radial power-spectrum slope {slope:.2f} outside {SLOPE_RANGE}"


def test_default_dataset_is_balanced_and_in_range(dataset):
    assert dataset.classes == SHAPES
    assert dataset.train.images.shape[1:] == (3, 32, 32) and dataset.train.images.dtype == torch.uint8
    for split, n in (("train", 12_000), ("val", 2_000), ("test", 2_000)):
        counts = torch.bincount(getattr(dataset, split).labels, minlength=10)
        assert counts.tolist() == [n // 10] * 10, split
    x, _ = dataset.test.batch(slice(0, 8))
    assert 0.0 <= x.min() and x.max() <= 1.0


def test_cached_dataset_loads_identically(tmp_path, small_sizes):
    first = load_dataset("deadleaves", cache_dir=tmp_path, seed=1)
    (cached,) = (tmp_path / "data").glob("deadleaves-*.npz")
    mtime = cached.stat().st_mtime_ns
    second = load_dataset("deadleaves", cache_dir=tmp_path, seed=1)
    assert cached.stat().st_mtime_ns == mtime, "second load rewrote the cache"
    assert torch.equal(first.train.images, second.train.images) and torch.equal(first.test.labels, second.test.labels)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_dataset_cache_is_rebuilt(tmp_path, small_sizes, damage):
    fresh = load_dataset("deadleaves", cache_dir=tmp_path, seed=2)
    (cached,) = (tmp_path / "data").glob("deadleaves-*.npz")
    data = cached.read_bytes()
    cached.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"not an npz file")
    rebuilt = load_dataset("deadleaves", cache_dir=tmp_path, seed=2)
    assert torch.equal(fresh.train.images, rebuilt.train.images)
    assert np.load(cached)["train_images"].shape == (200, 32, 32, 3)


def test_validation_is_carved_from_the_training_images(tmp_path, small_sizes):
    """Train and val are disjoint parts of the generated training images; the carve is seeded and fixed."""
    data = load_dataset("deadleaves", cache_dir=tmp_path, seed=1)
    assert (len(data.train), len(data.val), len(data.test)) == (150, 50, 100)
    pool = np.load(next((tmp_path / "data").glob("deadleaves-*.npz")))["train_images"]
    as_rows = {bytes(img) for img in pool}
    train_rows = {bytes(img.permute(1, 2, 0).numpy()) for img in data.train.images}
    val_rows = {bytes(img.permute(1, 2, 0).numpy()) for img in data.val.images}
    assert train_rows | val_rows <= as_rows and not train_rows & val_rows
    again = load_dataset("deadleaves", cache_dir=tmp_path, seed=1)
    assert torch.equal(again.val.images, data.val.images)


def test_class_balanced_subset_keeps_every_class_in_proportion(dataset):
    sub = class_balanced_subset(dataset.train, 0.0625, seed=0)
    counts = torch.bincount(sub.labels, minlength=10)
    assert counts.tolist() == [round(0.0625 * 1200)] * 10
    again = class_balanced_subset(dataset.train, 0.0625, seed=0)
    assert torch.equal(sub.images, again.images)
    with pytest.raises(DatasetError, match=r"fraction=0 must be in \(0, 1\]"):
        class_balanced_subset(dataset.train, 0, seed=0)


def test_missing_cifar_root_offline_says_where_to_put_it(tmp_path):
    with pytest.raises(
        DatasetError, match=r"'cifar100' not found under --claims-data-root=.*offline.*cifar-100-python"
    ):
        load_dataset("cifar100", cache_dir=tmp_path, data_root=tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="needs --claims-data-root"):
        load_dataset("cifar10", cache_dir=tmp_path, data_root=None)


def test_unknown_dataset_lists_valid_names(tmp_path):
    with pytest.raises(
        DatasetError, match=r"unknown dataset='imagenet'; valid: .*'cifar10'.*'deadleaves'.*'folder:PATH'"
    ):
        load_dataset("imagenet", cache_dir=tmp_path)


def test_image_folder_tree(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for split, n in (("train", 3), ("val", 2)):
        for cls in ("cat", "dog"):
            (tmp_path / split / cls).mkdir(parents=True)
            for i in range(n):
                Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)).save(
                    tmp_path / split / cls / f"{i}.png"
                )
    data = load_dataset(f"folder:{tmp_path}", cache_dir=tmp_path / "cache", img_size=32)
    assert data.classes == ("cat", "dog")
    assert data.test.images.shape == (4, 3, 32, 32)
    assert data.train.labels.tolist() == [0, 0, 1, 1] and data.val.labels.tolist() == [0, 1]  # one per class carved


def test_image_folder_without_val_split(tmp_path):
    (tmp_path / "train" / "a").mkdir(parents=True)
    with pytest.raises(DatasetError, match="neither a 'val' nor a 'test' subfolder"):
        load_dataset(f"folder:{tmp_path}", cache_dir=tmp_path)
