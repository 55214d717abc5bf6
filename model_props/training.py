"""Recipes -> trained weights, served from a cache keyed by recipe + code hash.

A cache entry is ``<cache>/models/<profile>/<key>.safetensors`` plus a JSON sidecar (recipe, code hash,
metrics, wall time, the weights' sha256). Entries are written atomically, weights first and sidecar last,
under a per-entry file lock, so parallel workers train a model once and a reader never loads a partial or
corrupt file: a sidecar that is missing, unparsable or whose checksum disagrees means "train again".
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from . import __version__
from .cache import atomic_write, entry_lock, sha256_file
from .data import ImageDataset, Split, class_balanced_subset, load_dataset
from .errors import CacheError, RecipeError
from .recipes import Recipe
from .zoo import Classifier, build_model, check_finite, check_model

__all__ = ["TrainedModel", "get_trained", "train", "evaluate", "channel_stats", "code_hash", "entry_paths"]

_CODE_FILES = ("training.py", "zoo", "data")


@dataclass
class TrainedModel:
    recipe: Recipe
    model: Classifier  # in eval mode
    metrics: dict[str, Any]
    path: Path | None  # the safetensors file, None if not cached
    from_cache: bool


def code_hash() -> str:
    """sha256 over the sources that determine a trained model, plus the torch/timm versions."""
    import timm

    root = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{torch.__version__}|{timm.__version__}".encode())
    for name in _CODE_FILES:
        for f in sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]:
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def entry_paths(recipe: Recipe, cache_dir: Path) -> tuple[Path, Path]:
    base = cache_dir / "models" / recipe.profile / recipe.key(code_hash())
    return base.with_suffix(".safetensors"), base.with_suffix(".json")


def _augment(x: torch.Tensor, recipe: Recipe, gen: torch.Generator) -> torch.Tensor:
    """Per-sample random crop (zero padding 4) and horizontal flip on a [0, 1] batch."""
    b, _, h, w = x.shape
    if "crop" in recipe.augment:
        pad = 4
        padded = F.pad(x, (pad, pad, pad, pad))
        dy = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
        dx = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
        rows = (dy[:, None] + torch.arange(h)).to(x.device)
        cols = (dx[:, None] + torch.arange(w)).to(x.device)
        bidx = torch.arange(b, device=x.device)[:, None, None]
        x = padded.permute(0, 2, 3, 1)[bidx, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
    if "flip" in recipe.augment:
        flip = (torch.rand(b, generator=gen) < 0.5).to(x.device).view(b, 1, 1, 1)
        x = torch.where(flip, x.flip(3), x)
    return x


def _randaugment(images: torch.Tensor) -> torch.Tensor:
    """RandAugment m9 n2 (torchvision) per sample on uint8 images (the paper recipe; slow on CPU)."""
    from torchvision.transforms import v2

    op = v2.RandAugment(num_ops=2, magnitude=9)
    return torch.stack([op(img) for img in images])


@torch.no_grad()
def evaluate(model: torch.nn.Module, split: Split, batch_size: int = 500, device: str = "cpu") -> dict[str, float]:
    """Top-1 accuracy and mean NLL (cross-entropy) over a split, in eval mode."""
    model.eval()
    correct, nll, n = 0, 0.0, len(split)
    for start in range(0, n, batch_size):
        x, y = split.batch(slice(start, start + batch_size))
        logits = model(x.to(device))
        check_finite(logits, f"model {getattr(model, 'name', '?')!r} logits")
        y = y.to(device)
        correct += (logits.argmax(1) == y).sum().item()
        nll += F.cross_entropy(logits, y, reduction="sum").item()
    return {"accuracy": correct / n, "nll": nll / n}


def _build(recipe: Recipe, data: ImageDataset) -> Classifier:
    mean, std = channel_stats(data.train)
    return build_model(
        recipe.model, num_classes=data.num_classes, img_size=data.image_size, arch_kwargs=recipe.arch,
        mean=mean, std=std,
    )


def channel_stats(split: Split) -> tuple[tuple[float, ...], tuple[float, ...]]:
    x = split.images.float().div(255.0)
    return tuple(x.mean(dim=(0, 2, 3)).tolist()), tuple(x.std(dim=(0, 2, 3)).tolist())


def train(recipe: Recipe, data: ImageDataset, *, device: str = "cpu", progress: bool = True) -> TrainedModel:
    """Train from scratch, seeded and deterministic for a given recipe, data and device."""
    torch.manual_seed(recipe.seed)
    model = _build(recipe, data)
    check_model(model)
    model.to(device)
    split = class_balanced_subset(data.train, recipe.subset, seed=recipe.seed)
    steps_per_epoch = math.ceil(len(split) / recipe.batch_size)
    total = recipe.epochs * steps_per_epoch
    warmup = int(recipe.warmup_epochs * steps_per_epoch)
    params = [p for p in model.parameters() if p.requires_grad]
    if recipe.optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=recipe.weight_decay)
    else:
        opt = torch.optim.SGD(params, lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay)
    from timm.scheduler import CosineLRScheduler

    sched = CosineLRScheduler(
        opt, t_initial=max(1, total - warmup), warmup_t=warmup, warmup_prefix=True, warmup_lr_init=recipe.lr * 1e-3,
        lr_min=0.0, t_in_epochs=False,
    )
    mixup = None
    if {"mixup", "cutmix"} & set(recipe.augment):
        from timm.data import Mixup

        mixup = Mixup(
            mixup_alpha=recipe.mixup_alpha if "mixup" in recipe.augment else 0.0,
            cutmix_alpha=recipe.cutmix_alpha if "cutmix" in recipe.augment else 0.0,
            label_smoothing=recipe.label_smoothing, num_classes=data.num_classes,
        )
    gen = torch.Generator().manual_seed(recipe.seed)
    start = time.perf_counter()
    step = 0
    bar = tqdm(total=total, desc=f"train {recipe.name}", disable=not progress, leave=False, unit="step")
    model.train()
    for _ in range(recipe.epochs):
        order = torch.randperm(len(split), generator=gen)
        for i in range(steps_per_epoch):
            idx = order[i * recipe.batch_size : (i + 1) * recipe.batch_size]
            images, y = split.images[idx], split.labels[idx].to(device)
            if "randaugment" in recipe.augment:
                images = _randaugment(images)
            x = _augment(images.to(device).float().div_(255.0), recipe, gen)
            if mixup is not None and len(idx) % 2 == 0:
                x, target = mixup(x, y)
                loss = torch.sum(-target * F.log_softmax(model(x), dim=-1), dim=-1).mean()
            else:
                loss = F.cross_entropy(model(x), y, label_smoothing=recipe.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if recipe.grad_clip:
                torch.nn.utils.clip_grad_norm_(params, recipe.grad_clip)
            opt.step()
            step += 1
            sched.step_update(step)
            bar.update()
            if step % 20 == 0:
                bar.set_postfix(loss=f"{loss.item():.3f}")
    bar.close()
    wall = time.perf_counter() - start
    model.eval()
    metrics = {f"test_{k}": v for k, v in evaluate(model, data.test, device=device).items()}
    metrics.update(train_seconds=round(wall, 1), steps=total, train_images=len(split))
    return TrainedModel(recipe, model, metrics, None, from_cache=False)


def _read_entry(weights: Path, sidecar: Path) -> dict[str, Any] | None:
    """The sidecar if the entry is complete and intact, else None (the entry will be rebuilt)."""
    if not (weights.is_file() and sidecar.is_file()):
        return None
    try:
        meta = json.loads(sidecar.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(meta, dict) or meta.get("weights_sha256") != sha256_file(weights):
        return None
    return meta


def _write_entry(trained: TrainedModel, weights: Path, sidecar: Path) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().cpu().contiguous() for k, v in trained.model.net.state_dict().items()}
    try:
        atomic_write(weights, lambda tmp: save_file(state, str(tmp)))
        meta = {
            "recipe": trained.recipe.to_dict(),
            "code_hash": code_hash(),
            "model_props_version": __version__,
            "metrics": trained.metrics,
            "mean": trained.model.mean.flatten().tolist(),
            "std": trained.model.std.flatten().tolist(),
            "parameters": sum(p.numel() for p in trained.model.parameters()),
            "weights_sha256": sha256_file(weights),
        }
        atomic_write(sidecar, lambda tmp: tmp.write_text(json.dumps(meta, indent=2, sort_keys=True)))
    except OSError as exc:
        raise CacheError(f"cannot write cache entry {str(weights)!r}: {exc}") from exc


def get_trained(
    recipe: Recipe,
    *,
    cache_dir: Path,
    data_root: Path | None = None,
    data: ImageDataset | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> TrainedModel:
    """Load the recipe's model from the cache, or train it (once, under a lock) and cache it."""
    from safetensors.torch import load_file

    if data is None:
        data = load_dataset(recipe.dataset, cache_dir=cache_dir, data_root=data_root, seed=0)
    elif data.name != recipe.dataset:  # the cache key names the recipe's dataset: never file other data under it
        raise RecipeError(f"recipe {recipe.name!r} trains on dataset={recipe.dataset!r}, got data {data.name!r}")
    weights, sidecar = entry_paths(recipe, cache_dir)
    with entry_lock(weights):
        meta = _read_entry(weights, sidecar)
        if meta is None:
            trained = train(recipe, data, device=device, progress=progress)
            _write_entry(trained, weights, sidecar)
            trained.path = weights
            return trained
    torch.manual_seed(recipe.seed)
    model = build_model(
        recipe.model, num_classes=data.num_classes, img_size=data.image_size, arch_kwargs=recipe.arch,
        mean=tuple(meta["mean"]), std=tuple(meta["std"]),
    )
    model.net.load_state_dict(load_file(str(weights)))
    model.to(device).eval()
    return TrainedModel(recipe, model, meta["metrics"], weights, from_cache=True)
