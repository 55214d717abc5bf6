"""Recipes -> trained weights, served from a cache keyed by recipe + code hash.

Training keeps named checkpoints: ``warmup`` (the state at the end of the linear warm-up, where Park & Kim
measure Hessian spectra) and ``final``. A cache entry is ``<cache>/models/<profile>/<key>.<checkpoint>.safetensors``
per checkpoint plus one JSON sidecar (recipe, code hash, provenance, and per checkpoint its step, metrics and
sha256). A request for ``warmup`` alone trains only to the end of the warm-up (the warm-up schedule does not
depend on the budget, so that state equals a full run's). Entries are written atomically, weights first
and sidecar last, under a per-entry file lock, so parallel workers train a model once and a reader never
loads a partial or corrupt file: a sidecar that is missing, unparsable or whose checksum disagrees means
"train again".
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .cache import atomic_write, entry_lock, sha256_file
from .data import ImageDataset, Split, class_balanced_subset, load_dataset
from .data.augment import crop_flip, randaugment
from .errors import CacheError, RecipeError, choices
from .provenance import provenance, versions
from .recipes import Recipe
from .zoo import Classifier, build_model, check_finite, check_model

__all__ = ["CHECKPOINTS", "Checkpoint", "TrainedModel", "get_trained", "train", "evaluate", "channel_stats",
           "code_hash", "entry_paths", "training_split", "is_cached", "estimate_training_seconds"]

CHECKPOINTS = ("warmup", "final")
Checkpoint = Literal["warmup", "final"]
_CODE_FILES = ("training.py", "zoo", "data")


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
    """sha256 over the sources that determine a trained model, plus the torch/timm versions."""
    import timm

    root = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{torch.__version__}|{timm.__version__}".encode())
    for name in _CODE_FILES:
        for f in sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]:
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def entry_paths(recipe: Recipe, cache_dir: Path) -> tuple[dict[str, Path], Path]:
    """({checkpoint: weights file}, sidecar) of the recipe's cache entry."""
    folder, key = cache_dir / "models" / recipe.profile, recipe.key(code_hash())
    return {c: folder / f"{key}.{c}.safetensors" for c in CHECKPOINTS}, folder / f"{key}.json"


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


def training_split(recipe: Recipe, data: ImageDataset) -> Split:
    """The images a recipe trains on: its class-balanced ``subset`` of the training split."""
    return class_balanced_subset(data.train, recipe.subset, seed=recipe.seed)


def _batches(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    """Full batches of indices forever: a fresh seeded permutation per pass, its incomplete tail dropped."""
    while True:
        order = torch.randperm(n, generator=gen)
        for start in range(0, n - batch_size + 1, batch_size):
            yield order[start : start + batch_size]


def _checkpoint_metrics(model: Classifier, data: ImageDataset, step: int, device: str) -> dict[str, Any]:
    metrics: dict[str, Any] = {"step": step}
    for split in ("val", "test"):
        metrics.update({f"{split}_{k}": v for k, v in evaluate(model, getattr(data, split), device=device).items()})
    model.train()
    return metrics


@dataclass
class _Run:
    model: Classifier
    states: dict[str, dict[str, torch.Tensor]]
    metrics: dict[str, dict[str, Any]]


def train(recipe: Recipe, data: ImageDataset, *, device: str = "cpu", progress: bool = True,
          until: Checkpoint = "final") -> _Run:
    """Train from scratch, seeded and deterministic for a given recipe, data and device, up to ``until``.

    Returns the model at ``until`` and the state and metrics of every checkpoint passed on the way.
    """
    torch.manual_seed(recipe.seed)
    model = _build(recipe, data)
    check_model(model)
    model.to(device)
    split = training_split(recipe, data)
    if len(split) < recipe.batch_size:
        raise RecipeError(f"recipe {recipe.name!r}: {len(split)} training images cannot fill a batch of {recipe.batch_size}")
    total, warmup = recipe.schedule(len(split))
    stop = total if until == "final" else warmup
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
    states: dict[str, dict[str, torch.Tensor]] = {}
    metrics: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()

    def keep(name: str, step: int) -> None:
        states[name] = {k: v.detach().cpu().clone().contiguous() for k, v in model.net.state_dict().items()}
        metrics[name] = {**_checkpoint_metrics(model, data, step, device), "train_seconds": round(time.perf_counter() - start, 1),
                         "train_images": len(split)}

    bar = tqdm(total=stop, desc=f"train {recipe.name}", disable=not progress, leave=False, unit="step")
    model.train()
    batches = _batches(len(split), recipe.batch_size, gen)
    for step in range(stop):
        if step == warmup and until == "final":
            keep("warmup", step)
        idx = next(batches)
        images, y = split.images[idx], split.labels[idx].to(device)
        if "randaugment" in recipe.augment:
            images = randaugment(images)
        x = crop_flip(images.to(device).float().div_(255.0), recipe.augment, gen)
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
        sched.step_update(step + 1)
        bar.update()
        if step % 20 == 0:
            bar.set_postfix(loss=f"{loss.item():.3f}")
    bar.close()
    keep(until, stop)
    model.eval()
    return _Run(model, states, metrics)


def _read_entry(files: dict[str, Path], sidecar: Path, checkpoint: Checkpoint) -> dict[str, Any] | None:
    """The sidecar if it lists ``checkpoint`` and that file is intact, else None (the entry will be rebuilt)."""
    if not sidecar.is_file():
        return None
    try:
        meta = json.loads(sidecar.read_text())
        info = meta["checkpoints"][checkpoint]
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return None
    weights = files[checkpoint]
    if not weights.is_file() or info.get("sha256") != sha256_file(weights):
        return None
    return meta


def _provenance(meta: dict[str, Any], sidecar: Path) -> dict[str, Any]:
    """Where a cached model came from: its recipe key (recipe + code hash), versions and machine."""
    return {"recipe_key": sidecar.stem, "code_hash": meta["code_hash"], **meta["provenance"]}


def _write_entry(recipe: Recipe, run: _Run, files: dict[str, Path], sidecar: Path, device: str) -> dict[str, Any]:
    from safetensors.torch import save_file

    checkpoints = {}
    header = {"recipe": recipe.name, "recipe_key": sidecar.stem, "versions": versions()}
    try:
        for name, state in run.states.items():
            # one metadata key holding sorted JSON: safetensors writes a metadata map in no fixed order
            meta_json = json.dumps({**header, "checkpoint": name}, sort_keys=True)
            atomic_write(files[name], lambda tmp, s=state, m=meta_json: save_file(s, str(tmp), metadata={"model_props": m}))
            checkpoints[name] = {"file": files[name].name, "sha256": sha256_file(files[name]), "metrics": run.metrics[name]}
        meta = {
            "recipe": recipe.to_dict(),
            "recipe_fingerprint": recipe.fingerprint(),
            "code_hash": code_hash(),
            "provenance": provenance(device),
            "mean": run.model.mean.flatten().tolist(),
            "std": run.model.std.flatten().tolist(),
            "parameters": sum(p.numel() for p in run.model.parameters()),
            "checkpoints": checkpoints,
        }
        atomic_write(sidecar, lambda tmp: tmp.write_text(json.dumps(meta, indent=2, sort_keys=True)))
    except OSError as exc:
        raise CacheError(f"cannot write cache entry {str(sidecar)!r}: {exc}") from exc
    return meta


def is_cached(recipe: Recipe, cache_dir: Path, checkpoint: Checkpoint = "final") -> bool:
    files, sidecar = entry_paths(recipe, cache_dir)
    return _read_entry(files, sidecar, checkpoint) is not None


def estimate_training_seconds(recipe: Recipe, data: ImageDataset, *, device: str = "cpu") -> tuple[float, int]:
    """(seconds, steps) the recipe's training would take here: three timed optimizer steps on one batch."""
    model = _build(recipe, data).to(device).train()
    total, _ = recipe.schedule(len(training_split(recipe, data)))
    x, y = data.train.batch(slice(0, recipe.batch_size))
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr)
    timings = []
    for _ in range(4):  # the first step pays one-off costs
        start = time.perf_counter()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        timings.append(time.perf_counter() - start)
    return min(timings[1:]) * total, total


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
    files, sidecar = entry_paths(recipe, cache_dir)
    with entry_lock(sidecar):
        meta = _read_entry(files, sidecar, checkpoint)
        if meta is None:
            run = train(recipe, data, device=device, progress=progress, until=checkpoint)
            meta = _write_entry(recipe, run, files, sidecar, device)
            info = meta["checkpoints"][checkpoint]
            if checkpoint == "warmup":  # the run stopped there: the model is at the warm-up state
                run.model.net.load_state_dict(run.states["warmup"])
            return TrainedModel(recipe, checkpoint, run.model.eval(), info["metrics"], files[checkpoint], info["sha256"],
                                False, _provenance(meta, sidecar))
    torch.manual_seed(recipe.seed)
    model = build_model(
        recipe.model, num_classes=data.num_classes, img_size=data.image_size, arch_kwargs=recipe.arch,
        mean=tuple(meta["mean"]), std=tuple(meta["std"]),
    )
    model.net.load_state_dict(load_file(str(files[checkpoint])))
    model.to(device).eval()
    info = meta["checkpoints"][checkpoint]
    return TrainedModel(recipe, checkpoint, model, info["metrics"], files[checkpoint], info["sha256"], True,
                        _provenance(meta, sidecar))
