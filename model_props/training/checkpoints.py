"""The model cache: recipes -> trained weights, served from a cache keyed by the recipe and the training code.

A run trained up to checkpoint ``c`` is the entry ``<cache>/models/<profile>/<key>.<c>/``: one
``<checkpoint>.safetensors`` per checkpoint it reached and a manifest (recipe, source hash, provenance, the
producing host and device, per checkpoint its step and metrics), published through the shared entry protocol
(:class:`~model_props.cache.CacheEntry`): built aside and renamed into place, every file verified by sha256
when read, so workers on one machine or many train a model once and a reader never loads a partial or mixed
entry. A ``warmup`` checkpoint is read from the run that went on to ``final`` when there is one, so a model's
two checkpoints come from one run. The key hashes every recipe field but the description, and the source of
the training code (:func:`code_hash`: the import closure of the training loop).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..cache import CacheEntry, entry_lock, source_hash
from ..data import ImageDataset, load_dataset
from ..errors import CacheError, RecipeError, choices
from ..provenance import provenance, versions
from ..zoo import Classifier, build_model
from .loop import CHECKPOINTS, Checkpoint, Run, train
from .recipes import Recipe

__all__ = ["TrainedModel", "get_trained", "code_hash", "TRAINING_CODE", "model_entry", "is_cached"]

TRAINING_CODE = "model_props.training.checkpoints"  # writes the entries; its import closure holds the training loop


@dataclass
class TrainedModel:
    recipe: Recipe
    checkpoint: Checkpoint
    model: Classifier  # in eval mode
    metrics: dict[str, Any]  # of this checkpoint: step, val/test accuracy and NLL, train seconds
    path: Path | None  # the safetensors file, None if not cached
    sha256: str | None
    from_cache: bool
    provenance: dict[str, Any]


def code_hash() -> str:
    """The source hash of the training code (the import closure of :data:`TRAINING_CODE`) and torch/timm/numpy."""
    return source_hash(TRAINING_CODE)


def model_entry(recipe: Recipe, cache_dir: Path, upto: Checkpoint = "final") -> CacheEntry:
    """The cache entry of the recipe's run trained up to ``upto``: one safetensors file per checkpoint it reached."""
    reached = CHECKPOINTS[: CHECKPOINTS.index(upto) + 1]
    folder = cache_dir / "models" / recipe.profile
    return CacheEntry(folder, f"{recipe.key(code_hash())}.{upto}", {c: f"{c}.safetensors" for c in reached})


def _entries(recipe: Recipe, cache_dir: Path, checkpoint: Checkpoint) -> list[CacheEntry]:
    """The entries that hold ``checkpoint``, the longest run first."""
    held: tuple[Checkpoint, ...] = CHECKPOINTS[CHECKPOINTS.index(checkpoint) :]
    return [model_entry(recipe, cache_dir, upto) for upto in reversed(held)]


def _cached(recipe: Recipe, cache_dir: Path, checkpoint: Checkpoint) -> tuple[CacheEntry, dict[str, Any]] | None:
    for entry in _entries(recipe, cache_dir, checkpoint):
        if (meta := entry.read(checkpoint)) is not None:
            return entry, meta
    return None


def _provenance(meta: dict[str, Any], entry: CacheEntry) -> dict[str, Any]:
    """Where a cached model came from: its recipe key (recipe + code hash), versions and machine."""
    return {
        "recipe_key": entry.name.rsplit(".", 1)[0],
        "code_hash": meta["code_hash"],
        **meta["provenance"],
        "produced_by": meta["produced_by"],
    }


def _write(recipe: Recipe, run: Run, entry: CacheEntry, device: str) -> dict[str, Any]:
    from safetensors.torch import save_file

    header = {"recipe": recipe.name, "recipe_key": entry.name.rsplit(".", 1)[0], "versions": versions()}

    def writer(name: str, state: dict[str, torch.Tensor]):
        # one metadata key holding sorted JSON: safetensors writes a metadata map in no fixed order
        meta_json = json.dumps({**header, "checkpoint": name}, sort_keys=True)
        return lambda tmp: save_file(state, str(tmp), metadata={"model_props": meta_json})

    meta = {
        "recipe": recipe.to_dict(),
        "recipe_fingerprint": recipe.fingerprint(),
        "code_hash": code_hash(),
        "provenance": provenance(device),
        "mean": run.model.mean.flatten().tolist(),
        "std": run.model.std.flatten().tolist(),
        "parameters": sum(p.numel() for p in run.model.parameters()),
        "checkpoints": {name: {"metrics": run.metrics[name]} for name in run.states},
    }
    return entry.write({name: writer(name, state) for name, state in run.states.items()}, meta, device=device)


def is_cached(recipe: Recipe, cache_dir: Path, checkpoint: Checkpoint = "final") -> bool:
    return _cached(recipe, cache_dir, checkpoint) is not None


def get_trained(
    recipe: Recipe,
    *,
    cache_dir: Path,
    checkpoint: Checkpoint = "final",
    data_root: Path | None = None,
    data: ImageDataset | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> TrainedModel:
    """Load the recipe's ``checkpoint`` from the cache, or train it (once, under a lock) and cache it."""
    from safetensors.torch import load_file

    if checkpoint not in CHECKPOINTS:
        raise RecipeError(f"checkpoint={checkpoint!r}; valid: {choices(CHECKPOINTS)}")
    if data is None:
        data = load_dataset(recipe.dataset, cache_dir=cache_dir, data_root=data_root, seed=0)
    elif data.name != recipe.dataset:  # the cache key names the recipe's dataset: never file other data under it
        raise RecipeError(f"recipe {recipe.name!r} trains on dataset={recipe.dataset!r}, got data {data.name!r}")
    run: Run | None = None
    with entry_lock(cache_dir / "models" / recipe.profile / recipe.key(code_hash())):
        found = _cached(recipe, cache_dir, checkpoint)
        if found is None:
            run = train(recipe, data, device=device, progress=progress, until=checkpoint)
            _write(recipe, run, model_entry(recipe, cache_dir, checkpoint), device)
            found = _cached(recipe, cache_dir, checkpoint)  # the published entry (another worker's if it won)
            if found is None:
                raise CacheError(f"the entry of recipe {recipe.name!r} was published but does not verify")
    entry, meta = found
    torch.manual_seed(recipe.seed)
    model = build_model(
        recipe.model,
        num_classes=data.num_classes,
        img_size=data.image_size,
        arch_kwargs=recipe.arch,
        mean=tuple(meta["mean"]),
        std=tuple(meta["std"]),
    )
    model.net.load_state_dict(load_file(str(entry.path(checkpoint))))
    model.to(device).eval()
    return TrainedModel(
        recipe,
        checkpoint,
        model,
        meta["checkpoints"][checkpoint]["metrics"],
        entry.path(checkpoint),
        entry.sha256(meta, checkpoint),
        run is None,
        _provenance(meta, entry),
    )
