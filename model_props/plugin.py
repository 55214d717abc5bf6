"""The pytest plugin: options, session fixtures for the models under test, parametrization, summary.

Registered through the ``pytest11`` entry point, so it loads in every pytest session of an environment
that has model-props installed. It stays inert there unless the session uses it: it registers its markers
and options and nothing else (no torch import, no output, no error). It is *in use* when the command line
gives one of its options, the project's pyproject has a ``[tool.model_props]`` table, or the session
collects the packaged claim suite (``pytest --pyargs model_props.suite``); then it validates its settings
up front and writes Allure results to ``reports/allure-results`` unless ``--alluredir`` says otherwise. Its
fixtures work in any session (settings then come from the defaults and the table).

Options live in one group, ``--claims-*``, plus ``--model`` (repeatable) and ``--checkpoint`` (repeatable,
paired with ``--model`` in order). Session state is kept in ``config.stash``; heavy imports (torch, timm)
happen inside hooks and fixtures, only once the plugin is used.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .errors import ModelPropsError

__all__ = ["user_errors", "MARKERS"]

MARKERS = {
    "claim": "a test of a published claim (parametrized claim x model)",
    "gate": "a claim that gates a release; run with -m gate",
    "slow": "trains models or runs long measurements",
}
SUITE_PACKAGE = "model_props.suite"
_settings_key = pytest.StashKey["Settings"]()
_store_key = pytest.StashKey["ModelStore"]()
# option dest -> Settings key
_OPTIONS = {
    "claims_profile": "profile", "claims_cache": "cache", "claims_data_root": "data_root", "claims_device": "device",
    "claims_seed": "seed", "claims_train_seed": "train_seed", "claims_recipes": "recipes_dir",
    "claims_remeasure": "remeasure", "claims_models": "models", "claims_checkpoints": "checkpoints",
    "claims_img_size": "img_size", "claims_steps": "custom_steps",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("model-props", "model-props: published findings about vision models as tests")
    group.addoption("--claims-profile", dest="claims_profile", default=None, metavar="NAME",
                    help="recipe profile: smoke (CPU, minutes), paper (GPU), or one of --claims-recipes. Default: smoke")
    group.addoption("--claims-cache", dest="claims_cache", default=None, metavar="DIR",
                    help="cache of datasets, trained models and measurements. Default: $MODEL_PROPS_CACHE or ~/.cache/model-props")
    group.addoption("--claims-data-root", dest="claims_data_root", default=None, metavar="DIR",
                    help="folder holding CIFAR-10/100 (torchvision layout) for profiles that use them")
    group.addoption("--claims-device", dest="claims_device", default=None, metavar="DEVICE",
                    help="torch device for training and measurements: cpu, cuda, cuda:N. Default: cpu")
    group.addoption("--claims-seed", dest="claims_seed", type=int, default=None, metavar="N",
                    help="seed of every measurement's sampling. Default: 0")
    group.addoption("--claims-train-seed", dest="claims_train_seed", type=int, default=None, metavar="N",
                    help="train every recipe with seed N instead of its own (a different set of references)")
    group.addoption("--claims-recipes", dest="claims_recipes", default=None, metavar="DIR",
                    help="a folder of your own profiles (<profile>.toml); a file named like a built-in profile extends it")
    group.addoption("--claims-remeasure", dest="claims_remeasure", action="store_true", default=None,
                    help="ignore the measurement cache and measure again")
    group.addoption("--claims-steps", dest="claims_steps", type=int, default=None, metavar="N",
                    help="train your --model (given without --checkpoint) for N optimizer steps, warm-up N/8, instead of "
                         "the profile's custom recipe budget")
    group.addoption("--claims-img-size", dest="claims_img_size", type=int, default=None, metavar="N",
                    help="train and measure your --model at N px (its native resolution); claims that compare with the "
                         "references (at the profile's size) are then skipped")
    group.addoption("--claims-html", dest="claims_html", action="store_true", default=False,
                    help="after the run, generate the Allure HTML report reports/allure-report/index.html (needs Node.js "
                         "and Allure 3: npm ci --prefix reports)")
    group.addoption("--model", dest="claims_models", action="append", default=[], metavar="SPEC",
                    help="a model to test instead of the references: a reference name, timm:NAME or package.module:factory (repeatable)")
    group.addoption("--checkpoint", dest="claims_checkpoints", action="append", default=[], metavar="PATH",
                    help="weights for the --model at the same position (safetensors or torch state dict); without it the model is trained with the profile's 'custom' recipe")


def _pyproject(config: pytest.Config) -> Path:
    ini = config.inipath
    return ini if ini is not None and ini.name == "pyproject.toml" else config.rootpath / "pyproject.toml"


def _cli(config: pytest.Config) -> dict[str, Any]:
    opt = config.option
    return {key: getattr(opt, dest) for dest, key in _OPTIONS.items()}


def _collects_suite(config: pytest.Config) -> bool:
    import importlib.util

    spec = importlib.util.find_spec(SUITE_PACKAGE)
    suite_dir = Path(spec.origin).parent if spec and spec.origin else None
    for arg in config.args:
        target = arg.split("::")[0]
        if target == SUITE_PACKAGE or target.startswith(SUITE_PACKAGE + "."):
            return True
        if suite_dir is not None:
            path = (config.invocation_params.dir / target).resolve()
            if path == suite_dir or suite_dir in path.parents:
                return True
    return False


def _in_use(config: pytest.Config) -> bool:
    from .config import read_table

    given = any(v not in (None, []) for v in _cli(config).values()) or config.option.claims_html
    try:
        table = read_table(_pyproject(config))
    except ModelPropsError:
        return True  # a broken table is reported by the settings
    return given or bool(table) or _collects_suite(config)


def _settings(config: pytest.Config):
    """The session's :class:`~model_props.config.Settings` (validated once, then kept in the stash)."""
    if _settings_key not in config.stash:
        from .config import Settings, read_table

        pyproject = _pyproject(config)
        cli = {**_cli(config), "progress": config.option.capture == "no"}  # a progress bar only where it shows (-s)
        config.stash[_settings_key] = Settings.resolve(read_table(pyproject), pyproject.parent, cli)
    return config.stash[_settings_key]


def _store(config: pytest.Config):
    if _store_key not in config.stash:
        from .store import ModelStore

        store = ModelStore(_settings(config))
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # announcements (a long training ahead) go to the terminal, past output capture
            store.notify = lambda message: reporter.write_line(f"model-props: {message}", yellow=True)
        config.stash[_store_key] = store
    return config.stash[_store_key]


@pytest.hookimpl(tryfirst=True)  # before allure-pytest reads --alluredir
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    recorder = Recorder(config)
    config.pluginmanager.register(recorder, "model-props-recorder")
    if config.option.claims_html and not hasattr(config, "workerinput"):
        config.add_cleanup(recorder.generate_html)  # registered before allure-pytest's: runs after it closes its files
    if not _in_use(config):
        return
    try:
        store = _store(config)
        store.profile  # an unknown profile or a malformed recipe is a usage error, reported now
        from .zoo import parse_spec

        for spec in store.settings.models:
            if spec not in store.profile.recipes:
                parse_spec(spec)
        _check_gate(config, store)
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if getattr(config.option, "allure_report_dir", "unset") is None:  # allure-pytest is there and got no --alluredir
        config.option.allure_report_dir = str(config.invocation_params.dir / "reports" / "allure-results")
        config.option.clean_alluredir = True
    if hasattr(config, "workerinput"):  # pytest-xdist: share the cores instead of oversubscribing them
        import os

        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(config.workerinput["workercount"])))


_gate_key = pytest.StashKey["Gate"]()


def _gate(config: pytest.Config):
    """The session's release gate (empty without a ``[tool.model_props.gate]`` table)."""
    if _gate_key not in config.stash:
        from .gate import read_gate

        config.stash[_gate_key] = read_gate(_settings(config).gate, _pyproject(config).parent)
    return config.stash[_gate_key]


def _check_gate(config: pytest.Config, store) -> None:
    """Reject, when the table is read, a gate that cannot work: no single candidate, a gating claim that is a
    known failure at this profile; warn about a baseline produced with other versions."""
    from .claims import get_claim
    from .errors import ConfigError

    gate = _gate(config)
    if not gate.active and gate.baseline is None:
        return
    models = store.settings.models
    if len(models) != 1:
        raise ConfigError(f"[tool.model_props.gate] gates one candidate model; got {len(models)} "
                          f"({list(models) or 'none: give --model SPEC --checkpoint FILE or [tool.model_props] models'})")
    candidate = models[0]
    study = store.study
    for claim_id in gate.claims:
        claim = get_claim(claim_id)
        if study is None:
            continue
        exp = study.expectation(claim, candidate) if candidate in store.profile.recipes else None
        if (exp is not None and exp.kind == "known-failure") or (exp is None and study.never_replicates(claim)):
            raise ConfigError(f"[tool.model_props.gate] claims: {claim_id} is a known failure at profile "
                              f"{store.profile.name!r} (its seed study never supports it), so gating on it would "
                              "always fail; gate on claims that hold at this scale")
    if gate.baseline is not None:
        from .provenance import checkpoint_versions, versions

        if not gate.baseline.is_file():
            raise ConfigError(f"[tool.model_props.gate] baseline {str(gate.baseline)!r} does not exist")
        recorded = checkpoint_versions(gate.baseline)
        now = versions()
        differ = {k: (v, now.get(k)) for k, v in (recorded or {}).items() if k in now and v != str(now.get(k))}
        if differ:
            names = ", ".join(f"{k} {was} (now {is_})" for k, (was, is_) in differ.items())
            config.issue_config_time_warning(UserWarning(
                f"model-props gate: the baseline {gate.baseline.name} was produced with {names}; its numbers are "
                "measured again now, but its weights may not be comparable"), stacklevel=2)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Before the first test: train every model the collected tests read that the cache lacks, several at once
    (one process per core). Without this the session trains them one after the other as tests reach them."""
    config = session.config
    if not _in_use(config) or hasattr(config, "workerinput") or config.option.collectonly or not session.items:
        return
    from .claims import get_claim

    names: list[str] = []
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "model_name" in params:
            names.append(params["model_name"])
        if "claim_id" in params:
            names += get_claim(params["claim_id"]).named_models
    if names:
        store = _store(config)
        try:
            store.pretrain(names)
        except Exception as exc:  # the tests that need the model then fail (or train) one by one, with their own message
            store.notify(f"training ahead of the tests stopped ({type(exc).__name__}: {exc}); each test trains what it needs")


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`ModelPropsError` into a one-line test failure instead of a traceback."""
    try:
        yield
    except ModelPropsError as exc:
        pytest.fail(f"{type(exc).__name__}: {exc}", pytrace=False)


def _expectation_mark(store, claim, model: str):
    """The seed study's mark for ``claim`` on ``model``: strict xfail (known failure), non-strict xfail
    (seed-dependent), or None (expected to pass, or not studied: a user's model)."""
    study = store.study
    if study is None or model not in store.profile.recipes:
        return None
    expectation = study.expectation(claim, model)
    if expectation is None or expectation.kind == "pass":
        return None
    return pytest.mark.xfail(strict=expectation.kind == "known-failure", reason=expectation.reason)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``model_name`` runs over the models under test (``--model``, or the references); ``claim_id`` x
    ``model_name`` over the catalogue, marked as the profile's seed study says."""
    if "gate_statistic" in metafunc.fixturenames:
        gate = _gate(metafunc.config)
        params = [pytest.param(name, id=name, marks=pytest.mark.gate) for name in gate.tolerances]
        metafunc.parametrize("gate_statistic", params or [pytest.param(
            None, id="no-tolerances", marks=pytest.mark.skip(reason="no [tool.model_props.gate] tolerances"))])
        return
    if "model_name" not in metafunc.fixturenames:
        return
    store = _store(metafunc.config)
    with _usage_errors():
        names = store.models_under_test()
    group = {n: pytest.mark.xdist_group(n.replace(":", "_")) for n in names}
    if "claim_id" not in metafunc.fixturenames:
        metafunc.parametrize("model_name", [pytest.param(n, id=n, marks=group[n]) for n in names], scope="session")
        return
    from .claims import list_claims

    gating = set(_gate(metafunc.config).claims)
    params = []
    for claim in list_claims():
        for n in names:
            marks = [group[n], pytest.mark.claim]
            if claim.gate or claim.id in gating:
                marks.append(pytest.mark.gate)
            if (mark := _expectation_mark(store, claim, n)) is not None:
                marks.append(mark)
            params.append(pytest.param(claim.id, n, id=f"{claim.id}-{n}", marks=marks))
    metafunc.parametrize(("claim_id", "model_name"), params, scope="session")


@contextmanager
def _usage_errors() -> Iterator[None]:
    try:
        yield
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def model_store(request: pytest.FixtureRequest):
    """The session's :class:`~model_props.store.ModelStore`: ``model_store.get(name)`` builds once."""
    with user_errors():
        return _store(request.config)


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
    """``check_claim(claim, model_under_test, record=True, substitutes=None) -> ClaimOutcome``.

    Skips (with the reason) when the claim does not apply; otherwise reads every report its parts name (of
    the model under test and of the models it compares with, at their checkpoints; once a session and from
    the measurement cache), bootstraps every part, labels the Allure result, attaches the figure and the
    numbers, and records the verdict for ``reports/summary.json`` (unless ``record=False``, e.g. mutants).
    ``substitutes`` maps a model name to a model to read instead (a mutant standing in for a variant).
    """
    from .evaluation import evaluate_claim
    from .figures import figure_png, raw_measurements
    from .report import allure_labels, allure_title, attach, model_facts, outcome_record, skip_record

    xfail = request.node.get_closest_marker("xfail")
    expected = None if xfail is None else "known-failure" if xfail.kwargs.get("strict") else "seed-dependent"

    def check(claim, mut, *, record: bool = True, substitutes=None):
        allure_labels(claim, mut.name, expected)
        props = request.node.user_properties
        if record:
            props.append(("model_info", {mut.name: model_facts(mut)}))
        with user_errors():
            reason = claim.skip_reason(mut.anatomy, mut.name, model_store.profile.recipes)
        if reason is not None:
            allure_title(claim, mut.name, "not applicable")
            if record:
                props.append(("claim_record", skip_record(claim, mut.name, reason)))
            pytest.skip(f"{claim.id} does not apply to {mut.name}: {reason}")
        used: dict[tuple[str, str, str], object] = {}

        def reports(name, kind, checkpoint):
            name = name or mut.name
            target = (substitutes or {}).get(name)
            if target is None and name == mut.name and (mut.checkpoint_name == checkpoint or mut.recipe is None
                                                        or mut.mutation is not None):
                target = mut  # the model under test itself (a mutant or a user's weights: the only state there is)
            report = model_store.report_for(target, kind) if target is not None else model_store.report(name, kind, checkpoint)
            used[(name, kind, checkpoint)] = report
            return report

        size = model_store.dataset(mut.dataset).image_size
        reference_size = model_store.dataset().image_size

        def incomparable(part) -> str | None:
            if size != reference_size and (part.versus or part.subject):
                return (f"it compares with the profile's {reference_size}-px models; {mut.name} is measured at {size} px "
                        "(--claims-img-size)")
            return None

        with user_errors():
            outcome = evaluate_claim(claim, mut.name, mut.anatomy, reports, seed=model_store.settings.seed,
                                     n_boot=model_store.profile.measurement.n_boot, skip_part=incomparable)
        if all(p.verdict == "skipped" for p in outcome.parts):  # nothing this model can be measured on
            reason = "; ".join(f"[{p.part.name}] {p.reason}" for p in outcome.parts)
            allure_title(claim, mut.name, "not applicable")
            if record:
                props.append(("claim_record", skip_record(claim, mut.name, reason)))
            pytest.skip(f"{claim.id} does not apply to {mut.name}: {reason}")
        attach(outcome, figure_png(claim, mut.name, used), raw_measurements(used))
        allure_title(claim, mut.name, outcome.verdict)
        if record:
            props.append(("claim_record", {**outcome_record(outcome), "expected": expected or "pass"}))
        return outcome

    return check


@pytest.fixture
def gate_check(model_store, request: pytest.FixtureRequest):
    """``gate_check(statistic) -> GateOutcome``: the candidate against the gate's baseline on one statistic."""
    from .gate import GATE_STATISTICS, check_tolerance

    gate = _gate(request.config)

    def check(statistic: str):
        with user_errors():
            candidate_name = model_store.models_under_test()[0]
            candidate = model_store.get(candidate_name)
            baseline = model_store.baseline(candidate_name, gate.baseline)
            kind = GATE_STATISTICS[statistic].report
            outcome = check_tolerance(statistic, gate.tolerances[statistic], model_store.report_for(candidate, kind),
                                      model_store.report_for(baseline, kind), candidate=candidate_name,
                                      baseline=str(gate.baseline.name), seed=model_store.settings.seed,
                                      n_boot=model_store.profile.measurement.n_boot)
        request.node.user_properties.append(("gate_record", {"statistic": statistic, "passed": outcome.passed,
                                                             "message": outcome.message}))
        return outcome

    return check


class Recorder:
    """Collects claim records and model facts; writes ``reports/summary.{json,md}`` and the verdict table.

    Records travel in ``report.user_properties``, so with pytest-xdist they reach the controller, which is
    the only process that writes the summary. Nothing is written or printed in a session without records.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict] = []
        self.models: dict[str, dict] = {}
        self.gate: list[dict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if report.when == "call" and "gate_record" in props:
            self.gate.append(props["gate_record"])
        record = props.get("claim_record")
        if record is None or (report.when != "call" and not report.skipped):
            return
        record = dict(record)
        if report.skipped and hasattr(report, "wasxfail"):  # an expected failure that failed
            record["measured_verdict"] = record["verdict"]
            record["verdict"] = "xfailed"
            record["reason"] = f"expected not to hold at this scale: {report.wasxfail}\n{record['reason']}"
        self.records.append(record)
        self.models.update(props.get("model_info", {}))

    @property
    def directory(self) -> Path:
        """``reports/`` under the directory pytest was invoked from, like ``--alluredir=reports/...``."""
        return Path(self.config.invocation_params.dir) / "reports"

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput") or not (self.records or self.gate):
            return
        from .provenance import provenance
        from .report import write_summary

        settings = _settings(self.config)
        write_summary(self.directory, profile=settings.profile, seed=settings.seed, train_seed=settings.train_seed,
                      models=self.models, results=self.records, provenance=provenance(settings.device), gate=self.gate)

    def generate_html(self) -> None:
        """Build the HTML report from this session's Allure results (``--claims-html``)."""
        from .html_report import generate_html

        results = getattr(self.config.option, "allure_report_dir", None)
        if not results:
            return
        try:
            index = generate_html(Path(results), self.directory)
        except ModelPropsError as exc:
            print(f"\nmodel-props: no HTML report: {exc}")
            return
        print(f"\nmodel-props: HTML report {index}")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        if self.records:
            from .report import verdict_table

            tr.section("model-props: claim verdicts (decisive statistic)")
            for line in verdict_table(sorted(self.records, key=lambda r: (r["claim"], r["model"]))):
                tr.write_line(line)
            tr.write_line(f"written to {self.directory / 'summary.json'} and summary.md")
        if self.gate:
            tr.section("model-props: release gate tolerances")
            for g in self.gate:
                tr.write_line(("PASS " if g["passed"] else "FAIL ") + g["message"])
        if self.models:
            tr.section("model-props: models under test")
            tr.write_line(f"{'model':24s} {'params':>9s} {'test acc':>9s}  checkpoint sha256")
            for name, m in self.models.items():
                tr.write_line(f"{name:24s} {m['parameters']:9d} {m['accuracy']:9.3f}  {str(m['checkpoint_sha256'])[:16]}")
