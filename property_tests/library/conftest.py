"""Fixtures shared by the library's tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

# pytester's in-process runs restore sys.modules afterwards; torch's compiled extensions (triton, via timm and
# torch._dynamo) cannot be imported a second time, so load everything the plugin imports before any such run.
import model_props.claims.evaluation  # noqa: F401,E402
import model_props.reporting.summary  # noqa: F401,E402
import model_props.session.store  # noqa: F401,E402


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


# A claim test of an untrained ResNet through ``check_claim``, run by :func:`allure_run` beside the packaged suite.
UNTRAINED_RESNET_TEST = textwrap.dedent("""
    from model_props.anatomy import anatomy
    from model_props.claims import get_claim
    from model_props.session.store import ModelUnderTest
    from model_props.zoo import build_model

    def test_resnet_claim(check_claim):
        # timm initialises every block's last BN scale to zero: each conv unit is an identity, so its change
        # of the high-frequency amplitude is exactly 0 on every image and the rule "> 0" is inconclusive.
        # (The accuracy is recorded above twice chance so that the chance rule lets the part be measured.)
        model = build_model("resnet", num_classes=10).eval()
        tested = ModelUnderTest("untrained-resnet", model, anatomy(model), {"test_accuracy": 0.5}, None, None)
        outcome = check_claim(get_claim("park2022.conv-mlp-highpass"), tested)
        (part,) = outcome.parts
        assert outcome.verdict == "inconclusive" and outcome.scope == "checkpoint"
        assert (part.estimate.value, part.estimate.low, part.estimate.high) == (0.0, 0.0, 0.0)
""")
# the packaged suite's tests of one claim: supported on vit in every seed of the smoke study, not applicable to resnet
ALLURE_RUN_SUITE = "msa-lowpass and (vit or resnet)"


@dataclass(frozen=True)
class AllureRun:
    folder: Path  # where it ran: reports/ (summary, allure-report/) and allure-results/ are under it
    stdout: str
    returncode: int
    html: bool  # whether it generated the HTML report (Allure 3 and Node.js are installed)

    @property
    def results(self) -> Path:
        return self.folder / "allure-results"


@pytest.fixture(scope="session")
def allure_run(tmp_path_factory, model_store) -> AllureRun:
    """One run of pytest in a subprocess, shared by the tests that read Allure output (allure-pytest keeps
    process-global state that a nested in-process session would clobber, so it cannot run in this process, and each
    subprocess costs ~6 s of imports): ``UNTRAINED_RESNET_TEST`` and the packaged suite's tests of
    ``ALLURE_RUN_SUITE``, writing Allure results and, where Allure 3 is installed, the HTML report
    (``--claims-html``)."""
    from model_props.errors import ModelPropsError
    from model_props.reporting.html import find_allure

    folder = tmp_path_factory.mktemp("allure-run")
    (folder / "test_untrained.py").write_text(UNTRAINED_RESNET_TEST)
    try:
        find_allure(folder / "reports")
        html = True
    except ModelPropsError:
        html = False
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_untrained.py", "--pyargs",
         "model_props.suite", "-k", f"({ALLURE_RUN_SUITE}) or test_resnet_claim", "--alluredir=allure-results",
         f"--claims-cache={model_store.settings.cache_dir}", *(["--claims-html"] if html else [])],
        cwd=folder, capture_output=True, text=True,
    )  # fmt: skip
    return AllureRun(folder, proc.stdout + proc.stderr, proc.returncode, html)
