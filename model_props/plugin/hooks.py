"""The plugin's hooks: markers and session checks at configure time, training ahead of the tests, and the
parametrization of the claim suite (claim x model, marked as the profile's seed study expects)."""

from __future__ import annotations

import pytest

from ..errors import ModelPropsError
from . import state
from .recorder import Recorder

__all__ = ["MARKERS", "pytest_configure", "pytest_collection_finish", "pytest_generate_tests"]

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
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if getattr(config.option, "allure_report_dir", "unset") is None:  # allure-pytest is there and got no --alluredir
        config.option.allure_report_dir = str(config.invocation_params.dir / "reports" / "allure-results")
        config.option.clean_alluredir = True
    if hasattr(config, "workerinput"):  # pytest-xdist: share the cores instead of oversubscribing them
        import os

        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(config.workerinput["workercount"])))


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
    known failure at this profile; warn about a baseline produced with other versions."""
    from ..claims import get_claim
    from ..errors import ConfigError

    gate = state.gate(config)
    if not gate.active and gate.baseline is None:
        return
    models = store.settings.models
    if len(models) != 1:
        raise ConfigError(
            f"[tool.model_props.gate] gates one candidate model; got {len(models)} "
            f"({list(models) or 'none: give --model SPEC --checkpoint FILE or [tool.model_props] models'})"
        )
    candidate = models[0]
    for claim_id in gate.claims:
        claim = get_claim(claim_id)
        on = [candidate] if candidate in store.profile.recipes else store.profile.references
        expected = [exp.contradicted for m in on if (exp := _expectation(store, claim, m)) is not None]
        if expected and all(expected):
            raise ConfigError(
                f"[tool.model_props.gate] claims: {claim_id} is a known failure at profile {store.profile.name!r} "
                f"(its seed study expects it contradicted on {', '.join(on)}), so gating on it would always fail; "
                "gate on claims that hold at this scale"
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
    """Before the first test: train every model the collected tests read that the cache lacks, several at once
    (one process per core). Without this the session trains them one after the other as tests reach them."""
    config = session.config
    if not state.in_use(config) or hasattr(config, "workerinput") or config.option.collectonly or not session.items:
        return
    from ..claims import CLAIMS

    names: list[str] = []
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "model_name" in params:
            names.append(params["model_name"])
        if params.get("claim_id") in CLAIMS:  # an unknown id is the test's own error to report, in one line
            names += CLAIMS[params["claim_id"]].named_models
    if names:
        from ..session.pretraining import pretrain

        store = state.store(config)
        try:
            pretrain(store, names)
        except (
            Exception
        ) as exc:  # the tests that need the model then fail (or train) one by one, with their own message
            store.notify(
                f"training ahead of the tests stopped ({type(exc).__name__}: {exc}); each test trains what it needs"
            )


def _check_scope(store) -> None:
    """An architecture verdict needs k >= 3 seeds: of a user's model, its --checkpoint files; refuse a request
    that cannot be met before any test runs."""
    from ..claims.stats import MIN_SEEDS
    from ..errors import ConfigError

    s = store.settings
    for name in s.models:
        k = len(s.checkpoints.get(name, ()))
        from_study = k == 0 and name in store.profile.recipes  # a reference without --checkpoint: the seed study
        if 1 < k < MIN_SEEDS or (s.scope == "architecture" and k < MIN_SEEDS and not from_study):
            raise ConfigError(
                f"{name}: an architecture verdict needs at least {MIN_SEEDS} checkpoints (one per training seed), got "
                f"{k}; give --checkpoint='runs/seed*.safetensors' with {MIN_SEEDS}+ files, or one checkpoint for a "
                "verdict about those weights (--claims-scope checkpoint)"
            )
    if s.scope == "architecture" and store.study is None and any(m in store.profile.recipes for m in s.models or ()):
        from ..claims.expectations import regenerate

        raise ConfigError(f"--claims-scope architecture: profile {store.profile.name!r} has no seed study for its "
                          f"references; run {regenerate(store.profile.name)}")  # fmt: skip


def _expectation(store, claim, model: str):
    """The seed study's expectation of ``claim`` on reference ``model`` (None: no study, not a reference judged
    from it, or a stale entry, which its test reports)."""
    from ..errors import StudyError

    s = store.settings
    study = store.study
    if study is None or model not in store.profile.recipes or model in s.checkpoints or s.scope == "checkpoint":
        return None
    if model not in study.evaluated_on(claim):
        return None
    try:
        study.check(claim, store.profile)
        return study.expectation(claim, model)
    except StudyError:
        return None


def _expectation_mark(store, claim, model: str):
    """A strict xfail where the committed study already shows the test failing: ``raises=ExpectationMoved`` where
    the verdict over all its seeds moved away from what the setting seeds expect (the held-out seeds did not
    confirm it), else ``raises=ClaimContradicted`` where a part is expected contradicted; None otherwise (every
    other expectation is asserted by the test itself)."""
    from dataclasses import replace

    from ..claims import ClaimContradicted, ExpectationMoved

    expectation = _expectation(store, claim, model)
    if expectation is None:
        return None
    outcome = replace(store.study.evaluate(claim, model), expected=expectation.parts)
    set_seeds, all_seeds = list(expectation.set_seeds), list(store.study.seeds)
    if moved := [f"[{p.part.name}] {want} over seeds {set_seeds}, {p.verdict} over {all_seeds}"
                 for p, want in outcome.moved()]:  # fmt: skip
        return pytest.mark.xfail(strict=True, raises=ExpectationMoved, reason=(
            f"not confirmed by the held-out seeds {list(expectation.confirm_seeds)}: {'; '.join(moved)}; "
            f"the paper: {claim.evidence}"))  # fmt: skip
    if expectation.contradicted:
        return pytest.mark.xfail(strict=True, raises=ClaimContradicted, reason=expectation.reason())
    return None


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
