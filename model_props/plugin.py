"""The pytest plugin: options, session fixtures for the models under test, parametrization, summary.

Registered through the ``pytest11`` entry point. Options live in one group, ``--claims-*``, plus
``--model`` (repeatable) and ``--checkpoint`` (repeatable, paired with ``--model`` in order). Session state
is kept in ``config.stash``; heavy imports (torch, timm) happen inside hooks and fixtures.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .errors import ModelPropsError

__all__ = ["user_errors"]

MODEL_FIXTURES = ("model_name", "model_under_test")
_store_key = pytest.StashKey["ModelStore"]()
_models_key = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from .recipes import PROFILES

    group = parser.getgroup("model-props", "model-props: published findings about vision models as tests")
    group.addoption("--claims-profile", dest="claims_profile", default="smoke", choices=PROFILES,
                    help="recipe profile of the reference models: smoke (CPU, minutes) or paper (GPU). Default: smoke")
    group.addoption("--claims-cache", dest="claims_cache", default=None, metavar="DIR",
                    help="cache of datasets and trained models. Default: $MODEL_PROPS_CACHE or ~/.cache/model-props")
    group.addoption("--claims-data-root", dest="claims_data_root", default=None, metavar="DIR",
                    help="folder holding CIFAR-10/100 (torchvision layout) for profiles that use them")
    group.addoption("--claims-device", dest="claims_device", default="cpu", metavar="DEVICE",
                    help="torch device for training and measurements: cpu, cuda, cuda:N. Default: cpu")
    group.addoption("--claims-seed", dest="claims_seed", type=int, default=0, metavar="N",
                    help="seed of every measurement's sampling. Default: 0")
    group.addoption("--model", dest="claims_models", action="append", default=[], metavar="SPEC",
                    help="a model to test besides the references: a reference name, timm:NAME or package.module:factory (repeatable)")
    group.addoption("--checkpoint", dest="claims_checkpoints", action="append", default=[], metavar="PATH",
                    help="weights for the --model at the same position (safetensors or torch state dict); without it the model is trained with the profile's 'custom' recipe")


def _settings(config: pytest.Config):
    from .cache import default_cache_dir
    from .store import Settings

    opt = config.option
    device = opt.claims_device
    if not (device == "cpu" or device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()) or device == "mps"):
        raise pytest.UsageError(f"--claims-device={device!r}; valid: 'cpu', 'cuda', 'cuda:N', 'mps'")
    return Settings(
        profile=opt.claims_profile,
        cache_dir=Path(opt.claims_cache).expanduser() if opt.claims_cache else default_cache_dir(),
        data_root=Path(opt.claims_data_root).expanduser() if opt.claims_data_root else None,
        device=device,
        seed=opt.claims_seed,
        progress=opt.capture == "no",  # a progress bar only where the user sees it (-s)
    )


def pytest_configure(config: pytest.Config) -> None:
    from .store import ModelStore
    from .zoo import parse_spec

    models: list[str] = config.option.claims_models
    checkpoints: list[str] = config.option.claims_checkpoints
    try:
        for spec in models:
            parse_spec(spec)
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if checkpoints and len(checkpoints) != len(models):
        raise pytest.UsageError(
            f"got {len(checkpoints)} --checkpoint for {len(models)} --model; give one --checkpoint per --model, in order"
        )
    if hasattr(config, "workerinput"):  # pytest-xdist: share the cores instead of oversubscribing them
        import os

        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(config.workerinput["workercount"])))
    store = ModelStore(_settings(config), {m: Path(c).expanduser() for m, c in zip(models, checkpoints)})
    config.stash[_store_key] = store
    config.pluginmanager.register(Recorder(config), "model-props-recorder")
    try:
        names = store.reference_names()
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_models_key] = names + [m for m in models if m not in names]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`ModelPropsError` into a one-line test failure instead of a traceback."""
    try:
        yield
    except ModelPropsError as exc:
        pytest.fail(f"{type(exc).__name__}: {exc}", pytrace=False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``model_name`` runs over the references and every --model; ``claim_id`` x ``model_name`` over the
    catalogue, with a strict xfail where a finding is known not to replicate at this profile."""
    if "model_name" not in metafunc.fixturenames:
        return
    names = metafunc.config.stash[_models_key]
    group = {n: pytest.mark.xdist_group(n.replace(":", "_")) for n in names}
    if "claim_id" not in metafunc.fixturenames:
        metafunc.parametrize("model_name", [pytest.param(n, id=n, marks=group[n]) for n in names], scope="session")
        return
    from .claims import list_claims

    profile = metafunc.config.option.claims_profile
    params = []
    for claim in list_claims():
        for n in names:
            marks = [group[n], pytest.mark.claim]
            if claim.gate:
                marks.append(pytest.mark.gate)
            if (reason := claim.known_failures.get((profile, n))) is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            params.append(pytest.param(claim.id, n, id=f"{claim.id}-{n}", marks=marks))
    metafunc.parametrize(("claim_id", "model_name"), params, scope="session")


@pytest.fixture(scope="session")
def model_store(request: pytest.FixtureRequest):
    """The session's :class:`~model_props.store.ModelStore`: ``model_store.get(name)`` builds once."""
    return request.config.stash[_store_key]


@pytest.fixture(scope="session")
def dataset(model_store):
    """The profile's dataset (dead leaves for ``smoke``)."""
    with user_errors():
        return model_store.dataset()


@pytest.fixture(scope="session")
def model_under_test(model_store, model_name: str):
    """The trained model named by ``model_name``: a :class:`~model_props.store.ModelUnderTest`."""
    with user_errors():
        return model_store.get(model_name)


@pytest.fixture(scope="session")
def reference_model(model_store):
    """A function ``name -> ModelUnderTest`` for tests that compare against a specific reference."""
    def get(name: str):
        with user_errors():
            return model_store.get(name)

    return get


@pytest.fixture
def check_claim(model_store, request: pytest.FixtureRequest):
    """``check_claim(claim, model_under_test, record=True) -> ClaimOutcome``.

    Skips (with the missing trait as the reason) when the claim does not apply; otherwise measures the
    model (once a session), bootstraps every part, labels the Allure result, attaches the figure and the
    numbers, and records the verdict for ``reports/summary.json`` (unless ``record=False``, e.g. mutants).
    """
    from .evaluation import evaluate_claim
    from .recipes import measurement_settings
    from .report import allure_labels, attach, figure_png, outcome_record, skip_record

    def check(claim, mut, *, record: bool = True):
        allure_labels(claim, mut.name)
        props = request.node.user_properties
        if record:
            props.append(("model_info", {mut.name: {"accuracy": mut.metrics["test_accuracy"], "parameters": mut.parameters,
                                                    "checkpoint_sha256": mut.checkpoint_sha256}}))
        reason = claim.skip_reason(mut.anatomy)
        if reason is not None:
            if record:
                props.append(("claim_record", skip_record(claim, mut.name, reason)))
            pytest.skip(f"{claim.id} does not apply to {mut.name}: {reason}")
        with user_errors():
            report = model_store.report_for(mut)
            outcome = evaluate_claim(claim, mut.name, report, mut.anatomy, model_store.unit_report,
                                     seed=model_store.settings.seed, n_boot=measurement_settings(model_store.settings.profile).n_boot)
        attach(outcome, figure_png(claim, report, mut.anatomy, mut.name))
        if record:
            props.append(("claim_record", outcome_record(outcome)))
        return outcome

    return check


class Recorder:
    """Collects claim records and model facts; writes ``reports/summary.{json,md}`` and the verdict table.

    Records travel in ``report.user_properties``, so with pytest-xdist they reach the controller, which is
    the only process that writes the summary.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict] = []
        self.models: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        record = props.get("claim_record")
        if record is None or (report.when != "call" and not report.skipped):
            return
        record = dict(record)
        if hasattr(report, "wasxfail"):
            record["measured_verdict"] = record["verdict"]
            record["verdict"] = "xfailed"
            record["reason"] = f"known not to replicate at this scale: {report.wasxfail}\n{record['reason']}"
        self.records.append(record)
        self.models.update(props.get("model_info", {}))

    @property
    def directory(self) -> Path:
        """``reports/`` under the directory pytest was invoked from, like ``--alluredir=reports/...``."""
        return Path(self.config.invocation_params.dir) / "reports"

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput") or not self.records:
            return
        from .report import write_summary

        opt = self.config.option
        write_summary(self.directory, profile=opt.claims_profile, seed=opt.claims_seed, models=self.models,
                      results=self.records)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        if self.records:
            from .report import verdict_table

            tr.section("model-props: claim verdicts (decisive statistic)")
            for line in verdict_table(sorted(self.records, key=lambda r: (r["claim"], r["model"]))):
                tr.write_line(line)
            tr.write_line(f"written to {self.directory / 'summary.json'} and summary.md")
        if self.models:
            tr.section("model-props: models under test")
            tr.write_line(f"{'model':24s} {'params':>9s} {'test acc':>9s}  checkpoint sha256")
            for name, m in self.models.items():
                tr.write_line(f"{name:24s} {m['parameters']:9d} {m['accuracy']:9.3f}  {str(m['checkpoint_sha256'])[:16]}")
