"""Fixtures shared by the library's tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import distributed  # noqa: F401  (loaded before any in-process run: see below)
import pytest
from subprocess_runs import (  # this folder is on sys.path (pytest's default "prepend" import mode)
    AllureRun,
    install_wheel,
    parallel_args,
    run_allure,
    run_installed,
    run_user_suite,
    run_xdist,
    user_project,
)  # fmt: skip

import model_props.reporting.summary  # noqa: F401,E402
import model_props.store.model_store  # noqa: F401,E402

# pytester's in-process runs restore sys.modules afterwards; torch's compiled extensions (triton, via timm and
# torch._dynamo) cannot be imported a second time, so load everything the plugin imports before any such run
# (distributed, imported above, too: the plugin reaches a --claims-scheduler at session start).
import model_props.verdicts.judge  # noqa: F401,E402


@pytest.fixture
def inprocess(pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    """A pytester for nested sessions run in this process (a subprocess costs ~6 s of imports per run).
    allure-pytest keeps process-global state that a nested session would clobber, so nested sessions run without
    it; and while one runs, this session's Allure listeners leave allure's global plugin manager, because
    allure-pytest wraps fixture finalizers in calls to it, which would report a nested session's failing fixture
    to this session's listener (the tests that check Allure output use the subprocess of :func:`allure_run`)."""
    import allure_commons

    pytester.makeini("[pytest]\naddopts = -p no:allure_pytest\n")
    inline_run = pytester.inline_run

    def without_allure(*args, **kwargs):
        listeners = list(allure_commons.plugin_manager.get_plugins())
        for listener in listeners:
            allure_commons.plugin_manager.unregister(listener)
        try:
            return inline_run(*args, **kwargs)
        finally:
            for listener in listeners:
                allure_commons.plugin_manager.register(listener)

    monkeypatch.setattr(pytester, "inline_run", without_allure)
    return pytester


@pytest.fixture
def fresh_cache(tmp_path, model_store) -> Callable[[str], Path]:
    """``fresh_cache(name)``: the folder ``tmp_path / name`` made a fresh cache that holds only the session cache's
    generated datasets (no models, no measurements), so that a test needing an empty cache does not generate the
    dead-leaves data again (~10 s)."""
    model_store.dataset()  # generated in the session cache first, if this is the session's first use

    def make(name: str) -> Path:
        shutil.copytree(model_store.settings.cache_dir / "data", tmp_path / name / "data")
        return tmp_path / name

    return make


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """An importable module ``usermodels`` with factories that misbehave in different ways."""
    (tmp_path / "usermodels.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn

        def good(num_classes=10):
            return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, num_classes))

        def raises(num_classes=10):
            raise RuntimeError("out of coffee")

        def not_a_module(num_classes=10):
            return "a string"

        def fixed_64px(num_classes=10):
            return nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, num_classes))

        def wrong_classes(num_classes=10):
            return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 7))

        class NaNNet(nn.Module):
            def __init__(self, num_classes):
                super().__init__()
                self.fc = nn.Linear(3, num_classes)
            def forward(self, x):
                return self.fc(x.mean(dim=(2, 3))) * float("nan")

        def nan(num_classes=10):
            return NaNNet(num_classes)
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "usermodels"
    sys.modules.pop("usermodels", None)


@pytest.fixture(scope="session", autouse=True)
def background(request, tmp_path_factory, model_store) -> Iterator[dict[str, Future]]:
    """The slow subprocess runs that the selected tests read, started in threads when the session's first library
    test starts, so that they run while the tests before them do (each starts Python and imports torch and timm,
    ~5 s, and mostly waits): the shared Allure run (:func:`allure_run`), the installed wheel with the claim suite
    run from a user's project (``test_installed.py``) and the ``-n 2`` run of ``test_parallel.py``. A run no selected
    test reads is not started."""
    wanted = {name for item in request.session.items for name in getattr(item, "fixturenames", ())}
    cache_dir = model_store.settings.cache_dir
    jobs: dict[str, Future] = {}
    # One job at a time leaves a core to the tests. The -n 2 run goes first; it still overlaps the start of
    # test_execution.py's two-worker cluster (whose bit-equality test takes ~13 s warm instead of ~9 s alone).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="background-run") as pool:
        if "xdist_run" in wanted:
            jobs["xdist_run"] = pool.submit(run_xdist, tmp_path_factory.mktemp("xdist-run"), cache_dir)
        if "allure_run" in wanted:
            jobs["allure_run"] = pool.submit(run_allure, tmp_path_factory.mktemp("allure-run"), cache_dir)
        if wanted & {"installed", "user_suite"}:
            jobs["installed"] = pool.submit(install_wheel, tmp_path_factory.mktemp("installed"))
        if "user_suite" in wanted:
            project = user_project(tmp_path_factory.mktemp("userproject"))  # here: the jobs only run subprocesses
            jobs["user_suite"] = pool.submit(run_user_suite, jobs["installed"], project, cache_dir)
        yield jobs


@pytest.fixture(scope="session")
def allure_run(background) -> AllureRun:
    """One run of pytest in a subprocess, shared by the tests that read Allure output (allure-pytest keeps
    process-global state that a nested in-process session would clobber, so it cannot run in this process):
    ``UNTRAINED_RESNET_TEST`` and the packaged suite's tests of ``ALLURE_RUN_SUITE``, writing Allure results and,
    where Allure 3 is installed, the HTML report (``--claims-html``)."""
    return background["allure_run"].result()


@pytest.fixture(scope="session")
def installed(background) -> tuple[Path, Path]:
    """(the wheel of this checkout, a virtualenv with it installed): see :func:`install_wheel`."""
    return background["installed"].result()


@pytest.fixture(scope="session")
def parallel_options() -> Callable[[Path, Path], list[str]]:
    """:func:`parallel_args`: the options of test_parallel.py's runs, ``parallel_options(folder, cache_dir)``."""
    return parallel_args


@pytest.fixture(scope="session")
def xdist_run(background) -> tuple[subprocess.CompletedProcess, Path]:
    """test_parallel.py's ``-n 2`` run: see :func:`run_xdist`."""
    return background["xdist_run"].result()


@pytest.fixture(scope="session")
def user_shell() -> Callable[..., subprocess.CompletedProcess]:
    """:func:`run_installed`: ``user_shell(venv, "python", "-c", ..., cwd=folder)``."""
    return run_installed


@pytest.fixture(scope="session")
def user_suite(background) -> tuple[Path, subprocess.CompletedProcess]:
    """(the user's project folder, the claim suite's run from it): see :func:`run_user_suite`."""
    return background["user_suite"].result()


TINY = (Path(__file__).parent / "tiny.toml").read_text()  # the tiny profile test_execution.py runs too


@pytest.fixture(scope="session")
def tiny(tmp_path_factory, model_store):
    """A four-seed study of a tiny ViT and ResNet (seeds 0-2 set, seed 3 confirms) and its canaries, written to a
    user folder (test_study.py, test_generation.py)."""
    from model_props.config.settings import Settings
    from model_props.study.canaries import record_canaries
    from model_props.study.run import run_study
    from model_props.training.profiles import RecipeSource
    from model_props.verdicts.study import load_study

    folder = tmp_path_factory.mktemp("recipes")
    (folder / "tiny.toml").write_text(TINY)
    settings = Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=model_store.settings.cache_dir,
                        progress=False)  # fmt: skip
    path = run_study(settings, seeds=[0, 1, 2, 3])
    record_canaries(settings, load_study("tiny", folder), path.parent)  # as model-props seed-study does after it
    return settings, folder
