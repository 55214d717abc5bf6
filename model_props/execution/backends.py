"""Run tasks in this process, on a local Dask cluster (``workers``) or on a running one (``scheduler``).

One interface, three backends: :func:`executor` yields an :class:`Executor` whose :meth:`~Executor.map` runs
a picklable top-level function over items and yields ``(item, result)`` as each finishes. With one worker and
no scheduler the tasks run here, one after the other. With ``workers=N`` they run on a
``distributed.LocalCluster`` of N single-task worker processes; with ``scheduler`` (``tcp://HOST:8786`` or a
scheduler file) on workers started elsewhere (``dask worker``, or Slurm jobs through ``dask-jobqueue``).
Each task sets torch's thread count first (default: the cores divided among the workers), and a task on a
GPU asks for the worker resource ``GPU=1``. A worker that dies mid-task is replaced and its task retried by
Dask's scheduler; results land in the shared cache (:mod:`model_props.cache.entry`: each entry built in a hidden
folder and published by one atomic rename), where a killed writer leaves nothing loadable.

Before any task runs, every worker must run the same model-props source as this process (the source hash of
the task's module, :func:`~model_props.cache.source_hash`) and be able to write the cache folder; each task
checks the source hash again, for workers that join later.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ..cache import source_hash
from ..cache.source import PACKAGE, package_modules
from ..errors import ExecutorError

__all__ = ["Executor", "ExecutorError", "executor", "task_module"]

T = TypeVar("T")
Threads = int | dict[str, int] | None  # torch threads per task, or per worker address; None: leave torch's
Item = TypeVar("Item")
CONNECT_TIMEOUT_S = 10


def task_module(fn: Callable[..., Any]) -> str:
    """The module of a task function (through ``functools.partial``): its import closure is the task's code."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn.__module__


def _identity(module: str) -> str:
    """The source hash of a task module's import closure; of the whole package for a task defined outside it."""
    if module.split(".")[0] == PACKAGE:
        return source_hash(module, whole=True)
    return source_hash(*package_modules(), whole=True)


def _worker_identity(module: str) -> str:
    """:func:`_identity` as a worker computes it (sent by name, so it runs the worker's own code)."""
    return _identity(module)


def _run_task(fn: Callable[[Item], T], threads: Threads, module: str, expected: str, item: Item) -> T:
    """The wrapper each task runs in: the thread count, the source check, then ``fn(item)``."""
    import torch

    if isinstance(threads, dict):  # a running cluster: this worker's share of its host's cores
        from distributed import get_worker

        threads = threads.get(get_worker().address, 1)

    if (found := _identity(module)) != expected:
        raise ExecutorError(
            f"this worker runs model-props source {found} of {module}, the client {expected}: "
            "install the same model-props (and torch/timm/numpy) on every worker"
        )
    if threads is not None:
        torch.set_num_threads(threads)
    return fn(item)


def _writable(folder: str) -> str | None:
    """None if this process can create a file in ``folder`` (creating the folder), else why not."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None


class Executor:
    """Runs task functions over items, here or on a Dask cluster (``client``)."""

    def __init__(
        self,
        client: Any | None,
        threads: Threads,
        resources: dict[str, float] | None = None,
        cache_dir: Path | None = None,
    ):
        self.client = client
        self.threads = threads
        self.resources = resources
        self.cache_dir = cache_dir
        self._checked: set[str] = set()

    @property
    def workers(self) -> int:
        return 1 if self.client is None else len(self.client.scheduler_info()["workers"])

    def map(
        self, fn: Callable[[Item], T], items: Iterable[Item], lost: Callable[[Item, BaseException], None] | None = None
    ) -> Iterator[tuple[Item, T]]:
        """Check the workers and submit every task now; then yield ``(item, fn(item))`` as each finishes (here:
        in order, as the iterator is read). ``fn`` must be picklable (a top-level function or a
        ``functools.partial`` of one). A task's exception is raised here, after the other tasks are cancelled;
        with ``lost``, a task that killed every worker that ran it (Dask's ``KilledWorker``: a native abort, or
        a worker out of memory, each time) is given to ``lost(item, error)`` instead, and the other tasks go on."""
        items = list(items)
        module = task_module(fn)
        expected = _identity(module)
        if module not in self._checked:
            self.check(module)
            self._checked.add(module)
        if self.client is None:
            return ((item, _run_task(fn, self.threads, module, expected, item)) for item in items)
        futures = {
            self.client.submit(
                _run_task, fn, self.threads, module, expected, item, pure=False, resources=self.resources
            ): i
            for i, item in enumerate(items)
        }
        return self._as_completed(futures, items, lost)

    def _as_completed(
        self, futures: dict[Any, int], items: list[Any], lost: Callable[[Any, BaseException], None] | None
    ) -> Iterator[tuple[Any, Any]]:
        from distributed import KilledWorker, as_completed

        assert self.client is not None
        try:
            for future in as_completed(futures):
                item = items[futures[future]]
                try:
                    result = future.result()
                except KilledWorker as exc:
                    if lost is None:
                        raise
                    lost(item, exc)
                    continue
                yield item, result
        finally:
            self.client.cancel(list(futures))

    def check(self, module: str) -> None:
        """Refuse a cluster whose workers run another source of ``module`` or cannot write the cache folder."""
        cache_dir = self.cache_dir
        if self.client is None:
            if cache_dir is not None and (why := _writable(str(cache_dir))) is not None:
                raise ExecutorError(f"cache folder {str(cache_dir)!r} is not writable here ({why})")
            return
        expected = _identity(module)
        for worker, found in sorted(self.client.run(_worker_identity, module).items()):
            if found != expected:
                raise ExecutorError(
                    f"worker {worker} runs model-props source {found} of {module}, this process {expected}: "
                    "install the same model-props (and torch/timm/numpy) on every worker"
                )
        if cache_dir is not None:
            for worker, why in sorted(self.client.run(_writable, str(cache_dir)).items()):
                if why is not None:
                    raise ExecutorError(
                        f"worker {worker} cannot write the cache folder {str(cache_dir)!r} ({why}); "
                        "give every worker a shared cache it can write (--cache)"
                    )


def _connect(scheduler: str) -> Any:
    from distributed import Client

    try:
        if "://" in scheduler:
            return Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        if not Path(scheduler).is_file():
            raise ExecutorError(
                f"scheduler={scheduler!r} is neither an address (tcp://HOST:8786) nor an existing scheduler file"
            )
        return Client(scheduler_file=scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {scheduler!r} within {CONNECT_TIMEOUT_S} s "
            f"({type(exc).__name__}); start one with `dask scheduler`, or leave out the scheduler to run locally"
        ) from None


def _worker_environ(threads: int) -> dict[str, Any]:
    """The environment a local worker process starts with: Dask's default, less ``MALLOC_TRIM_THRESHOLD_``
    (a 64 KiB trim threshold makes glibc return every freed tensor buffer to the OS: training the smoke ResNet
    took 44.9 s in such a worker against 23.5 s in a plain process, same thread count), with the BLAS/OpenMP
    pools sized to the task's threads."""
    return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads}


def _restore_environ(saved: dict[str, str | None]) -> None:
    """Put back this process's values of ``saved``'s variables. Dask's nannies run in the process that starts a
    local cluster and write ``pre-spawn-environ`` (and a fixed ``PYTHONHASHSEED``) into its ``os.environ`` before
    spawning each worker (distributed documents it: "even if this means poisoning the process running the
    Nanny"), so that every process this one starts afterwards (a pytest subprocess, the user's own tools) would
    inherit ``OMP_NUM_THREADS=1``: a benchmark's pytest run after a study on 2 workers ran on one thread."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _shares(client: Any) -> dict[str, int]:
    """Per worker, its host's cores divided among the worker processes on that host."""
    cores = client.run(os.cpu_count)
    hosts = {addr: info["host"] for addr, info in client.scheduler_info()["workers"].items()}
    per_host = Counter(hosts.values())
    return {addr: max(1, (cores.get(addr) or 1) // per_host[host]) for addr, host in hosts.items()}


@contextmanager
def executor(
    *,
    workers: int = 1,
    scheduler: str | None = None,
    threads: int | None = None,
    device: str = "cpu",
    cache_dir: Path | None = None,
) -> Iterator[Executor]:
    """An :class:`Executor`: in this process (``workers`` 1, no ``scheduler``), on a local cluster of
    ``workers`` processes, or on the cluster of ``scheduler``; ``cache_dir``: the folder every worker must be
    able to write (checked with the source before the first task of each task module)."""
    if workers < 1:
        raise ExecutorError(f"workers={workers}; valid: 1 or more")
    resources: dict[str, float] | None = {"GPU": 1} if device.startswith("cuda") else None
    if scheduler is None and workers == 1:
        yield Executor(None, threads, cache_dir=cache_dir)
        return
    cluster = None
    parent_environ = {name: os.environ.get(name) for name in (*_worker_environ(1), "PYTHONHASHSEED")}
    if scheduler is None:
        import dask
        from distributed import Client, LocalCluster

        per_task = threads or max(1, (os.cpu_count() or 1) // workers)
        shares: Threads = per_task
        with dask.config.set({"distributed.nanny.pre-spawn-environ": _worker_environ(per_task)}):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,  # one task at a time per worker; torch gets `shares` threads inside it
                processes=True,
                dashboard_address=None,  # no dashboard; the scheduler's HTTP server (health, metrics) still
                scheduler_kwargs={"dashboard_address": ":0"},  # listens: on a free port, not 8787 (a warning if taken)
                silence_logs=logging.ERROR,
                resources=resources,
            )
        client = Client(cluster)
        client.wait_for_workers(workers)  # spawned: the nannies live in this process and set it for each spawn
        _restore_environ(parent_environ)
    else:
        client = _connect(scheduler)
        shares = threads or _shares(client)
    try:
        yield Executor(client, shares, resources, cache_dir)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        _restore_environ(parent_environ)  # and again after any worker a nanny restarted
