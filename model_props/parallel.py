"""Train many recipes at once in worker processes, each with its share of the cores.

Used by the grid search and the seed study (``benchmarks/``, ``model-props seed-study``). Every run goes
through :func:`~model_props.training.get_trained`, so results land in the model cache and a run already
there is loaded, not repeated. Workers are spawned (not forked): torch's thread pools do not survive a fork.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import TypeVar

from .recipes import Recipe

__all__ = ["map_recipes"]

T = TypeVar("T")


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def map_recipes(fn: Callable[[Recipe], T], recipes: Iterable[Recipe], *, workers: int = 1,
                threads: int | None = None) -> Iterator[tuple[Recipe, T]]:
    """Yield ``(recipe, fn(recipe))`` as each finishes; ``fn`` must be a picklable top-level function.

    ``threads`` per worker defaults to the cores divided among the workers.
    """
    recipes = list(recipes)
    threads = threads or max(1, (os.cpu_count() or 1) // max(1, workers))
    if workers <= 1:
        _init_worker(threads)
        for r in recipes:
            yield r, fn(r)
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init_worker,
                             initargs=(threads,)) as pool:
        futures = {pool.submit(fn, r): r for r in recipes}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()
