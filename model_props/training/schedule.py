"""The order in which training runs are handed to an executor: the longest first.

An executor's workers take the runs in the order they are submitted. In the profile's order, two workers can end
with one of them training a long run alone while the other idles. Handing them out longest first (LPT, Graham
1969: a makespan within 4/3 of the optimum) keeps both busy to the end. A run's expected cost is its optimizer
steps to the checkpoint times its batch size times the FLOPs of one forward and backward pass of its model on one
image, counted by torch's ``FlopCounterMode``. On one CPU thread the smoke recipes take 9-17.5 ms per GFLOP of a
step (ResNets 9-11, ViTs 13.6-16.7, Swin 17.5): close enough to order them. With those step times, a simulation
of the smoke profile's cold session (17 runs on 2 workers, 1,095 s of work per worker) ends after 1,097 s
instead of 1,136 s in the order the session used to submit them: a small gain there, a larger one wherever the
runs' costs differ more (the paper profile's models, a study's added claims).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import torch
from torch.utils.flop_counter import FlopCounterMode

from ..data import ImageDataset
from ..zoo import build_model
from .loop import Checkpoint, training_split
from .recipes import Recipe

__all__ = ["expected_cost", "longest_first"]


def expected_cost(recipe: Recipe, checkpoint: Checkpoint, data: ImageDataset) -> float:
    """Steps to ``checkpoint`` x batch size x FLOPs of one image's forward and backward pass (inf where the
    model cannot be built: the run then fails first, with its own message, instead of last)."""
    total, warmup = recipe.schedule(len(training_split(recipe, data).labels))
    steps = warmup if checkpoint == "warmup" else total
    try:  # building initialises weights and a training-mode pass draws dropout masks: the caller's RNG is kept
        with torch.random.fork_rng(devices=[]):
            model = build_model(recipe.model, num_classes=data.num_classes, img_size=data.image_size,
                                arch_kwargs=recipe.arch)  # fmt: skip
            image = torch.zeros(1, data.train.images.shape[1], data.image_size, data.image_size)
            with FlopCounterMode(display=False) as counter:
                model(image).sum().backward()
    except Exception:  # noqa: BLE001 - an estimate never fails a session; the training task reports the cause
        return math.inf
    return float(steps * recipe.batch_size * counter.get_total_flops())


def longest_first(
    runs: Sequence[Recipe], until: Mapping[str, Checkpoint], dataset: Callable[[str], ImageDataset]
) -> list[Recipe]:
    """``runs`` by expected cost, the most expensive first (seeds of one recipe cost the same; ties keep their
    order). ``until``: each recipe name's checkpoint; ``dataset``: a dataset by name (generated, or from the cache)."""
    costs: dict[tuple[str, str], float] = {}
    for run in runs:
        key = (run.name, until[run.name])
        if key not in costs:
            costs[key] = expected_cost(run, until[run.name], dataset(run.dataset))
    return sorted(runs, key=lambda run: -costs[run.name, until[run.name]])
