"""The training loop: a recipe and a dataset -> weights at the warm-up and final checkpoints.

Seeded and deterministic for a given recipe, data and device (on one machine: CPU kernels differ across
machines). The budget is counted in optimizer steps, never wall-clock time; the linear warm-up is followed
by a cosine decay (timm's scheduler). ``warmup`` is the state at the end of the warm-up, where Park & Kim
measure Hessian spectra; a run asked to stop there trains only that far (the warm-up schedule does not
depend on the budget, so that state equals a full run's).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from ..data import ImageDataset, Split, class_balanced_subset
from ..errors import RecipeError
from ..zoo import Classifier, build_model, check_finite, check_model
from .loss import TrainingLoss, mixing_seed
from .recipes import Recipe

__all__ = [
    "CHECKPOINTS",
    "Checkpoint",
    "Run",
    "train",
    "evaluate",
    "channel_stats",
    "training_split",
    "estimate_training_seconds",
    "build_for",
]

Checkpoint = Literal["warmup", "final"]
CHECKPOINTS: tuple[Checkpoint, ...] = ("warmup", "final")


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


def build_for(recipe: Recipe, data: ImageDataset) -> Classifier:
    mean, std = channel_stats(data.train)
    return build_model(
        recipe.model,
        num_classes=data.num_classes,
        img_size=data.image_size,
        arch_kwargs=recipe.arch,
        mean=mean,
        std=std,
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
class Run:
    model: Classifier
    states: dict[str, dict[str, torch.Tensor]]
    metrics: dict[str, dict[str, Any]]


def train(
    recipe: Recipe, data: ImageDataset, *, device: str = "cpu", progress: bool = True, until: Checkpoint = "final"
) -> Run:
    """Train from scratch, seeded and deterministic for a given recipe, data and device, up to ``until``.

    Returns the model at ``until`` and the state and metrics of every checkpoint passed on the way.
    """
    torch.manual_seed(recipe.seed)
    model = build_for(recipe, data)
    check_model(model)
    model.to(device)
    split = training_split(recipe, data)
    if len(split) < recipe.batch_size:
        raise RecipeError(
            f"recipe {recipe.name!r}: {len(split)} training images cannot fill a batch of {recipe.batch_size}"
        )
    total, warmup = recipe.schedule(len(split))
    stop = total if until == "final" else warmup
    params = [p for p in model.parameters() if p.requires_grad]
    opt: torch.optim.Optimizer
    if recipe.optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=recipe.weight_decay)
    else:
        opt = torch.optim.SGD(params, lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay)
    from timm.scheduler import CosineLRScheduler

    sched = CosineLRScheduler(
        opt,
        t_initial=max(1, total - warmup),
        warmup_t=warmup,
        warmup_prefix=True,
        warmup_lr_init=recipe.lr * 1e-3,
        lr_min=0.0,
        t_in_epochs=False,
    )
    loss_of = TrainingLoss.of(recipe)
    gen = torch.Generator().manual_seed(recipe.seed)
    states: dict[str, dict[str, torch.Tensor]] = {}
    metrics: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()

    def keep(name: str, step: int) -> None:
        states[name] = {k: v.detach().cpu().clone().contiguous() for k, v in model.net.state_dict().items()}
        metrics[name] = {
            **_checkpoint_metrics(model, data, step, device),
            "train_seconds": round(time.perf_counter() - start, 1),
            "train_images": len(split),
        }

    bar = tqdm(total=stop, desc=f"train {recipe.name}", disable=not progress, leave=False, unit="step")
    model.train()
    batches = _batches(len(split), recipe.batch_size, gen)
    for step in range(stop):
        if step == warmup and until == "final":
            keep("warmup", step)
        idx = next(batches)
        x, target = loss_of.batch(split.images[idx], split.labels[idx], num_classes=data.num_classes, gen=gen,
                                  seed=mixing_seed(recipe.seed, step), device=device)  # fmt: skip
        loss = TrainingLoss.nll(model(x), target)
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
    return Run(model, states, metrics)


def estimate_training_seconds(recipe: Recipe, data: ImageDataset, *, device: str = "cpu") -> tuple[float, int]:
    """(seconds, steps) the recipe's training would take here: three timed optimizer steps on one batch."""
    model = build_for(recipe, data).to(device).train()
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
