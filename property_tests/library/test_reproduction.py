"""The live checks, judged with made-up live values against the committed study and snapshot (no trained model):
made-up reversals of a supported claim fail, or say how many seeds would see them; the live estimates that lie
further in their part's contradicted direction pass (among them the AMD EPYC run's PiT, the regression this rule was
rebuilt for); a comparison is checked on its paired difference; a contradicted equivalence only towards equivalence;
the shifted-study case is reported with its power; an undefined or impossible live value fails with a line that
names it; the omnibus counts only the verdicts' threatening sides and catches a broad shift there; every statistic
of the catalogue has a declared scale and every check can fail; the leave-one-seed-out calibration is counted; a
claim test's live check fails with its own exception; and discrepancy records are keyed by the draw and refused
when they name another model's statistic, a second record of one reference, or lack extra seeds' p-value below
their check's own level."""

from __future__ import annotations

import dataclasses
import json
import math
import statistics as st

import numpy as np
import pytest
from scipy import stats

from model_props.claims import get_claim, list_claims
from model_props.errors import StudyError
from model_props.training.profiles import load_profile
from model_props.verdicts.family import RELEASE_KINDS, default_family, default_kind, family, shifted_live, single_check
from model_props.verdicts.omnibus import DUPLICATE_R, Omnibus
from model_props.verdicts.outcome import ClaimContradicted, LiveCheckFailed
from model_props.verdicts.reproduction import (
    KnownDiscrepancy,
    Reproduction,
    ReproductionDiscrepancy,
    claim_checks,
    held_out,
    load_discrepancies,
    reproduce,
)
from model_props.verdicts.scales import SCALES, Scale, scale_of
from model_props.verdicts.snapshot import load_snapshot
from model_props.verdicts.study import SeedStudy, load_study

PROFILE = load_profile("smoke")
STUDY, SNAPSHOT = load_study("smoke"), load_snapshot("smoke")
LIVE = PROFILE.references.__contains__  # the default run trains the references live
BLOCKS = "park2022.multistage-block-cka [block-structure]"
LATER_HALF = "park2022.msa-lowpass [msa-later-half]"


def _family(reference: str, study: SeedStudy | None = None):
    return family(study or STUDY, PROFILE, reference, SNAPSHOT, LIVE)


def _at_mean(statistics) -> dict[str, float]:
    """Each statistic at its study mean on its own scale."""
    return {s.label: s.scale.back(st.mean(s.scale.to(v) for v in d)) if (d := [v for v in s.values if v is not None])
            else math.nan for s in statistics}  # fmt: skip


def _label(statistics, key: str, model: str) -> str:
    (label,) = [s.label for s in statistics if key in s.label and f" of {model}" in s.label]
    return label


def _statistic(statistics, key: str):
    (found,) = [s for s in statistics if key in s.label]
    return found


def _versus_mean(s) -> float:
    """The study mean of a paired statistic's ``versus`` model, on its own scale."""
    claim, part = s.label.split(" [")[0], s.label.split("[")[1].split("]")[0]
    values = [v for v in STUDY.claims[claim]["parts"][part]["values"][s.versus] if v is not None]
    return s.link.back(st.mean(s.link.to(v) for v in values))


def _reproduce(reference: str, key: str, value: float, study: SeedStudy | None = None, versus: float | None = None):
    """The reproduction with statistic ``key`` of ``reference`` at ``value`` (a paired statistic: its subject's value,
    against ``versus``, or the versus model's study mean) and every other at its study mean."""
    statistics = _family(reference, study)
    s = _statistic(statistics, key)
    if s.versus is not None:
        value = s.paired(value, _versus_mean(s) if versus is None else versus)
    live = _at_mean(statistics) | {s.label: value}
    return reproduce(reference, statistics, live, PROFILE), statistics, live


PGD_2 = "park2022.msa-adversarial-robust [pgd-2/255]"
PGD_4 = "park2022.msa-adversarial-robust [pgd-4/255]"
ERROR = "park2022.underfit-not-overfit [error-vs-resnet]"
NEAR_FAR = "dosovitskiy2021.position-embedding-2d [near-minus-far]"


@pytest.mark.parametrize("reference, key, value, versus", [("pit", BLOCKS, -0.3, None), ("swin", BLOCKS, -0.3, None),
                                                           ("vit", LATER_HALF, 0.5, None), ("pit", ERROR, 0.02, 0.05),
                                                           ("vit", PGD_4, 0.9, 0.9), ("pit", BLOCKS, -0.05, None)])  # fmt: skip
def test_a_made_up_reversal_of_a_supported_claim_fails_and_prints_its_acceptance_region(reference, key, value, versus):
    """Among them the issue's reversals that five seeds could not see and the study's seeds do: PiT's test error 0.02
    against ResNet's 0.05 (checked on the paired difference the verdict reads, a logit difference) and PiT's block
    structure at -0.05; and ViT's PGD drop at 4/255 equal to ResNet's, which ten seeds could not see and fifteen do."""
    found, statistics, live = _reproduce(reference, key, value, versus=versus)
    (failed,) = found.failed
    assert failed.what == _label(statistics, key, reference) and len(failed.sides) == 1
    low, _ = failed.region()
    assert ("below the acceptance region [" if value < low else "above the acceptance region (-inf") in found.message()
    claim, part = key.split(" [")[0], key.split("[")[1].rstrip("]")
    (own,) = [c for c in claim_checks(claim, reference, {reference: statistics}, live, PROFILE) if part in c.what]
    assert own.failed  # the claim test's own check (Holm's first step) fails as well


@pytest.mark.parametrize("reference, key, value, versus, says", [
    ("vit", NEAR_FAR, -0.03, None, "a reversal to 0 would pass it even with 100 seeds"),
    ("vit", PGD_2, 0.95, 0.70, "a reversal to 0 would pass it even with 100 seeds"),
])  # fmt: skip
def test_a_reversal_the_study_is_too_small_to_see_says_how_many_seeds_would(reference, key, value, versus, says):
    """Made-up reversals that the study's seeds cannot see at the check's level pass, and the claim test's message
    says how many seeds would see a reversal to the part's null: the issue's ViT near-minus-far at -0.03 (ten seeds
    saw it; fifteen, with seeds 13 and 14 at 0.012 and 0.029, spread it: p = 0.00025 above its level), and ViT's drop
    at 2/255 of 0.95 against ResNet's 0.70, which no study size sees (ResNet's seed 7 drop of 0.984 spreads the paired
    logit differences)."""
    found, statistics, live = _reproduce(reference, key, value, versus=versus)
    assert not found.failed, found.message()
    claim, part = key.split(" [")[0], key.split("[")[1].rstrip("]")
    (own,) = [c for c in claim_checks(claim, reference, {reference: statistics}, live, PROFILE) if part in c.what]
    seeds = own.seeds_to_see_reversal()
    assert not own.failed and (seeds is None or seeds > len(STUDY.seeds))
    assert says in own.describe()


@pytest.mark.parametrize("reference, key, value", [("pit", "attention-distance-grows [lower-heads-mixed]", -0.2265),
                                                   ("pit", "attention-distance-grows [lower-heads-mixed]", -0.5717),
                                                   ("alternet", "msa-flattens-loss [ape-vs-resnet]", 2135.0)])  # fmt: skip
def test_a_live_estimate_further_in_the_contradicted_direction_passes(reference, key, value):
    """-0.5717: PiT's live value on a fresh AMD EPYC machine, about 41 predictive SDs from the study (built on an
    Intel Xeon) on the side of the part's own verdict (contradicted); it failed the two-sided omnibus there. Every
    other statistic at its study mean, the run passes: the omnibus counts only the verdicts' threatening sides."""
    found, statistics, _ = _reproduce(reference, key, value)
    assert not found.failed, found.message()
    (check,) = [c for c in found.checks if c.what == _label(statistics, key, reference)]
    assert check.p > 0.5 and len(check.sides) == 1  # tested towards the claim only
    (omnibus,) = [c for c in found.checks if isinstance(c, Omnibus)]
    assert omnibus.value < 0.1  # its deviation counts nothing


def test_the_shifted_study_case_is_judged_at_the_power_it_has():
    """ViT's msa-later-half values shifted 0.3 further in the claim's direction (claim 8 is ``less``), the live seed
    at the old mean: the check tests the side against the claim, and fails exactly where the shift exceeds the
    acceptance region's bound (at k = 10 seeds, ViT's check has 80 % power at a shift of 0.35, about 7 study SDs:
    docs/verdicts.md)."""
    entry = STUDY.claims["park2022.msa-lowpass"]
    values = entry["parts"]["msa-later-half"]["values"]
    old = st.mean(values["vit"])
    shifted_values = {**values, "vit": [v - 0.3 for v in values["vit"]]}
    parts = {**entry["parts"], "msa-later-half": {**entry["parts"]["msa-later-half"], "values": shifted_values}}
    shifted = dataclasses.replace(STUDY, claims={**STUDY.claims, "park2022.msa-lowpass": {**entry, "parts": parts}})
    found, statistics, _ = _reproduce("vit", LATER_HALF, old, shifted)
    (check,) = [c for c in found.checks if c.what == _label(statistics, LATER_HALF, "vit")]
    low, high = check.region()
    assert check.sides == {"upper"} and low == -math.inf
    assert check.failed == (old > high)
    beyond, _, _ = _reproduce("vit", LATER_HALF, high + 0.01, shifted)
    assert check.what in {c.what for c in beyond.failed}


def test_the_seeds_that_would_detect_a_shift_have_that_power_by_simulation():
    """The seeds at which ViT's msa-later-half check detects the shifted-study case's 0.3 with 80 % power (the study's
    spread held), against a Monte Carlo of the check itself: n study seeds and a live seed 0.3 away on the side it
    tests, normal with the study's SD, rejected at its level; at n the power is at least 80 %, at n - 1 below
    (within 3 Monte Carlo errors)."""
    found, statistics, _ = _reproduce("vit", LATER_HALF, st.mean(STUDY.claims["park2022.msa-lowpass"]["parts"]
                                                                   ["msa-later-half"]["values"]["vit"]))  # fmt: skip
    (check,) = [c for c in found.checks if c.what == _label(statistics, LATER_HALF, "vit")]
    k, n = check.predictive.df + 1, check.seeds_to_detect(0.3)
    assert n is not None and (n <= k) == (check.detectable() <= 0.3), (n, k, check.detectable())
    sigma, draws = check.predictive.spread / math.sqrt(1 + 1 / k), 40_000
    rng = np.random.default_rng(0)

    def power(seeds: int) -> float:
        study = rng.normal(0.0, sigma, (draws, seeds))
        live = rng.normal(0.3 if check.sides == {"upper"} else -0.3, sigma, draws)
        z = (live - study.mean(axis=1)) / (study.std(axis=1, ddof=1) * math.sqrt(1 + 1 / seeds))
        p = stats.t.sf(z, seeds - 1) if check.sides == {"upper"} else stats.t.cdf(z, seeds - 1)
        return float(np.mean(p <= check.level))

    error = 3 * math.sqrt(0.8 * 0.2 / draws)
    assert power(n) >= 0.8 - error and power(n - 1) < 0.8 + error, (n, power(n), power(n - 1))


def test_an_undefined_or_impossible_live_value_fails_with_a_line_that_names_it():
    statistics = _family("pit")
    live = _at_mean(statistics)
    label = _label(statistics, BLOCKS, "pit")
    undefined = reproduce("pit", statistics, {**live, label: math.nan}, PROFILE)
    assert [c.what for c in undefined.failed] == [label] and "UNDEFINED" in undefined.message()
    impossible = reproduce("pit", statistics, {**live, label: -1.5}, PROFILE)  # a difference of CKAs is in [-1, 1]
    (failed,) = impossible.failed
    assert failed.what == label and f"{label}: -1.5 is not a possible value of it" in impossible.message()
    (logged,) = [s for s in _family("vit") if "[ece-augmentation]" not in s.label and s.scale.link == "log"][:1]
    zero = reproduce("vit", _family("vit"), {**_at_mean(_family("vit")), logged.label: 0.0}, PROFILE)
    assert [c.what for c in zero.failed] == [logged.label] and "0 is not a possible value of it" in zero.message()


@pytest.mark.parametrize("reference", PROFILE.references)
def test_a_broad_shift_towards_the_verdicts_fails_the_omnibus_alone(reference):
    """Three predictive SDs on every statistic, each on its check's side: no single check sees it (they need 5-6
    study SDs at fifteen seeds), the omnibus does. One predictive SD, the issue's target, is seen only part of the
    time (the simulated power, ``benchmarks/live_power.py``, and the least shift each omnibus fails at, 1.05-1.5, are
    generated into docs/verdicts.md)."""
    statistics = _family(reference)
    found = reproduce(reference, statistics, shifted_live(statistics, 3.0), PROFILE)
    assert [type(c) for c in found.failed] == [Omnibus], found.message()


def _omnibus_on_the_safe_side(reference: str, statistics: list | None = None) -> tuple[Reproduction, Omnibus]:
    """The reproduction of ``statistics`` (default: the reference's family) with every one-sided statistic 5
    predictive SDs on its safe side, and its omnibus."""
    statistics = _family(reference) if statistics is None else statistics
    safe = {
        **_at_mean(statistics),
        **shifted_live([s for s in statistics if len(s.sides) == 1 and single_check(s, 0.0)], -5.0),
    }
    found = reproduce(reference, statistics, safe, PROFILE)
    (omnibus,) = [c for c in found.checks if isinstance(c, Omnibus)]
    return found, omnibus


@pytest.mark.parametrize("reference", PROFILE.references)
def test_the_omnibus_counts_only_the_threatening_side(reference):
    found, omnibus = _omnibus_on_the_safe_side(reference)
    assert not found.failed and omnibus.value < 0.1, found.message()


@pytest.mark.parametrize("reference", PROFILE.references)
def test_the_omnibus_enters_only_the_statistics_with_a_threatening_side(reference):
    """A two-sided check's statistic (an inconclusive part's, an equivalence's) has no side that a broad shift
    towards the verdicts moves it to: with every other statistic at its study mean, 3 predictive SDs on each of them,
    either way, leave the omnibus's sum where it is (their own checks see them), and it enters exactly the one-sided
    statistics of the verdicts' parts, less near duplicates."""
    statistics = _family(reference)
    at_mean = _at_mean(statistics)
    two_sided = [(s, c) for s in statistics if len(s.sides) == 2 and (c := single_check(s, 0.0))]
    assert two_sided, f"{reference}'s family has a two-sided check"
    sums = []
    for sign in (0, 1, -1):
        moved = {s.label: s.scale.back(c.predictive.mean + 3 * sign * c.predictive.spread) for s, c in two_sided}
        live = {**at_mean, **moved}
        (omnibus,) = [c for c in reproduce(reference, statistics, live, PROFILE).checks if isinstance(c, Omnibus)]
        sums.append(omnibus.value)
    assert sums[1] == pytest.approx(sums[0], abs=1e-9) and sums[2] == pytest.approx(sums[0], abs=1e-9), sums
    one_sided = [s for s in statistics if len(s.sides) == 1 and s.part is not None]
    assert len(omnibus.scores) + omnibus.merged == len(one_sided), omnibus.describe()


def test_the_omnibus_enters_each_near_duplicate_once():
    """A statistic that correlates with one of the family at DUPLICATE_R <= r < 1 over the study's seeds (numpy's
    correlation, on their scales) is one statistic to the omnibus: a copy of swin's PGD drop at 1/255 with each seed's
    value moved by 0.1 % adds one to the near duplicates entered once. (The study's own near pair, that drop and the
    drop at the smallest eps of Bai et al., correlated at 0.997 over ten seeds and at 0.978 over fifteen.)"""
    statistics = _family("swin")
    pgd = _statistic(statistics, "[pgd-1/255]")
    copy = dataclasses.replace(pgd, label=f"{pgd.label} (a near copy)",
                               values=tuple(v * (1 + 0.001 * (-1) ** i) for i, v in enumerate(pgd.values)))  # fmt: skip
    assert DUPLICATE_R <= np.corrcoef([[s.scale.to(v) for v in s.values] for s in (pgd, copy)])[0, 1] < 1
    _, before = _omnibus_on_the_safe_side("swin", statistics)
    _, after = _omnibus_on_the_safe_side("swin", [*statistics, copy])
    assert after.merged == before.merged + 1 and f"{after.merged} near duplicates entered once" in after.describe()


def test_the_best_tests_noncentrality_is_the_closed_form_of_two_correlated_statistics():
    """√(dᵀR⁻¹d) for two statistics of correlation ρ: √(2/(1+ρ)) shifted the same way, √(2/(1-ρ)) opposite ways
    (dᵀR⁻¹d = (d₁² - 2ρd₁d₂ + d₂²)/(1-ρ²)); none where R is singular."""
    rho = 0.6

    def bound(directions: tuple[float, ...], r: float) -> float | None:
        corr = np.array([[1.0, r], [r, 1.0]])
        return Omnibus("two", (0.0, 0.0), np.zeros(1), directions, corr).best_noncentrality()

    assert bound((1.0, 1.0), rho) == pytest.approx(math.sqrt(2 / (1 + rho)), rel=1e-12)
    assert bound((1.0, -1.0), rho) == pytest.approx(math.sqrt(2 / (1 - rho)), rel=1e-12)
    assert bound((1.0, 1.0), 1.0) is None


@pytest.mark.parametrize("reference", PROFILE.references)
def test_the_omnibus_bound_is_computed_on_the_statistics_it_enters(reference):
    """The omnibus's correlation and directions are those of the statistics it enters: its bound equals √(dᵀR⁻¹d)
    computed independently with numpy's correlation over the study's seeds of the one-sided statistics read by a
    part, near duplicates (|r| >= DUPLICATE_R) once."""
    statistics = _family(reference)
    _, omnibus = _omnibus_on_the_safe_side(reference, statistics)
    entered = [s for s in statistics if s.part is not None and len(s.sides) == 1 and None not in s.values]
    r = np.atleast_2d(np.corrcoef([[s.scale.to(v) for v in s.values] for s in entered]))
    kept: list[int] = []
    for j in range(len(entered)):
        if all(abs(r[i, j]) < DUPLICATE_R for i in kept):
            kept.append(j)
    d = np.array([-1.0 if entered[j].sides == {"lower"} else 1.0 for j in kept])
    r = r[np.ix_(kept, kept)]
    assert omnibus.directions == tuple(d)
    expected = None if np.linalg.matrix_rank(r) < len(kept) else math.sqrt(d @ np.linalg.solve(r, d))
    assert (omnibus.best_noncentrality() is None) == (expected is None), (omnibus.best_noncentrality(), expected)
    if expected is not None:
        assert omnibus.best_noncentrality() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("reference", PROFILE.references)
def test_the_default_runs_family_is_the_full_one_without_the_release_kinds(reference):
    full, default = _family(reference), default_family(STUDY, PROFILE, reference, SNAPSHOT)
    kept = [s for s in full if s.part is None or s.part.report not in RELEASE_KINDS]
    assert [s.label for s in default] == [s.label for s in kept] and len(kept) < len(full)
    assert {"spectrum", "attack", "attack_test"} == RELEASE_KINDS


def test_every_statistic_of_the_catalogue_has_a_declared_scale_and_every_check_can_fail():
    """A part's scale is declared by its statistic's name before any value is seen; every study value lies inside it,
    and every single check's acceptance region ends inside the statistic's range on a side it tests, or the check
    says it cannot fail and how many seeds would make it testable (a fraction with a study seed at a bound, such as
    ResNet's NEP of 0, is on the raw scale, where the region can cover the whole range), and never fails."""
    names = {p.statistic_name for c in list_claims() for p in c.parts}
    undeclared = [n for n in names if not any(n.startswith(start) for start, _ in SCALES)]
    assert not undeclared
    assert {scale_of(p).link for p in get_claim("park2022.msa-flattens-loss").parts} == {"log"}
    assert scale_of(get_claim("park2022.multistage-block-cka").parts[0]) == Scale("logit", -1.0, 1.0)
    for reference in PROFILE.references:
        statistics = family(STUDY, PROFILE, reference)
        assert all(s.link.inside(v) for s in statistics for v in s.values if v is not None and s.versus is None)
        for c in reproduce(reference, statistics, _at_mean(statistics), PROFILE).checks:
            if isinstance(c, Omnibus) or c.testable:
                continue  # an untestable check: a fraction with a study seed at its bound, on the raw scale
            assert c.scale.link == "raw" and math.isfinite(c.scale.low) and not c.failed
            assert f"UNTESTABLE with {len(STUDY.seeds)} seeds, its acceptance region" in c.describe()
            assert f"(testable with {c.seeds_to_test()} seeds)" in c.describe()


@pytest.mark.parametrize("kinds", [default_kind, None], ids=["default-run", "full-live-run"])
def test_leave_one_seed_out_calibration_on_the_committed_study(kinds):
    """Each reference's study seeds in turn predicted from the others, on the default run's family and on the
    full live run's (every report kind): at the nominal 1 % per reference about 1 % of the n trials (references x
    seeds) fail; more than the 99.8th percentile of Bin(n, 1 %) would mean the rule is too tight."""
    trials = [held_out(STUDY, PROFILE, name, i, SNAPSHOT, LIVE, kinds) for name in PROFILE.references
              for i in range(len(STUDY.seeds))]  # fmt: skip
    failed = [t.message() for t in trials if t.failed]
    print(f"{len(failed)} of {len(trials)} leave-one-seed-out trials fail")
    assert len(trials) == len(PROFILE.references) * len(STUDY.seeds)
    assert len(failed) <= stats.binom.ppf(0.998, len(trials), 0.01), "\n\n".join(failed)


def test_a_failed_live_check_fails_the_claim_test_with_its_own_exception():
    claim = get_claim("park2022.multistage-block-cka")
    statistics = _family("pit")
    live = _at_mean(statistics) | {_label(statistics, BLOCKS, "pit"): -0.3}
    checks = claim_checks(claim.id, "pit", {"pit": statistics}, live, PROFILE)
    outcome = dataclasses.replace(STUDY.evaluate(claim, "pit", expected=SNAPSHOT.expected(claim, "pit")),
                                  live_checks=checks)  # fmt: skip
    with pytest.raises(LiveCheckFailed, match="below the acceptance region") as raised:
        outcome.assert_expected()
    assert not isinstance(raised.value, ClaimContradicted) and "live check:" in outcome.message()


def _record(model: str, statistic: str, **extra) -> dict:
    return {"model": model, "recipe": "abc/def", "seed": 100, "statistic": statistic, "machines": ["2-core EPYC"],
            "still_needed": True, "why": "an outlier draw", "extra_seeds_p": 1e-5, **extra}  # fmt: skip


def test_known_discrepancies_are_keyed_by_the_draw_and_refused_when_they_name_another_model(tmp_path):
    statistics = _family("pit")
    label = _label(statistics, BLOCKS, "pit")
    live = _at_mean(statistics) | {label: -0.3}
    known = KnownDiscrepancy("pit", "abc/def", 100, label, ("2-core EPYC",), True, "an outlier draw", 1e-5)
    with pytest.raises(ReproductionDiscrepancy, match="an outlier draw"):
        reproduce("pit", statistics, live, PROFILE, [known]).assert_reproduced()
    with pytest.raises(AssertionError, match="no longer fails") as back:
        reproduce("pit", statistics, _at_mean(statistics), PROFILE, [known]).assert_reproduced()
    assert not isinstance(back.value, ReproductionDiscrepancy)
    for other in ("vit", "swin"):
        with pytest.raises(StudyError, match=f"a statistic of pit, not of {other}$"):  # one line
            reproduce("pit", statistics, live, PROFILE, [dataclasses.replace(known, model=other)])
    path = tmp_path / "smoke-discrepancies.json"
    path.write_text(json.dumps({"schema_version": 3, "known": [_record("pit", label)]}))
    assert load_discrepancies(PROFILE, tmp_path) == (known,)
    path.write_text(json.dumps({"schema_version": 3, "known": [_record("vit", "a"), _record("vit_gap", "b")]}))
    with pytest.raises(StudyError, match="more than one known discrepancy of reference vit"):
        load_discrepancies(PROFILE, tmp_path)
    path.write_text(json.dumps({"schema_version": 2, "known": []}))
    with pytest.raises(StudyError, match="schema version 2"):
        load_discrepancies(PROFILE, tmp_path)


@pytest.mark.parametrize("extra", [{"extra_seeds_p": None}, {"extra_seeds_p": 0.2}, {"extra_seeds_p": 0.01}])
def test_a_known_discrepancy_needs_extra_seeds_that_confirm_the_draw_is_off(tmp_path, extra):
    """Without the live value's p-value from the study and extra seeds together, or with one at or above the
    reference's level (5 % / 5 references), the study's prediction may be too narrow: the record is refused."""
    record = _record("pit", "s") | extra
    if extra["extra_seeds_p"] is None:
        del record["extra_seeds_p"]
    (tmp_path / "smoke-discrepancies.json").write_text(json.dumps({"schema_version": 3, "known": [record]}))
    with pytest.raises(StudyError, match="needs extra_seeds_p below 1.00%"):
        load_discrepancies(PROFILE, tmp_path)
    assert load_discrepancies(PROFILE) == ()  # the committed file: no record is needed under the one-sided rule


def test_a_known_discrepancy_needs_extra_seeds_below_its_own_checks_level():
    """Below the reference's 1 % but not below its check's own level (Holm's first step, about 0.0002): refused."""
    statistics = _family("pit")
    label = _label(statistics, BLOCKS, "pit")
    known = KnownDiscrepancy("pit", "abc/def", 100, label, ("2-core EPYC",), True, "an outlier draw", 0.001)
    with pytest.raises(StudyError, match="needs extra_seeds_p below its check's own level 0.0002"):
        reproduce("pit", statistics, _at_mean(statistics) | {label: -0.3}, PROFILE, [known])
