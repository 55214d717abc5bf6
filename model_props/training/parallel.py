"""Train many recipes at once in worker processes, each with its share of the cores.

Used by the grid search, the seed study (``benchmarks/``, ``model-props seed-study``) and a pytest session
that starts with several models to train. Every run goes through :func:`~model_props.training.checkpoints.get_trained`,
so results land in the model cache and a run already there is loaded, not repeated. Workers are spawned (not
forked): torch's thread pools do not survive a fork. Two one-thread processes train small models 1.15-1.45x
faster than one process with two threads on a 2-core machine (ResNet 115 vs 133 ms/step, ViT 165 vs 237).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .recipes import Recipe

if TYPE_CHECKING:
    from .loop import Checkpoint

__all__ = ["map_parallel", "train_until"]

T = TypeVar("T")
Item = TypeVar("Item")


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def map_parallel(
    fn: Callable[[Item], T], items: Iterable[Item], *, workers: int = 1, threads: int | None = None
) -> Iterator[tuple[Item, T]]:
    """Yield ``(item, fn(item))`` as each finishes (recipes to train, seeds to measure); ``fn`` must be a
    picklable top-level function. ``threads`` per worker defaults to the cores divided among the workers.
    """
    items = list(items)
    threads = threads or max(1, (os.cpu_count() or 1) // max(1, workers))
    if workers <= 1:
        _init_worker(threads)
        for item in items:
            yield item, fn(item)
        return
    with ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(threads,)
    ) as pool:
        futures = {pool.submit(fn, item): item for item in items}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def train_until(
    cache_dir: Path, data_root: Path | None, until: Mapping[str, Checkpoint], recipe: Recipe
) -> dict[str, Any]:
    """Train (or load) ``recipe`` up to the checkpoint ``until[recipe.name]``; its metrics, for :func:`map_parallel`."""
    from .checkpoints import get_trained

    trained = get_trained(
        recipe, cache_dir=cache_dir, data_root=data_root, progress=False, checkpoint=until[recipe.name]
    )
    return {**trained.metrics, "checkpoint": until[recipe.name], "from_cache": trained.from_cache}
