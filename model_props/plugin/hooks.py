"""The plugin's hooks: markers and session checks at configure time, training ahead of the tests, the
parametrization of the claim suite (claim x model, marked from the reviewed expectation snapshot only), and the
inconclusive outcome (a claim test that found its claim inconclusive is reported as INCONCLUSIVE, neither passed nor
failed, in the terminal, JUnit XML and Allure)."""

from __future__ import annotations

import pytest

from ..errors import ModelPropsError
from . import state
from .recorder import Recorder

__all__ = [
    "MARKERS", "INCONCLUSIVE", "pytest_configure", "pytest_collection_finish", "pytest_generate_tests",
    "pytest_report_teststatus", "pytest_runtest_makereport",
]  # fmt: skip

INCONCLUSIVE = ("claim_outcome", "inconclusive")  # the user property of a claim test that found its claim inconclusive
MARKERS = {
    "claim": "a test of a published claim (parametrized claim x model)",
    "gate": "a claim that gates a release; run with -m gate",
    "slow": "trains models or runs long measurements",
}


@pytest.hookimpl(tryfirst=True)  # before allure-pytest reads --alluredir
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    recorder = Recorder(config)
    config.pluginmanager.register(recorder, "model-props-recorder")
    if config.option.claims_html and not hasattr(config, "workerinput"):
        config.add_cleanup(recorder.generate_html)  # registered before allure-pytest's: runs after it closes its files
    if not state.in_use(config):
        return
    try:
        store = state.store(config)
        _ = store.profile  # an unknown profile or a malformed recipe is a usage error, reported now
        from ..zoo import parse_spec
        from ..zoo.pretrained import parse_pretrained

        for spec in [*store.settings.models, *store.settings.versus.values()]:
            if spec not in store.profile.recipes and parse_pretrained(spec) is None:
                parse_spec(spec)
        _check_versus(store)
        _check_gate(config, store)
        _check_scope(store)
        _check_scheduler(config, store)
        _check_data_root(config, store)
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if getattr(config.option, "allure_report_dir", "unset") is None:  # allure-pytest is there and got no --alluredir
        config.option.allure_report_dir = str(config.invocation_params.dir / "reports" / "allure-results")
        config.option.clean_alluredir = True
    if hasattr(config, "workerinput"):  # pytest-xdist: share the cores instead of oversubscribing them
        import os

        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(config.workerinput["workercount"])))


def _check_scheduler(config: pytest.Config, store) -> None:
    """A scheduler given is reached now, whether or not this session has anything to train on it: an unreachable one
    is a usage error, not a silent fall-back to training here."""
    if store.settings.scheduler is None or hasattr(config, "workerinput"):  # the controller checks it once
        return
    from ..execution import executor

    with executor(scheduler=store.settings.scheduler, cache_dir=store.settings.cache_dir):
        pass


def _check_data_root(config: pytest.Config, store) -> None:
    """Say so where ``--claims-data-root`` is given and no model of the session reads it (every one reads the
    generated dead leaves): it is read by CIFAR recipes and by pretrained models on an image folder."""
    from ..data.datasets import DEADLEAVES, split_size
    from ..zoo.pretrained import parse_pretrained

    s = store.settings
    names = [*(s.models or store.profile.references), *s.versus.values()]
    if s.data_root is None or any(parse_pretrained(n) is not None for n in names):
        return
    if {split_size(store.recipe(n).dataset)[0] for n in names} <= set(DEADLEAVES):
        config.issue_config_time_warning(UserWarning(
            f"model-props: --claims-data-root {s.data_root} is not read: every model of this session reads the "
            "generated dead-leaves data (CIFAR recipes and pretrained models on an image folder read it)"), stacklevel=2)  # fmt: skip


def _check_versus(store) -> None:
    """A comparator stands in for a reference of the profile: the reference must exist."""
    from ..errors import ConfigError, choices

    unknown = [ref for ref in store.settings.versus if ref not in store.profile.recipes]
    if unknown:
        raise ConfigError(
            f"--claims-versus names {unknown}, which are not recipes of profile {store.profile.name!r}; a comparator "
            f"stands in for one of: {choices(store.profile.recipes)}"
        )


def _check_gate(config: pytest.Config, store) -> None:
    """Reject, when the table is read, a gate that cannot work: no single candidate, a gating claim that is a
    known failure at this profile (or, for a candidate that is one of its recipes, one its snapshot does not expect
    supported there), a tolerance on an attack radius the profile does not measure; warn about a baseline produced
    with other versions."""
    from ..claims import get_claim
    from ..errors import ConfigError
    from ..gate import GATE_STATISTICS

    gate = state.gate(config)
    if not gate.active and gate.baseline is None:
        return
    models = store.settings.models
    if len(models) != 1:
        raise ConfigError(
            f"[tool.model_props.gate] gates one candidate model; got {len(models)} "
            f"({list(models) or 'none: give --model SPEC --checkpoint FILE or [tool.model_props] models'})"
        )
    candidate, snapshot = models[0], store.snapshot
    recipe = candidate in store.profile.recipes  # judged against its own snapshot, not the references'
    on = [candidate] if recipe else store.profile.references
    for claim_id in gate.claims:
        claim = get_claim(claim_id)
        expected = [e for m in on if snapshot is not None and (e := snapshot.expected(claim, m)) is not None]
        held = {v for e in expected for v in e.parts.values()}
        if recipe and expected and not ("supported" in held and held <= {"supported", "skipped"}):
            why = f"is not expected supported on {candidate} (its snapshot holds parts {' and '.join(sorted(held))})"
        elif expected and all("contradicted" in e.parts.values() for e in expected):
            why = f"is a known failure (its expectation snapshot holds it contradicted on {', '.join(on)})"
        else:
            continue
        raise ConfigError(f"[tool.model_props.gate] claims: {claim_id} {why} at profile {store.profile.name!r}, so "
                          "gating on it would always fail; gate on claims that hold at this scale")  # fmt: skip
    radii = store.profile.measurement.attack_epsilons_255
    if unmeasured := [n for n in gate.tolerances if GATE_STATISTICS[n].eps_255 not in (None, *radii)]:
        raise ConfigError(
            f"[tool.model_props.gate].tolerances: {', '.join(unmeasured)}: profile {store.profile.name!r} attacks at "
            f"eps {', '.join(f'{e}/255' for e in radii)} only (its [measurement] attack_epsilons_255)"
        )
    if gate.baseline is not None:
        from ..provenance import checkpoint_versions, versions

        if not gate.baseline.is_file():
            raise ConfigError(f"[tool.model_props.gate] baseline {str(gate.baseline)!r} does not exist")
        recorded = checkpoint_versions(gate.baseline)
        now = versions()
        differ = {k: (v, now.get(k)) for k, v in (recorded or {}).items() if k in now and v != str(now.get(k))}
        if differ:
            names = ", ".join(f"{k} {was} (now {is_})" for k, (was, is_) in differ.items())
            config.issue_config_time_warning(
                UserWarning(
                    f"model-props gate: the baseline {gate.baseline.name} was produced with {names}; its numbers are "
                    "measured again now, but its weights may not be comparable"
                ),
                stacklevel=2,
            )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Before the first test: train every model the collected tests read that the session trains live
    (:meth:`~model_props.config.settings.Settings.trains_live`: by default the references) and the cache lacks,
    several at once (one process per core), then measure there what the reproduction tests read of them, and what
    they read of the other models that the measurement cache lacks. Without this the session trains and measures
    them one after the other as tests reach them."""
    config = session.config
    if not state.in_use(config) or hasattr(config, "workerinput") or config.option.collectonly or not session.items:
        return
    from ..claims import CLAIMS

    names: list[str] = []
    reproduced: list[str] = []  # the references whose reproduction test runs: their live reports are measured ahead
    claims: dict[str, None] = {}
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "model_name" in params:
            names.append(params["model_name"])
            if "reproduction" in getattr(item, "fixturenames", ()):
                reproduced.append(params["model_name"])
        if params.get("claim_id") in CLAIMS:  # an unknown id is the test's own error to report, in one line
            names += CLAIMS[params["claim_id"]].named_models
            claims[params["claim_id"]] = None
    from ..session.inputs import check_pretrained, check_user_models

    store = state.store(config)
    with state.usage_errors():  # a bad model, checkpoint, image folder or label mapping: one line now, before training
        check_user_models(store)
        for line in check_pretrained(store, [CLAIMS[c] for c in claims]):
            store.notify(f"skipped for too few images: {line}")
    if names:
        from ..session.pretraining import pretrain

        try:
            pretrain(store, names, reproduced)
        except (
            Exception
        ) as exc:  # the tests that need the model then fail (or train) one by one, with their own message
            store.notify(
                f"training ahead of the tests stopped ({type(exc).__name__}: {exc}); each test trains and measures "
                "what it needs"
            )


def _check_scope(store) -> None:
    """Refuse, before any test runs, a scope that cannot be met for a model under test
    (:func:`~model_props.verdicts.scope.route`: e.g. an architecture verdict needs k >= 3 seeds)."""
    from ..session.routes import route_for

    for name in store.settings.models or store.profile.references:
        route_for(store, name)


def _expectation_mark(store, claim, model: str):
    """A strict ``xfail(raises=ClaimContradicted)`` where the reviewed expectation snapshot holds a part of the claim
    contradicted on ``model``, judged from the study; None otherwise. Read from the snapshot only: every other
    expectation, and this one's other parts, are asserted by the test itself."""
    from ..session.routes import route_for
    from ..verdicts import ClaimContradicted

    snapshot = store.snapshot
    if snapshot is None or store.study is None:
        return None
    expected = snapshot.expected(claim, model) if route_for(store, model) == "study" else None
    if expected is None or "contradicted" not in expected.parts.values():
        return None
    parts = ", ".join(f"[{n}] {v}" for n, v in expected.parts.items() if v != "skipped")
    return pytest.mark.xfail(strict=True, raises=ClaimContradicted, reason=(
        f"{claim.evidence}. Not reproduced at this scale: the expectation snapshot {expected.source} holds {parts} "
        "over the study's seeds"))  # fmt: skip


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``model_name`` runs over the models under test (``--model``, or the references); ``claim_id`` x
    ``model_name`` over the catalogue, marked as the profile's seed study says."""
    if "gate_statistic" in metafunc.fixturenames:
        gate = state.gate(metafunc.config)
        params = [pytest.param(name, id=name, marks=pytest.mark.gate) for name in gate.tolerances]
        metafunc.parametrize(
            "gate_statistic",
            params
            or [
                pytest.param(
                    None, id="no-tolerances", marks=pytest.mark.skip(reason="no [tool.model_props.gate] tolerances")
                )
            ],
        )
        return
    if "model_name" not in metafunc.fixturenames:
        return
    store = state.store(metafunc.config)
    with state.usage_errors():
        names = store.models_under_test()
    group = {n: pytest.mark.xdist_group(n.replace(":", "_")) for n in names}
    if "claim_id" not in metafunc.fixturenames:
        metafunc.parametrize("model_name", [pytest.param(n, id=n, marks=group[n]) for n in names], scope="session")
        return
    from ..claims import list_claims

    gating = set(state.gate(metafunc.config).claims)
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


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A claim test that found its claim inconclusive is its own outcome: counted apart ("25 inconclusive") and
    shown as ``I`` / INCONCLUSIVE, neither passed nor failed."""
    if report.when == "call" and report.passed and INCONCLUSIVE in report.user_properties:
        return "inconclusive", "I", ("INCONCLUSIVE", {"yellow": True})
    return None


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: after allure-pytest has set the result's status
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """An inconclusive claim test's Allure result gets the status ``unknown`` (allure-pytest knows only passed,
    failed, broken and skipped) and its reason."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.passed or INCONCLUSIVE not in item.user_properties:
        return
    listener = item.config.pluginmanager.get_plugin("allure_listener")
    if listener is None:
        return
    result = listener.allure_logger.get_test(listener._cache.get(item.nodeid))
    if result is not None:
        from allure_commons.model2 import Status, StatusDetails

        why = dict(item.user_properties).get("inconclusive_parts", "")
        result.status = Status.UNKNOWN
        result.statusDetails = StatusDetails(
            message=f"INCONCLUSIVE: the claim is neither supported nor contradicted\n{why}".rstrip()
        )
