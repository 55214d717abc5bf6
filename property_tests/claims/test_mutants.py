"""Every controlled claim part can fail: on a mutant where the part is false by construction it is contradicted,
while the unmutated model, measured the same way, is not (positive controls, ``model_props.claims.controls``).

A mutant stands in for one model the part reads: the model under test itself, or a model the part names
(``subject``/``versus``, e.g. the small-data ViT). It is a copy of that model's live weights at the checkpoint the
part reads, altered so that the finding is reversed (``model_props.mutation.mutants``), and it is judged about those
weights (checkpoint scope). Its base is judged the same way: the unmutated live weights at checkpoint scope, on the
same measurement sample, so that the control compares like with like. A control whose base is already contradicted
would prove nothing, and the test says so. A control is kept only where its base's estimate goes the part's way on
every seed of the committed seed study (``BASE_AGAINST``, derived from the study; checked here against the study as
the verdicts layer reads it). Parts without a control are listed as uncontrolled, with the reason, in the reports and
the README; nothing here passes them.
"""

import pytest

from model_props.claims import get_claim, list_claims
from model_props.claims.controls import BASE_AGAINST, BELOW_CHANCE, CONTROLS, DESIGNED, STUDY, UNCONTROLLED
from model_props.config.settings import Settings
from model_props.mutation.mutants import ANATOMY_MUTANTS, INPUT_MUTANTS, LOSS_MUTANTS, MUTANTS, make_mutant
from model_props.plugin import state
from model_props.session.live import needs_switch, not_live_claim, unmeasured_reports
from model_props.verdicts.stats import Estimate, decide
from model_props.verdicts.study import load_study


def not_trained_here(settings: Settings, key: tuple[str, str]) -> list[str]:
    """What the control ``key`` reads that the session does not train or measure: the model its mutant is made from,
    what any part of its claim reads on its base (:func:`~model_props.session.live.not_live_claim`: the base is judged
    on every part), and the reports of its claim that the run measures on no live weights
    (:func:`~model_props.session.live.unmeasured_reports`)."""
    control, claim = CONTROLS[key], get_claim(key[0])
    replaced = [] if settings.trains_live(control.replaced) else [control.replaced]
    missing = [*replaced, *not_live_claim(settings, claim, control.model), *unmeasured_reports(settings, claim.parts)]
    return list(dict.fromkeys(missing))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per control; one that reads a model the session does not train is skipped, naming the switch."""
    if "key" not in metafunc.fixturenames:
        return
    settings = state.settings(metafunc.config)
    params = []
    for key in sorted(CONTROLS):
        missing = not_trained_here(settings, key)
        marks = [pytest.mark.skip(reason=needs_switch("the control", missing))] if missing else []
        params.append(pytest.param(key, id=f"{key[0]}-{key[1]}", marks=marks))
    metafunc.parametrize("key", params)


def test_every_part_is_controlled_or_listed_as_uncontrolled():
    parts = {(c.id, p.name) for c in list_claims() for p in c.parts}
    assert set(CONTROLS) | set(UNCONTROLLED) == parts
    assert not set(CONTROLS) & set(UNCONTROLLED)
    assert {c.mutation for c in CONTROLS.values()} <= {*MUTANTS, *ANATOMY_MUTANTS, *LOSS_MUTANTS, *INPUT_MUTANTS}


def _seeds_against(key: tuple[str, str], model: str) -> tuple[int, ...]:
    """The smoke study's seeds on which the part's per-seed estimate for reference ``model``, read through the
    verdicts layer (``SeedStudy.values``, paired by seed index), would be contradicted by an interval of zero width
    at it (:func:`~model_props.verdicts.stats.decide`), or is undefined. Read even where the judge skips the part
    (a model it reads below twice chance on a seed): the live weights may be above it, and the control runs there."""
    study = load_study("smoke")
    assert study is not None and STUDY == "smoke-seeds.json"
    claim = get_claim(key[0])
    part = {p.name: p for p in claim.parts}[key[1]]
    subject = study.values(claim, part, part.subject or model, study.seeds, model=model)
    versus = study.values(claim, part, part.versus, study.seeds, model=model) if part.versus else [0.0] * len(subject)
    against = []
    for seed, a, b in zip(study.seeds, subject, versus):
        if a is None or b is None or a != a or b != b:
            against.append(seed)
        elif decide(Estimate(a - b, a - b, a - b, 0.95, 1), part.direction, part.threshold) == "contradicted":
            against.append(seed)
    return tuple(against)


def test_the_bases_that_go_against_their_part_are_derived_from_the_study():
    """The uncontrolled list follows the committed study: per designed control, the seeds where the base's estimate
    goes against the part, computed here through the verdicts layer, are exactly ``BASE_AGAINST``'s."""
    derived = {key: seeds for key, c in DESIGNED.items() if (seeds := _seeds_against(key, c.model))}
    assert derived == BASE_AGAINST
    assert set(CONTROLS) == set(DESIGNED) - set(derived)


@pytest.mark.parametrize("listed", [("raghu2021.skip-dominates", "cls-high-lower"),
                                 ("naseer2021.occlusion-robust", "relative-drop-vs-resnet")])  # fmt: skip
def test_a_part_listed_as_already_contradicted_goes_against_its_part_on_every_study_seed(listed):
    assert "already contradicted" in UNCONTROLLED[listed]
    study = load_study("smoke")
    assert study is not None and _seeds_against(listed, "vit") == study.seeds


def test_a_part_listed_as_never_measured_reads_a_model_below_twice_chance_on_a_study_seed():
    """The study's judge skips each part listed with :data:`BELOW_CHANCE` for that reason (a listed reason that the
    study no longer bears out would hide a part that needs a control)."""
    study = load_study("smoke")
    assert study is not None
    listed = [key for key, why in UNCONTROLLED.items() if why.startswith(BELOW_CHANCE)]
    assert listed
    for claim_id, name in listed:
        claim = get_claim(claim_id)
        (part,) = [p for p in claim.parts if p.name == name]
        assert claim.models and study.below_chance(part, claim.models[0]) is not None, (claim_id, name)


def test_fewer_than_half_of_the_controls_roll_the_classes():
    """A mutant that breaks the mechanism a part measures says more than one that breaks the whole classifier."""
    rolled = [key for key, c in CONTROLS.items() if c.mutation == "rolled-classes"]
    assert len(rolled) < len(CONTROLS) / 2, f"{len(rolled)} of {len(CONTROLS)} controls roll the classes"


def test_part_is_contradicted_on_its_mutant_not_on_its_base(key, model_store, check_claim):
    claim_id, part = key
    model, replaced, checkpoint, mutation = CONTROLS[key]
    claim = get_claim(claim_id)
    try:
        base = check_claim(claim, model_store.get(model), record=False, scope="checkpoint")
        mutant = make_mutant(model_store.get(replaced, checkpoint), mutation)
        if replaced == model and checkpoint == "final" and claim.models is None:  # the mutant is the model under test
            outcome = check_claim(claim, mutant, record=False)
        else:  # the mutant stands in for the model the claim reads under that name (a claim of named references too)
            outcome = check_claim(claim, model_store.get(model), record=False, substitutes={replaced: mutant})
    except pytest.skip.Exception as exc:  # a control that skips could never fail
        pytest.fail(f"the claim was not evaluated on the mutant or its base: {exc}")
    same = {p.part.name: p for p in base.parts}[part]
    assert same.verdict not in ("contradicted", "skipped"), (
        f"the unmutated {model}, measured like the mutant (checkpoint scope, the live weights, the same sample), "
        f"already decides the part, so the control proves nothing: {same.describe()}"
    )
    assert {p.part.name: p.verdict for p in outcome.parts}[part] == "contradicted", outcome.message()
