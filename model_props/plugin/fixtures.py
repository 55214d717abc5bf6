"""The plugin's fixtures: the session's model store and models, ``check_claim`` (judge, label, attach, record),
``assert_claim`` (and assert what the outcome must be), ``gate_check`` (one release-gate tolerance) and
``reproduction`` (this machine's live weights against the seed study)."""

from __future__ import annotations

import pytest

from ..errors import ConfigError
from . import state

__all__ = ["model_store", "dataset", "model_under_test", "reference_model", "check_claim", "assert_claim", "gate_check",
           "reproduction"]  # fmt: skip


@pytest.fixture(scope="session")
def model_store(request: pytest.FixtureRequest):
    """The session's :class:`~model_props.store.model_store.ModelStore`: ``model_store.get(name)`` builds once."""
    with state.user_errors():
        return state.store(request.config)


@pytest.fixture(scope="session")
def dataset(model_store):
    """The profile's dataset (dead leaves for ``smoke``)."""
    with state.user_errors():
        return model_store.dataset()


@pytest.fixture(scope="session")
def model_under_test(model_store, model_name: str):
    """The trained model named by ``model_name``: a :class:`~model_props.store.model_store.ModelUnderTest`."""
    with state.user_errors():
        return model_store.get(model_name)


@pytest.fixture(scope="session")
def reference_model(model_store):
    """A function ``name -> ModelUnderTest`` for tests that compare against a specific reference."""

    def get(name: str):
        with state.user_errors():
            return model_store.get(name)

    return get


@pytest.fixture
def check_claim(model_store, request: pytest.FixtureRequest):
    """``check_claim(claim, model_under_test, record=True, substitutes=None, scope=None) -> ClaimOutcome``.

    Skips (with the reason) when the claim does not apply; otherwise judges it at the scope the model allows
    (:mod:`model_props.session.judging`: architecture for the references, from the seed study and against the
    expectation snapshot, and for a model given several checkpoints; checkpoint for one set of weights), labels the
    Allure result, attaches the figure and the numbers, and records the verdict for ``reports/summary.json``
    (unless ``record=False``, e.g. mutants). ``substitutes`` maps a model name to a model to read instead (a mutant
    standing in for a variant); ``scope="checkpoint"`` judges these weights whatever the session's scope (a
    mutant's base, measured the same way as its mutant). :func:`assert_claim` asserts the outcome.
    """
    from ..errors import NotApplicable
    from ..reporting.allure import allure_labels, allure_title, attach
    from ..reporting.figure_cache import cached_figure_png
    from ..reporting.figures import raw_measurements
    from ..reporting.study_figure import study_figure_png
    from ..reporting.summary import judgement_record, model_facts, skip_record
    from ..session.judging import judge_claim

    def check(claim, tested, *, record: bool = True, substitutes=None, scope: str | None = None):
        allure_labels(claim, tested.name)
        props = request.node.user_properties
        if record:
            props.append(("model_info", {tested.name: model_facts(tested)}))
        try:
            with state.user_errors():
                judgement = judge_claim(model_store, claim, tested, substitutes=substitutes, scope=scope)
        except NotApplicable as exc:
            allure_title(claim, tested.name, "does not apply")
            if record:
                props.append(("claim_record", skip_record(claim, tested.name, str(exc))))
            if _gates(request, tested.name):  # a release gate passes only on claims it judged supported
                pytest.fail(f"{claim.id} gates the release but cannot be judged on {tested.name}: {exc}", pytrace=False)
            pytest.skip(f"{claim.id} does not apply to {tested.name}: {exc}")
        outcome, live = judgement.verdict.outcome, judgement.verdict.live
        png = (  # nothing measured in this run (a part judged from the study alone): the study's per-seed values
            cached_figure_png(model_store.settings.cache_dir, claim, tested.name, judgement.used)
            if judgement.used
            else study_figure_png(outcome)
        )
        attach(outcome, png, raw_measurements(judgement.used), live)
        allure_title(claim, tested.name, outcome.verdict, outcome.scope)
        if record:
            props.append(("claim_record", judgement_record(outcome, live)))
        return outcome

    return check


@pytest.fixture
def assert_claim(check_claim, model_store, request: pytest.FixtureRequest):
    """``assert_claim(claim, model_under_test) -> ClaimOutcome``: :func:`check_claim`, then what the claim suite
    asserts (:meth:`~model_props.verdicts.outcome.ClaimOutcome.assert_expected`): a reference's parts equal its
    expectation snapshot, a model of yours is supported (``--claims-inconclusive`` says what an inconclusive claim
    does to it). A test that found its claim inconclusive is reported as INCONCLUSIVE, not as passed; where the
    claim gates a release on this candidate, it fails instead, even on a reference whose snapshot expects it."""
    from .hooks import INCONCLUSIVE

    def check(claim, tested):
        outcome = check_claim(claim, tested)
        gates = _gates(request, tested.name)
        if outcome.assert_expected("fail" if gates else model_store.settings.inconclusive) == "inconclusive":
            why = "\n".join(p.describe() for p in outcome.parts if p.verdict == "inconclusive")
            if gates:  # a reference judged against its snapshot returns the inconclusive verdict it expects
                pytest.fail(f"{claim.id} gates the release but is inconclusive on {tested.name}:\n{why}", pytrace=False)
            request.node.user_properties += [INCONCLUSIVE, ("inconclusive_parts", why)]
        return outcome

    return check


def _gates(request: pytest.FixtureRequest, model: str) -> bool:
    """Whether this test is a gating claim's on the release gate's candidate: its claim must be judged supported
    there, neither skipped nor inconclusive (``--claims-inconclusive report`` notwithstanding)."""
    gate = state.gate(request.config)
    return (
        bool(gate.claims)
        and request.node.get_closest_marker("gate") is not None
        and model in state.settings(request.config).models
    )


@pytest.fixture
def gate_check(model_store, request: pytest.FixtureRequest):
    """``gate_check(statistic) -> GateOutcome``: the candidate against the gate's baseline on one statistic."""
    from ..gate import GATE_STATISTICS, check_tolerance
    from ..store.pairs import sample_size

    gate = state.gate(request.config)

    def check(statistic: str):
        with state.user_errors():
            candidate_name = model_store.models_under_test()[0]
            candidate = model_store.get(candidate_name)
            if gate.baseline is None:  # never: read_gate requires a baseline with tolerances
                raise ConfigError('[tool.model_props.gate]: tolerances compare with a baseline; give baseline = "path"')
            baseline = model_store.baseline(candidate_name, gate.baseline)
            kind = GATE_STATISTICS[statistic].report
            outcome = check_tolerance(
                statistic,
                gate.tolerances[statistic],
                lambda n: (model_store.report_for(candidate, kind, n), model_store.report_for(baseline, kind, n)),
                candidate=candidate_name,
                baseline=str(gate.baseline.name),
                size=sample_size(model_store, kind, candidate),
                seed=model_store.settings.seed,
                n_boot=model_store.profile.measurement.n_boot,
            )
        request.node.user_properties.append(
            ("gate_record", {"statistic": statistic, "passed": outcome.passed, "message": outcome.message})
        )
        return outcome

    return check


@pytest.fixture
def reproduction(model_store, model_name: str):
    """This machine's live weights of reference ``model_name``'s family (the recipes this session trains live)
    against the profile's seed study, one-sided where a committed verdict would move
    (:func:`~model_props.session.reproduction.reproduction`); skips for a model the study does not cover."""
    from ..session.reproduction import reproduction as reproduce
    from ..session.routes import route_of

    if model_name not in model_store.profile.references or model_store.study is None:
        pytest.skip(f"{model_name}: only the profile's references have a seed study to reproduce")
    with state.user_errors():
        if route_of(model_store, model_store.get(model_name)) != "study":
            pytest.skip(f"{model_name} is not judged from the seed study in this session (a --checkpoint, or "
                        "--claims-scope checkpoint), so there is no study to reproduce")  # fmt: skip
        return reproduce(model_store, model_name)
