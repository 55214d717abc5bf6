"""Training and measuring ahead of the tests: the profile's recipes a session reads and trains live
(:meth:`~model_props.config.settings.Settings.trains_live`: by default the references only) that the cache lacks (and the independent
runs that pair reports read beside them, seed controls and partners, where the session trains those), several at
once on the session's executor (a local Dask cluster, or a running one), before the first test needs them; and, on
the same workers, the reports the reproduction tests read of each model as soon as it is trained (every live
estimate of a reference's family: a worker without a run left to train measures the first model's), and those of a
model the cache held already that the measurement cache lacks (after a change to their measurement code, or one
lost in the last run), so that a cold or partly warm run measures them in parallel instead of one after the other
in the test process, where a native abort would end the session."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterable

from ..errors import StudyError
from ..measurements.registry import NotCached
from ..store.model_store import ModelStore
from ..store.pairs import control_recipe, independent_runs
from ..store.tasks import Request, measure_report
from ..training.checkpoints import is_cached
from ..training.loop import Checkpoint, estimate_training_seconds, training_split
from ..training.recipes import Recipe
from ..verdicts.family import family
from ..zoo.pretrained import parse_pretrained
from .live import measured_live, not_live_report
from .routes import route_for

__all__ = [
    "CUDA_WORKERS",
    "pretrain",
    "default_workers",
    "runs_ahead",
    "compares_with_references",
    "reproduction_reads",
]

# Worker processes that share one CUDA device by default. A smoke reference's training step (a 32-px model, a batch
# of 64) launches many small kernels and leaves a large GPU mostly idle, so several processes, each queueing its own,
# keep it busy; each holds its own CUDA context (some hundred MB). The number is a default, not a measurement: the
# lent GPU's `benchmarks/gpu.py` times the cold run with it, and --claims-workers sets any other.
CUDA_WORKERS = 4

# The kinds that take longest on a smoke reference (a cold run on 2 cores: Hessian spectra about 60 s, attacks about
# 50 s, fits and corruptions a few seconds), measured first so that no worker is left with a long one alone at the end.
_LONGEST_FIRST = ("spectrum", "attack", "attack_test", "fit", "corruption", "units", "noise", "lesion")


def compares_with_references(store: ModelStore) -> bool:
    """Whether a model under test can be compared with the profile's references: not when every one is
    pretrained (measured on the user's images) or measured at another size (--claims-img-size)."""
    return any(
        name in store.profile.recipes or (parse_pretrained(name) is None and not store.settings.img_size)
        for name in store.models_under_test()
    )


def _seed_label(store: ModelStore, recipe: Recipe) -> str:
    return f" seed {recipe.seed} (independent run)" if recipe.seed != store.recipe(recipe.name).seed else ""


def reproduction_reads(store: ModelStore, references: Iterable[str]) -> list[Request]:
    """The reports that the reproduction tests of ``references`` read (:func:`~.reproduction.reproduction`): each
    statistic of the family of every reference judged from the seed study in this session (both models of a paired
    difference), on the live weights of a model the session trains (:func:`.live.not_live_report`). A reference whose study entries are stale is left to its
    test, which says how to regenerate them."""
    study, s = store.study, store.settings
    reads: dict[Request, None] = {}
    for reference in dict.fromkeys(references):
        if study is None or reference not in store.profile.references:
            continue
        if route_for(store, reference) != "study":
            continue
        try:
            statistics = family(study, store.profile, reference, store.snapshot, s.trains_live,
                                kinds=lambda kind: measured_live(s, kind))  # fmt: skip
        except StudyError:
            continue
        for statistic in statistics:
            part = statistic.part
            if part is None:
                continue
            for name in filter(None, (statistic.name, statistic.versus)):
                if store.recipe(name).seed == store.train_seed and not not_live_report(s, name, part.reads):
                    reads[(store.train_seed, name, part.reads, part.checkpoint)] = None
    return sorted(reads, key=lambda r: _LONGEST_FIRST.index(r[2]) if r[2] in _LONGEST_FIRST else len(_LONGEST_FIRST))


def cache_lacks(store: ModelStore, reads: list[Request]) -> list[Request]:
    """Of ``reads``, reports of models the cache holds, those the measurement cache lacks (after a change to their
    measurement code, say, or a report lost in the last run): each other is read from the cache now and kept for
    the test that reads it. A report that reads a model the cache lacks (one trained ahead now, or by the test that
    reads it) is left out: reading it here would train that model in this process."""
    lacking = []
    for request in reads:
        _, name, kind, checkpoint = request
        partner = kind.partition("@")[2]  # a pair kind reads both models' independent runs too
        runs = [store.recipe(name), *(control_recipe(store.recipe(n)) for n in ((name, partner) if partner else ()))]
        cached = all(is_cached(run, store.settings.cache_dir, checkpoint) for run in runs)
        if name in store.settings.checkpoints or not cached:
            continue
        try:
            store.report(name, kind, checkpoint, cached_only=True)
        except NotCached:
            lacking.append(request)
    return lacking


def runs_ahead(store: ModelStore, names: list[str]) -> tuple[list[Recipe], dict[str, Checkpoint]]:
    """The runs to train ahead for ``names`` (the models the collected tests read): each recipe of the profile among
    them that the session trains live and the cache lacks, and the independent runs that the pair parts read of them
    where the session trains those; with the checkpoint each is trained to (as far as the catalogue reads it)."""
    s = store.settings
    until: dict[str, Checkpoint] = {}
    todo: list[Recipe] = []
    if not compares_with_references(store):  # every comparison with a reference is skipped: train none
        names = [n for n in names if n in store.models_under_test()]
    names = [n for n in dict.fromkeys(names) if s.trains_live(n)]
    for name in names:
        if name in s.checkpoints or name not in store.profile.recipes:
            continue
        recipe = store.recipe(name)
        until[name] = store.last_checkpoint_needed(name)
        if not is_cached(recipe, s.cache_dir, until[name]):
            todo.append(recipe)
    for run, checkpoint in independent_runs(store, names):  # pair parts read them (cross CKA)
        if s.trains_live(run.name, independent_run=True) and not is_cached(
            run, s.cache_dir, until.setdefault(run.name, checkpoint)
        ):
            todo.append(run)
    return todo, until


def estimated_seconds(store: ModelStore, todo: list[Recipe], until: dict[str, Checkpoint], workers: int) -> float:
    """About how long ``todo``, in this order, trains here on ``workers`` local workers: each run's steps to its
    checkpoint at the step time measured on this machine (:func:`~model_props.training.loop.estimate_training_seconds`,
    on all of torch's threads), ``workers`` times longer on a worker's share of the cores, each run handed to the
    first worker free."""
    free = [0.0] * workers
    for recipe in todo:
        data = store.dataset(recipe.dataset)
        seconds, total = estimate_training_seconds(recipe, data, device=store.settings.device)
        if until[recipe.name] == "warmup":
            seconds *= recipe.schedule(len(training_split(recipe, data).labels))[1] / total
        free[free.index(min(free))] += seconds * workers
    return max(free)


def default_workers(device: str) -> int:
    """Local workers that train ahead when ``--claims-workers`` is not given: one per core on the CPU,
    :data:`CUDA_WORKERS` sharing a CUDA device (at most one per core), and one on another device (e.g. ``mps``,
    whose worker processes torch does not share), which trains and measures lazily in the session instead."""
    cores = os.cpu_count() or 1
    if device == "cpu":
        return cores
    return min(CUDA_WORKERS, cores) if device.startswith("cuda") else 1


def pretrain(
    store: ModelStore, names: list[str], reproduced: Iterable[str] = (), *, estimate: bool = False
) -> list[str]:
    """Train at once, on the session's executor, the runs :func:`runs_ahead` lists for ``names``, and measure what
    the reproduction tests of the references ``reproduced`` read of the models it trains (:func:`reproduction_reads`),
    each model's reports as soon as it is trained (a worker left without a run to train measures), and first those
    of the models cached already that the measurement cache lacks (:func:`cache_lacks`, which reads the others from
    it now); the names trained. Locally this needs two or more workers (:func:`default_workers`: one per core, or
    :data:`CUDA_WORKERS` sharing one CUDA device) and two or more models to train or a report to measure (a lone
    report too, on a worker given every core, so that an abort there ends the worker, not the session); otherwise the
    session trains and measures lazily, one model at a time. A ``scheduler`` always sends them to its cluster.
    ``estimate``: say first about how long the training takes on this machine (:func:`estimated_seconds`; a local
    executor on the CPU only).
    A task that kills every worker that runs it is said in one line and kept in ``store.lost``
    (:class:`~model_props.store.lost.LostTasks`), so that the tests that need it fail in one line each instead of
    running it again in their own process; the other tasks go on."""
    from ..execution import executor  # Dask: imported only when a session trains ahead
    from ..training.parallel import train_until
    from ..training.schedule import longest_first

    s = store.settings
    todo, until = runs_ahead(store, names)
    most = s.workers or default_workers(s.device)
    if s.scheduler is None and most < 2:  # one worker is this process: each test trains and measures what it reads
        return []
    trained = {r.name for r in todo if r.seed == store.recipe(r.name).seed}  # not the independent runs
    reads = reproduction_reads(store, reproduced)
    ahead = [r for r in reads if r[1] in trained]
    # (--claims-remeasure: each test measures again what it reads, once this process, the cached models' included)
    lacking = [] if s.remeasure else cache_lacks(store, [r for r in reads if r[1] not in trained])
    if not todo and not lacking:
        return []
    workers = min(most, max(len(todo), len(lacking), 2 if lacking else 0))
    if s.scheduler is None and workers < 2:  # one model to train and nothing else: in this process, as it is read
        return []
    for recipe in todo:  # generate each dataset once, here, before the workers read it from the cache
        store.dataset(recipe.dataset)
    todo = longest_first(todo, until, store.dataset)  # no worker left training a long run alone at the end
    where = f"on {s.scheduler}" if s.scheduler else f"{workers} at a time"
    how_long = ""
    if estimate and s.scheduler is None and s.device == "cpu":  # a GPU's share among its workers is not modelled
        seconds = estimated_seconds(store, todo, until, workers)
        how_long = f", about {f'{seconds / 60:.0f} min' if seconds >= 90 else f'{seconds:.0f} s'} on this machine"
    if todo:
        store.notify(
            f"training {len(todo)} models, {where}{how_long}: "
            + ", ".join(f"{r.name}{_seed_label(store, r)} ({until[r.name]})" for r in todo)
        )
    train = functools.partial(train_until, s.cache_dir, s.data_root, until, s.device)
    measure = functools.partial(measure_report, s)

    def lost_training(recipe: Recipe, error: BaseException) -> None:
        store.notify(store.lost.training(recipe, error))

    def lost_report(request: Request, error: BaseException) -> None:
        store.notify(store.lost.report(request, error))

    done_training: list[str] = []
    lone = s.scheduler is None and len(todo) + len(lacking) == 1
    threads = os.cpu_count() if lone else None  # a lone task on a local cluster: on every core
    with executor(
        workers=workers, scheduler=s.scheduler, threads=threads, device=s.device, cache_dir=s.cache_dir
    ) as runner:
        measuring = []  # each model's reports are submitted as it is trained: a worker free of training measures
        training = runner.map(train, todo, lost_training)  # (the training tasks, submitted first)
        if lacking:
            store.notify(
                f"measuring {len(lacking)} reports that the reproduction tests read and the cache lacks, {where}"
            )
            measuring.append(runner.map(measure, lacking, lost_report))
        for recipe, metrics in training:
            done_training.append(recipe.name)
            store.notify(
                f"trained {recipe.name}{_seed_label(store, recipe)} in {metrics['train_seconds']:.0f} s: "
                f"test accuracy {metrics['test_accuracy']:.3f} at its {metrics['checkpoint']} checkpoint"
            )
            if recipe.name in trained and recipe.seed == store.recipe(recipe.name).seed:
                if reads := [r for r in ahead if r[1] == recipe.name]:
                    measuring.append(runner.map(measure, reads, lost_report))
        if ahead:
            store.notify(
                f"measuring {len(ahead)} reports that the reproduction tests read, {where} (begun as each "
                "model was trained)"
            )
        if lacking or ahead:
            total = len(lacking) + len(ahead)
            done = 0  # of the reports submitted: none of a model whose training was lost, none lost
            for done, _ in enumerate(itertools.chain.from_iterable(measuring), start=1):
                if done % 10 == 0 and done < total:
                    store.notify(f"measured {done} of {total} reports")
            store.notify(f"measured {done} of {total} reports")
    return done_training
