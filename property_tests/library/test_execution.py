"""Executors on Dask: training and measuring on a 2-worker local cluster equal the in-process run to the bit; a worker
killed while it trains is replaced and its task retried; a task that kills every worker it runs on fails what needs
it in one line, and the session goes on, as it does after any other error of the work ahead of its tests; a cluster
that cannot run the tasks is refused in one line."""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import socket
import time
import warnings
from pathlib import Path

import dask
import numpy as np
import pytest
from tiny_resnet import TINY_RESNET_ARCH  # this folder is on sys.path (pytest's "prepend" import mode)

import model_props.execution.backends as backends
from model_props.config.settings import Settings
from model_props.errors import StudyError
from model_props.execution import ExecutorError, executor
from model_props.store.tasks import measure_report
from model_props.study import run
from model_props.study.run import study_estimates
from model_props.training.checkpoints import is_cached
from model_props.training.parallel import train_until
from model_props.training.profiles import RecipeSource
from model_props.training.recipes import Recipe

TINY = (Path(__file__).parent / "tiny.toml").read_text()  # the tiny profile of test_study.py


def _entries(cache: Path) -> dict[str, dict]:
    """Every cache entry by its folder: the sha256 of its files (models) or its arrays (reports)."""
    found = {}
    for manifest in sorted(cache.glob("*/*/*/manifest.json")):
        meta, entry = json.loads(manifest.read_text()), manifest.parent
        if entry.parts[-3] == "models":
            found[str(entry.relative_to(cache))] = {r: f["sha256"] for r, f in meta["files"].items()}
        else:
            with np.load(entry / meta["files"]["report"]["file"], allow_pickle=False) as npz:
                found[str(entry.relative_to(cache))] = {k: npz[k] for k in npz.files}
    return found


@pytest.fixture(scope="module")
def cluster():
    """The scheduler address of a 2-worker local cluster started as ``--workers 2`` starts one (one thread per
    task); the tests reach it by that address, as ``--scheduler`` reaches a user's cluster."""
    ours = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    with executor(workers=2, threads=1) as runner:
        assert runner.workers == 2 and runner.threads == 1
        # the workers' BLAS/OpenMP pools get their share; this process keeps its own (Dask's nannies, which run
        # here, set the workers' values in this process's environment before spawning them: every subprocess
        # started afterwards, pytest's included, would have run on one thread)
        assert set(runner.client.run(os.getenv, "OMP_NUM_THREADS").values()) == {"1"}  # (os.environ.get would
        # carry this process's environ along, pickled by value)
        assert {name: os.environ.get(name) for name in ours} == ours
        # each worker imports what the tasks run (~6 s) now, while the first test trains in this process
        workers = list(runner.client.scheduler_info()["workers"])
        warming = [runner.client.submit(importlib.import_module, "model_props.store.tasks", pure=False,
                                        workers=[w], allow_other_workers=False) for w in workers]  # fmt: skip
        yield runner.client.scheduler.address
        del warming
    assert {name: os.environ.get(name) for name in ours} == ours, "a restarted worker's environment stays its own"


def test_training_and_measuring_on_a_two_worker_cluster_equal_the_in_process_run_to_the_bit(
    tmp_path, fresh_cache, cluster
):
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "tiny.toml").write_text(TINY)
    results, caches = {}, {}

    def tasks(how: str) -> tuple[functools.partial, functools.partial, list]:
        caches[how] = fresh_cache(how)
        settings = Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=caches[how], progress=False)
        recipes = list(settings.profile_data.recipes[n] for n in ("vit", "resnet"))
        train = functools.partial(train_until, caches[how], None, {"vit": "final", "resnet": "final"}, "cpu")
        return train, functools.partial(measure_report, settings), recipes

    train, measure, recipes = tasks("cluster")
    seed = recipes[0].seed  # the profile's live seed, which the recipes train with: the measured models are these
    requests = [(seed, name, kind, "final") for name in ("vit", "resnet") for kind in ("fit", "units")]
    with executor(scheduler=cluster, threads=1, cache_dir=caches["cluster"]) as remote:
        training = remote.map(train, recipes)  # submitted now: the cluster trains while this process does below
        train_here, measure_here, recipes_here = tasks("inprocess")
        with executor(threads=1, cache_dir=caches["inprocess"]) as local:
            trained = {r.name: m["sha256"] for r, m in local.map(train_here, recipes_here)}
            results["inprocess"] = trained, dict(local.map(measure_here, requests))
        trained = {r.name: m["sha256"] for r, m in training}
        results["cluster"] = trained, dict(remote.map(measure, requests))
    assert results["inprocess"][0] == results["cluster"][0], "the checkpoints' sha256 differ"
    a, b = _entries(caches["inprocess"]), _entries(caches["cluster"])
    assert a.keys() == b.keys() and len(a) == 2 + len(requests), "the same cache entries (keys hash the inputs)"
    for request in requests:
        x, y = results["inprocess"][1][request], results["cluster"][1][request]
        assert x.keys() == y.keys(), request
        for k in x:
            assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k], equal_nan=True), f"{request} {k} differs"


SLOW = Recipe(
    name="slow", profile="test", model="resnet", steps=150, warmup_steps=8, batch_size=16, arch=TINY_RESNET_ARCH
)


def test_a_worker_killed_while_it_trains_is_replaced_and_its_task_retried(fresh_cache, cluster):
    cache = fresh_cache("cache")
    recipes = [SLOW]
    task = functools.partial(train_until, cache, None, {"slow": "final"}, "cpu")
    killed = None
    with executor(scheduler=cluster, threads=1, cache_dir=cache) as runner:
        results = runner.map(task, recipes)
        deadline = time.time() + 120
        while killed is None:  # kill the first worker seen training, by its pid
            assert time.time() < deadline, "no worker started training"
            busy = [w for w, keys in runner.client.processing().items() if keys]
            if busy and list((cache / "models" / "test").glob("*.lock")):
                time.sleep(0.5)  # into the training loop (the lock is taken right before it)
                pid = runner.client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed = busy[0]
            time.sleep(0.1)
        done = dict((r.seed, m) for r, m in results)
    assert list(done) == [0] and done[0]["step"] == 150 and not done[0]["from_cache"], "trained again, whole"
    assert is_cached(SLOW, cache), "one whole entry"
    assert not list((cache / "models" / "test").glob("*.tmp")), "no temporary file left behind"


# A session's conftest: training the ResNet kills its worker at once, as a native abort does (the ResNet spectrum's
# on CUDA, issue 47), and so does measuring the ViT's fit report ahead of the tests (read as a reproduction test
# would); both abort in the test process too, where the session would end if it ran them again. Dask gives a task up
# at its first dead worker (its default retries three times more). The patches reach the workers with the task
# functions pickled from this module, which each worker imports.
DYING_WORKERS = """
import signal

import dask

import model_props.session.pretraining as pretraining
import model_props.store.model_store as model_store
import model_props.store.pairs as pairs
import model_props.training.parallel as parallel

trains, gets, measures, measured = parallel.train_until, model_store.get_trained, pretraining.measure_report, pairs.measure


def train_until(cache, root, until, device, recipe):
    if recipe.name == "resnet":
        signal.raise_signal(signal.SIGABRT)
    return trains(cache, root, until, device, recipe)


def get_trained(recipe, **kwargs):
    if recipe.name == "resnet":
        signal.raise_signal(signal.SIGABRT)
    return gets(recipe, **kwargs)


def measure_report(settings, request):
    if request[2] == "fit":
        signal.raise_signal(signal.SIGABRT)
    return measures(settings, request)


def measure(kind, *args, **kwargs):
    if kind == "fit":
        signal.raise_signal(signal.SIGABRT)
    return measured(kind, *args, **kwargs)


def reads(store, references):
    return [(store.recipe("vit").seed, "vit", "fit", "final")]


parallel.train_until, model_store.get_trained, pretraining.measure_report = train_until, get_trained, measure_report
pairs.measure, pretraining.reproduction_reads = measure, reads
dask.config.set({"distributed.scheduler.allowed-failures": 0})
"""

MODEL_TESTS = """
import pytest

from model_props.errors import ExecutorError


def test_model(model_under_test):
    assert model_under_test.model is not None


def test_fit(model_store):
    with pytest.raises(ExecutorError, match="^measuring the fit report of vit .* killed every worker that ran it: "
                       "not measured again in this process, which it would end too; run it alone on one worker"):
        model_store.report("vit", "fit")
"""


def test_a_task_that_kills_every_worker_fails_what_needs_it_in_one_line_and_the_session_goes_on(pytester, fresh_cache):
    """On two local workers (the tiny profile's ViT and ResNet), training the ResNet and then measuring the ViT's fit
    report ahead of the tests each end in Dask's ``KilledWorker``; the session says so in one line each, trains the
    ViT, and the tests that need either fail in one line without running it again in the session's process."""
    (pytester.path / "recipes").mkdir()
    (pytester.path / "recipes" / "tiny.toml").write_text(TINY)
    pytester.makeconftest(DYING_WORKERS)  # imported by the workers too: the session's sys.path is theirs
    pytester.makepyfile(test_models=MODEL_TESTS)
    # two workers named, so that a one-core machine trains ahead too
    options = ["--claims-profile=tiny", "--claims-recipes=recipes", f"--claims-cache={fresh_cache('cache')}",
               "--claims-workers=2"]  # fmt: skip
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:allure_pytest", *options)
    result.assert_outcomes(passed=2, errors=1)  # the ViT's model and the fit test; the ResNet's model
    how = "run it alone on one worker (pytest --claims-workers=1, model-props train --workers 1) to see the failure"
    result.stderr.fnmatch_lines([
        "model-props: training 2 models, 2 at a time: *",
        "model-props: training resnet (seed 100) killed every worker that ran it (KilledWorker); what needs it fails "
        f"in one line instead of running it in this process: {how}",
        "model-props: trained vit in * s: *",
        "model-props: measuring the fit report of vit (seed 100, final) killed every worker that ran it "
        f"(KilledWorker); what needs it fails in one line instead of running it in this process: {how}",
        "model-props: measured 0 of 1 reports",
    ], consecutive=False)  # fmt: skip
    result.stdout.fnmatch_lines([
        "ExecutorError: training resnet (seed 100) killed every worker that ran it: not run again in this "
        f"process, which it would end too; {how}",
    ])  # fmt: skip
    assert "training ahead of the tests stopped" not in result.stderr.str()


# A session's conftest: the reproduction tests read the fit reports of the models named in the file READS; where
# the file DYING exists, measuring a fit report kills the process that measures it, as a native abort does (in a
# worker, or in the test process if it measured the report again), but reading it from the cache does not. The
# patches reach the workers with the measuring task, pickled from this module, which each worker imports.
READS_FIT = """
import signal
from pathlib import Path

import dask

import model_props.session.pretraining as pretraining
import model_props.store.pairs as pairs
from model_props.measurements.registry import NotCached

measured, measures, here = pairs.measure, pretraining.measure_report, Path(__file__).parent


def measure(kind, *args, cached_only=False, **kwargs):
    if kind == "fit" and (here / "DYING").exists():
        try:
            return measured(kind, *args, cached_only=True, **kwargs)
        except NotCached:
            if not cached_only:
                signal.raise_signal(signal.SIGABRT)
            raise
    return measured(kind, *args, cached_only=cached_only, **kwargs)


def measure_report(settings, request):
    return measures(settings, request)


def reads(store, references):
    names = (here / "READS").read_text().split()
    return [(store.recipe(name).seed, name, "fit", "final") for name in names]


pairs.measure, pretraining.measure_report, pretraining.reproduction_reads = measure, measure_report, reads
dask.config.set({"distributed.scheduler.allowed-failures": 0})
"""

READ_TESTS = """
from pathlib import Path

import pytest

from model_props.errors import ExecutorError

here = Path(__file__).parent


def test_fit(model_store, model_name):
    assert model_store.get(model_name).model is not None  # trained, or read from the cache
    if model_name not in (here / "READS").read_text().split():
        return
    if model_name == "resnet" and (here / "DYING").exists():
        with pytest.raises(ExecutorError, match="^measuring the fit report of resnet .* killed every worker"):
            model_store.report(model_name, "fit")
    else:
        assert model_store.report(model_name, "fit").to_arrays()
"""


def test_a_warm_run_measures_the_reports_its_cache_lacks_on_the_workers(pytester, fresh_cache):
    """The reports that the reproduction tests read and a warm cache lacks (a report lost in the last run, or
    measured by changed code) are measured ahead of the tests on the workers too, not in the session's process:
    one that kills every worker is then said in one line, and the session goes on. A warm run whose cache holds
    every report starts no worker, nor does one that measures everything again (``--claims-remeasure``), whose
    tests measure what they read in the session's process."""
    (pytester.path / "recipes").mkdir()
    (pytester.path / "recipes" / "tiny.toml").write_text(TINY)
    pytester.makeconftest(READS_FIT)
    pytester.makepyfile(test_reads=READ_TESTS)
    options = ["-p", "no:cacheprovider", "-p", "no:allure_pytest", "--claims-profile=tiny",
               "--claims-recipes=recipes", f"--claims-cache={fresh_cache('cache')}", "--claims-workers=2"]  # fmt: skip

    def run(*names: str, dying: bool = False, extra: tuple[str, ...] = ()) -> pytest.RunResult:
        (pytester.path / "READS").write_text("\n".join(names))
        if dying:
            (pytester.path / "DYING").touch()
        return pytester.runpytest_subprocess(*options, *extra)

    run("vit", extra=("--claims-workers=1",)).assert_outcomes(passed=2)  # cold, in this process: no cluster to start
    warm = run("vit")  # the ViT's fit report is cached: nothing to do ahead of the tests
    again = run("vit", extra=("--claims-remeasure",))  # each test measures again what it reads
    for each in (warm, again):
        each.assert_outcomes(passed=2)
        assert [line for line in each.stderr.lines if "measur" in line or "train" in line] == []
    lost = run("vit", "resnet", dying=True)  # the ResNet's is not: measured on the workers, where it aborts
    lost.assert_outcomes(passed=2)
    how = "run it alone on one worker (pytest --claims-workers=1, model-props train --workers 1) to see the failure"
    lost.stderr.fnmatch_lines([
        "model-props: measuring 1 reports that the reproduction tests read and the cache lacks, 2 at a time",
        "model-props: measuring the fit report of resnet (seed 100, final) killed every worker that ran it "
        f"(KilledWorker); what needs it fails in one line instead of running it in this process: {how}",
        "model-props: measured 0 of 1 reports",
    ])  # fmt: skip
    assert not any("training" in line for line in lost.stderr.lines)


# A session's conftest: every training task fails in its worker with an error of its own (a full disk, say)
FAILING_TRAINING = """
import model_props.training.parallel as parallel


def fails(*args):
    raise OSError("No space left on device")


parallel.train_until = fails
"""


def test_a_task_that_fails_stops_the_training_ahead_in_one_line_and_the_session_goes_on(pytester, fresh_cache):
    """Any other error of a task ahead of the tests (here each training task's) stops the training ahead in one
    line; the tests then train and measure what they need in the session's process (here they read no model)."""
    (pytester.path / "recipes").mkdir()
    (pytester.path / "recipes" / "tiny.toml").write_text(TINY)
    pytester.makeconftest(FAILING_TRAINING)
    pytester.makepyfile(test_models="def test_model(model_name):\n    assert model_name\n")
    options = ["--claims-profile=tiny", "--claims-recipes=recipes", f"--claims-cache={fresh_cache('cache')}",
               "--claims-workers=2"]  # fmt: skip
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:allure_pytest", *options)
    result.assert_outcomes(passed=2)
    stopped = [line for line in result.stderr.lines if "training ahead of the tests stopped" in line]
    assert stopped == [
        "model-props: training ahead of the tests stopped (OSError: No space left on device); each test trains and "
        "measures what it needs"
    ]


def _aborts(*args):
    """A task that kills its worker, as a native abort does (the workers import this module to unpickle it)."""
    signal.raise_signal(signal.SIGABRT)


def test_a_task_that_kills_every_worker_stops_a_study_in_one_line(tmp_path, fresh_cache, monkeypatch):
    """A seed study on two local workers whose every training task aborts stops in one line naming the task: a seed
    would lack what it computes."""
    (tmp_path / "tiny.toml").write_text(TINY)
    settings = Settings(profile="tiny", recipes=RecipeSource(tmp_path), cache_dir=fresh_cache("cache"), progress=False,
                        workers=2)  # fmt: skip
    monkeypatch.setattr(run, "train_until", _aborts)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):  # Dask's default retries three times more
        with pytest.raises(StudyError, match=r"^training (vit|resnet) \(seed 0\) killed every worker that ran it "
                           r"\(KilledWorker\): the study stops, since its seeds would lack it; run it alone on one "
                           r"worker \(--workers 1\) to see the failure$"):  # fmt: skip
            study_estimates(settings, [0], ["vit", "resnet"])


def test_a_local_cluster_takes_a_free_port_without_a_warning(tmp_path):
    """Dask's default HTTP port (8787, often a user's own dashboard) taken: a local cluster starts, silently."""
    with socket.socket() as taken:
        try:
            taken.bind(("", 8787))
        except OSError:  # taken already (another cluster of this session): so much the better
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with executor(workers=2, threads=1, cache_dir=tmp_path) as runner:
                assert runner.workers == 2


def test_workers_running_another_source_are_refused_before_any_task(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(backends, "_identity", lambda module: "0123456789abcdef")
    with pytest.raises(ExecutorError, match=r"^worker tcp://\S+ runs model-props source \w+ of "
                       r"model_props\.training\.parallel, this process 0123456789abcdef: install the same"):  # fmt: skip
        with executor(scheduler=cluster, cache_dir=tmp_path) as runner:
            list(runner.map(train_until, []))


def test_a_cache_the_workers_cannot_write_is_refused(tmp_path, cluster):
    (tmp_path / "file").write_text("not a folder")
    bad = tmp_path / "file" / "cache"
    with pytest.raises(ExecutorError, match=r"^worker tcp://\S+ cannot write the cache folder '.*/file/cache' \("):
        with executor(scheduler=cluster, cache_dir=bad) as runner:
            list(runner.map(train_until, []))
    with pytest.raises(ExecutorError, match=r"^cache folder '.*/file/cache' is not writable here \("):
        with executor(cache_dir=bad) as runner:
            list(runner.map(train_until, []))
    assert not list(tmp_path.rglob("*.tmp"))


def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(ExecutorError, match=r"^cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1:9' within 1 s"):
        with executor(scheduler="tcp://127.0.0.1:9"):
            pass
    with pytest.raises(
        ExecutorError, match=r"is neither an address \(tcp://HOST:8786\) nor an existing scheduler file"
    ):
        with executor(scheduler=str(tmp_path / "missing.json")):
            pass
    with pytest.raises(ExecutorError, match=r"^workers=0; valid: 1 or more"):
        with executor(workers=0):
            pass
