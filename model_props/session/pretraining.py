"""Training ahead of the tests: the profile's recipes a session reads that the cache lacks (and the independent
runs that pair reports read beside them: seed controls and partners), several at once on the session's executor
(a local Dask cluster, or a running one), before the first test needs them."""

from __future__ import annotations

import functools
import os

from ..training.checkpoints import is_cached
from ..training.recipes import Recipe
from ..zoo.pretrained import parse_pretrained
from .pairs import independent_runs
from .store import ModelStore

__all__ = ["pretrain", "compares_with_references"]


def compares_with_references(store: ModelStore) -> bool:
    """Whether a model under test can be compared with the profile's references: not when every one is
    pretrained (measured on the user's images) or measured at another size (--claims-img-size)."""
    return any(
        name in store.profile.recipes or (parse_pretrained(name) is None and not store.settings.img_size)
        for name in store.models_under_test()
    )


def _seed_label(store: ModelStore, recipe: Recipe) -> str:
    return f" seed {recipe.seed} (independent run)" if recipe.seed != store.recipe(recipe.name).seed else ""


def pretrain(store: ModelStore, names: list[str]) -> list[str]:
    """Train at once, on the session's executor, the profile's recipes among ``names`` that the cache lacks,
    each as far as the catalogue reads it; the names trained. Locally this needs two or more models to train
    on the CPU (a GPU trains one at a time best); the session then trains lazily, one model at a time. A
    ``scheduler`` always sends them to its cluster."""
    from ..execution import executor  # Dask: imported only when a session trains ahead
    from ..training.parallel import train_until
    from ..training.schedule import longest_first

    s = store.settings
    until, todo = {}, []
    if not compares_with_references(store):  # every comparison with a reference is skipped: train none
        names = [n for n in names if n in store.models_under_test()]
    for name in dict.fromkeys(names):
        if name in s.checkpoints or name not in store.profile.recipes:
            continue
        recipe = store.recipe(name)
        until[name] = store.last_checkpoint_needed(name)
        if not is_cached(recipe, s.cache_dir, until[name]):
            todo.append(recipe)
    for run, checkpoint in independent_runs(store, names):  # pair parts read them (cross CKA)
        if not is_cached(run, s.cache_dir, until.setdefault(run.name, checkpoint)):
            todo.append(run)
    workers = min(len(todo), s.workers or os.cpu_count() or 1)
    if not todo or (s.scheduler is None and (workers < 2 or s.device != "cpu")):
        return []
    for recipe in todo:  # generate each dataset once, here, before the workers read it from the cache
        store.dataset(recipe.dataset)
    todo = longest_first(todo, until, store.dataset)  # no worker left training a long run alone at the end
    where = f"on {s.scheduler}" if s.scheduler else f"{workers} at a time"
    store.notify(
        f"training {len(todo)} models, {where}: "
        + ", ".join(f"{r.name}{_seed_label(store, r)} ({until[r.name]})" for r in todo)
    )
    train = functools.partial(train_until, s.cache_dir, s.data_root, until, s.device)
    with executor(workers=workers, scheduler=s.scheduler, device=s.device, cache_dir=s.cache_dir) as runner:
        for recipe, metrics in runner.map(train, todo):
            store.notify(
                f"trained {recipe.name}{_seed_label(store, recipe)} in {metrics['train_seconds']:.0f} s: "
                f"test accuracy {metrics['test_accuracy']:.3f} at its {metrics['checkpoint']} checkpoint"
            )
    return [r.name for r in todo]
