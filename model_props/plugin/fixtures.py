"""The plugin's fixtures: the session's model store and models, ``check_claim`` (evaluate, label, attach,
record) and ``gate_check`` (one release-gate tolerance)."""

from __future__ import annotations

import pytest

from ..errors import ConfigError
from . import state

__all__ = ["model_store", "dataset", "model_under_test", "reference_model", "check_claim", "gate_check"]


@pytest.fixture(scope="session")
def model_store(request: pytest.FixtureRequest):
    """The session's :class:`~model_props.session.store.ModelStore`: ``model_store.get(name)`` builds once."""
    with state.user_errors():
        return state.store(request.config)


@pytest.fixture(scope="session")
def dataset(model_store):
    """The profile's dataset (dead leaves for ``smoke``)."""
    with state.user_errors():
        return model_store.dataset()


@pytest.fixture(scope="session")
def model_under_test(model_store, model_name: str):
    """The trained model named by ``model_name``: a :class:`~model_props.session.store.ModelUnderTest`."""
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
    """``check_claim(claim, model_under_test, record=True, substitutes=None) -> ClaimOutcome``.

    Skips (with the reason) when the claim does not apply; otherwise reads every report its parts name (of
    the model under test and of the models it compares with, at their checkpoints; once a session and from
    the measurement cache), bootstraps every part, labels the Allure result, attaches the figure and the
    numbers, and records the verdict for ``reports/summary.json`` (unless ``record=False``, e.g. mutants).
    ``substitutes`` maps a model name to a model to read instead (a mutant standing in for a variant).
    """
    from ..claims.evaluation import evaluate_claim
    from ..reporting.allure import allure_labels, allure_title, attach
    from ..reporting.figures import figure_png, raw_measurements
    from ..reporting.summary import model_facts, outcome_record, skip_record

    xfail = request.node.get_closest_marker("xfail")
    expected = None if xfail is None else "known-failure" if xfail.kwargs.get("strict") else "seed-dependent"

    def check(claim, tested, *, record: bool = True, substitutes=None):
        allure_labels(claim, tested.name, expected)
        props = request.node.user_properties
        if record:
            props.append(("model_info", {tested.name: model_facts(tested)}))
        with state.user_errors():
            reason = claim.skip_reason(tested.anatomy, tested.name, model_store.profile.recipes)
        if reason is not None:
            allure_title(claim, tested.name, "not applicable")
            if record:
                props.append(("claim_record", skip_record(claim, tested.name, reason)))
            pytest.skip(f"{claim.id} does not apply to {tested.name}: {reason}")
        used: dict[tuple[str, str, str], object] = {}

        def reports(name, kind, checkpoint):
            name = name or tested.name
            target = (substitutes or {}).get(name)
            if (
                target is None
                and name == tested.name
                and (tested.checkpoint_name == checkpoint or tested.recipe is None or tested.mutation is not None)
            ):
                target = tested  # the model under test itself (a mutant or a user's weights: the only state there is)
            report = (
                model_store.report_for(target, kind)
                if target is not None
                else model_store.report(name, kind, checkpoint)
            )
            used[(name, kind, checkpoint)] = report
            return report

        size = model_store.dataset(tested.dataset).image_size
        reference_size = model_store.dataset().image_size

        def incomparable(part) -> str | None:
            if size != reference_size and (part.versus or part.subject):
                return (
                    f"it compares with the profile's {reference_size}-px models; {tested.name} is measured at {size} px "
                    "(--claims-img-size)"
                )
            return None

        with state.user_errors():
            outcome = evaluate_claim(
                claim,
                tested.name,
                tested.anatomy,
                reports,
                seed=model_store.settings.seed,
                n_boot=model_store.profile.measurement.n_boot,
                skip_part=incomparable,
            )
        if all(p.verdict == "skipped" for p in outcome.parts):  # nothing this model can be measured on
            reason = "; ".join(f"[{p.part.name}] {p.reason}" for p in outcome.parts)
            allure_title(claim, tested.name, "not applicable")
            if record:
                props.append(("claim_record", skip_record(claim, tested.name, reason)))
            pytest.skip(f"{claim.id} does not apply to {tested.name}: {reason}")
        attach(outcome, figure_png(claim, tested.name, used), raw_measurements(used))
        allure_title(claim, tested.name, outcome.verdict)
        if record:
            props.append(("claim_record", {**outcome_record(outcome), "expected": expected or "pass"}))
        return outcome

    return check


@pytest.fixture
def gate_check(model_store, request: pytest.FixtureRequest):
    """``gate_check(statistic) -> GateOutcome``: the candidate against the gate's baseline on one statistic."""
    from ..gate import GATE_STATISTICS, check_tolerance

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
                model_store.report_for(candidate, kind),
                model_store.report_for(baseline, kind),
                candidate=candidate_name,
                baseline=str(gate.baseline.name),
                seed=model_store.settings.seed,
                n_boot=model_store.profile.measurement.n_boot,
            )
        request.node.user_properties.append(
            ("gate_record", {"statistic": statistic, "passed": outcome.passed, "message": outcome.message})
        )
        return outcome

    return check
