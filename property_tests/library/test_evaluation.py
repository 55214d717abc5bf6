"""The judge, called with hand-made evidence and no store: paired comparisons where models share samples or seed
indices, Holm across parts, undefined statistics, skipped parts, and the test outcomes an expectation allows."""

from __future__ import annotations

import numpy as np
import pytest
from toy_reports import Scores  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.errors import ModelPropsError
from model_props.verdicts import (
    ClaimContradicted,
    ClaimInconclusive,
    Evidence,
    ExpectationMismatch,
    Expected,
    Measured,
    OnReports,
    PerSeed,
    Skipped,
    judge,
)


def mean(report: Scores, idx: np.ndarray) -> np.ndarray:
    return report.values[idx].mean(axis=-1)


def claim(*parts: Part, defining: tuple[str, ...] = ()) -> Claim:
    return Claim("toy.claim", 99, PAPER, "s", "statement", "units", "evidence", "fit", parts, lambda a: None,
                 defining=defining)  # fmt: skip


def part(name: str = "p", direction: str = "greater", **kw) -> Part:
    return Part(name, "mean score", mean, direction, report="fit", **kw)  # type: ignore[arg-type]


def checkpoint(c: Claim, **parts) -> Evidence:
    return Evidence(c, "a", "checkpoint", parts)


def seeds(c: Claim, k: int, expected: Expected | None = None, **parts) -> Evidence:
    return Evidence(c, "m", "architecture", parts, tuple(range(k)), expected)


RNG = np.random.default_rng(0)
SHARED = RNG.normal(0.0, 1.0, 500)  # per-image difficulty both models share


def on(a: np.ndarray, b: np.ndarray, same_samples: bool) -> OnReports:
    return OnReports(Measured("a", Scores(a), "test"), Measured("b", Scores(b), "test" if same_samples else "other"))


def test_a_comparison_on_shared_samples_is_paired():
    """A small shift hidden under the variance both models share: paired it is detected, unpaired it is not."""
    a, b = SHARED + 0.05 + RNG.normal(0, 0.05, 500), SHARED + RNG.normal(0, 0.05, 500)
    c = claim(part(versus="b"))
    paired = judge(checkpoint(c, p=on(a, b, True)), n_boot=500)
    unpaired = judge(checkpoint(c, p=on(a, b, False)), n_boot=500)
    assert paired.parts[0].paired is True and paired.verdict == "supported"
    assert unpaired.parts[0].paired is False and unpaired.verdict == "inconclusive"
    assert "paired images" in paired.message() and "checkpoint" in paired.scope


def test_the_vectorised_bootstrap_equals_the_per_resample_loop():
    """The judge evaluates all resamples in one call over an index matrix; row by row gives the same replicates."""
    from model_props.verdicts.stats import bootstrap

    values = RNG.normal(0.1, 1.0, 300)
    est = bootstrap(300, lambda i: mean(Scores(values), i), seed=3, n_boot=400)
    idx = np.random.default_rng(3).integers(0, 300, (400, 300))
    loop = np.array([float(values[row].mean()) for row in idx])
    assert np.allclose(np.sort(est.replicates), np.sort(loop), atol=1e-12, rtol=0)


def test_holm_keeps_a_single_marginal_contradiction_from_deciding_the_claim():
    """Each of three parts barely contradicted on its own (p = 0.014 < 0.025): after Holm's correction (0.025 / 3) none is."""
    c = claim(part("p1"), part("p2"), part("p3"))

    def evidence(values: dict[str, list[float]], parts=c) -> Evidence:
        return seeds(parts, 3, **{n: PerSeed("m", tuple(v)) for n, v in values.items()})

    strong = {"p1": [-0.105, -0.1, -0.095], "p2": [-0.105, -0.1, -0.095], "p3": [0.05, 0.1, 0.15]}
    assert [p.verdict for p in judge(evidence(strong)).parts][:2] == ["contradicted", "contradicted"]
    weak = [-0.13, -0.1, -0.07]  # t = 5.8 with 2 df: one-sided p = 0.014
    outcome = judge(evidence({"p1": weak, "p2": weak, "p3": weak}))
    single = judge(evidence({"p1": weak}, claim(part("p1"))))
    assert single.verdict == "contradicted"  # contradicted alone at 2.5 %, but not at 2.5 % / 3
    assert outcome.verdict == "inconclusive" and "before Holm's correction" in outcome.parts[0].note


def test_architecture_comparisons_are_paired_by_seed_index_and_welch_only_for_groups_that_share_nothing():
    c = claim(part(versus="ref"))
    subject, versus = (0.50, 0.55, 0.61, 0.52), (0.10, 0.16, 0.20, 0.13)
    paired = judge(seeds(c, 4, p=PerSeed("m", subject, "ref", versus, paired=True))).parts[0]
    assert paired.estimate.method == "paired t over seeds" and paired.estimate.n == 4 and paired.paired is True
    diffs = np.subtract(subject, versus)
    assert paired.estimate.value == pytest.approx(diffs.mean())
    se = diffs.std(ddof=1) / 2
    from scipy import stats

    assert paired.estimate.high - paired.estimate.low == pytest.approx(2 * stats.t.ppf(0.975, 3) * se)
    welch = judge(seeds(c, 4, p=PerSeed("m", subject, "ref", versus[:3], paired=False))).parts[0]
    assert welch.estimate.method == "Welch t over seeds" and (welch.estimate.n, welch.estimate.n_versus) == (4, 3)
    assert welch.seeds == {"m": list(subject), "ref": list(versus[:3])}
    assert (
        "about the architecture (its recipe over 4 training seeds"
        in judge(seeds(c, 4, p=PerSeed("m", subject, "ref", versus))).message()
    )
    assert "over 4 paired seeds" in paired.describe()


def test_too_few_seeds_or_undefined_seeds_skip_the_part_with_the_reason():
    c = claim(part(undefined="no negative eigenvalue"))
    two = judge(seeds(c, 2, p=PerSeed("m", (0.1, 0.2))))
    assert two.parts[0].verdict == "skipped" and "at least 3 seeds" in two.parts[0].reason
    nan = judge(seeds(c, 4, p=PerSeed("m", (0.1, None, float("nan"), 0.3))))
    assert nan.parts[0].verdict == "skipped" and "2 of 4 seeds of m" in nan.parts[0].reason
    with pytest.raises(ModelPropsError, match="undefined"):  # a NaN the part does not allow is an error
        judge(seeds(claim(part()), 4, p=PerSeed("m", (0.1, None, 0.3, 0.2))))
    versus = claim(part(versus="ref", undefined="no negative eigenvalue"))
    unpaired = judge(seeds(versus, 4, p=PerSeed("m", (0.1, 0.2, None, 0.3), "ref", (None, 0.1, 0.2, 0.1))))
    assert "both models has 2" in unpaired.parts[0].reason  # a paired difference needs both sides of a seed


def test_a_nan_at_checkpoint_scope_is_an_error_unless_the_part_allows_it():
    nan = np.full(10, np.nan)
    only = OnReports(Measured("a", Scores(nan), "test"))
    allowed = judge(checkpoint(claim(part(undefined="nothing to average")), p=only))
    assert allowed.parts[0].verdict == "skipped" and "nothing to average" in allowed.parts[0].reason
    with pytest.raises(ModelPropsError, match="undefined"):
        judge(checkpoint(claim(part()), p=only))


def test_skipped_evidence_and_a_skipped_defining_part():
    c = claim(part("defining"), part("other"), defining=("defining",))
    outcome = judge(seeds(c, 3, defining=Skipped("toy has no msa units"), other=PerSeed("m", (0.1, 0.2, 0.3))))
    assert outcome.skip_reason == "its defining part 'defining' does not apply: toy has no msa units"
    nothing = judge(seeds(claim(part()), 3))
    assert nothing.parts[0].verdict == "skipped" and "no evidence" in nothing.parts[0].reason


def test_an_inconclusive_part_states_its_minimum_detectable_effect():
    from scipy import stats

    outcome = judge(seeds(claim(part()), 5, p=PerSeed("m", (-0.1, 0.12, 0.01, 0.05, -0.02))))
    (p,) = outcome.parts
    se = np.std([-0.1, 0.12, 0.01, 0.05, -0.02], ddof=1) / np.sqrt(5)
    assert p.verdict == "inconclusive"
    assert p.minimum_detectable_effect == pytest.approx((stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * se)
    assert "minimum detectable effect" in p.describe() and p.to_json()["minimum_detectable_effect"] > 0


SNAPSHOT = "fixtures/toy-expectations.json"


@pytest.mark.parametrize(
    ("expected", "values", "raises", "found"),
    [
        (None, [0.1, 0.12, 0.11], None, "passed"),  # a model of yours: supported passes
        (None, [-0.1, -0.12, -0.11], ClaimContradicted, None),
        (None, [-0.1, 0.12, 0.01], ClaimInconclusive, None),  # inconclusive fails it unless it is reported
        ({"p": "supported"}, [0.1, 0.12, 0.11], None, "passed"),
        ({"p": "supported"}, [-0.1, 0.12, 0.01], ExpectationMismatch, None),  # the snapshot no longer holds
        ({"p": "inconclusive"}, [-0.1, 0.12, 0.01], None, "inconclusive"),  # its own outcome, never passed
        (
            {"p": "inconclusive"},
            [0.1, 0.12, 0.11],
            ExpectationMismatch,
            None,
        ),  # its interval now excludes the threshold
        ({"p": "contradicted"}, [-0.1, -0.12, -0.11], ClaimContradicted, None),  # a known failure: xfail(raises=...)
        ({"p": "contradicted"}, [0.1, 0.12, 0.11], ExpectationMismatch, None),  # fixed: fails a ClaimContradicted xfail
        ({}, [0.1, 0.12, 0.11], ExpectationMismatch, None),  # a part the snapshot lacks
    ],
)
def test_the_outcome_a_test_asserts(expected, values, raises, found):
    snapshot = None if expected is None else Expected(expected, SNAPSHOT, "model-props expectations --update")
    outcome = judge(seeds(claim(part()), 3, snapshot, p=PerSeed("m", tuple(values))))
    if raises is None:
        assert outcome.assert_expected() == found
    else:
        with pytest.raises(raises) as info:
            outcome.assert_expected()
        assert info.type is raises  # all are AssertionErrors; none is another
        if raises is ExpectationMismatch:
            assert SNAPSHOT in str(info.value) and "model-props expectations --update" in str(info.value)
            assert f"expected {next(iter(expected.values()), 'no entry')}, now" in str(info.value)


def test_an_inconclusive_claim_on_a_model_of_yours_can_be_reported_instead_of_failing():
    outcome = judge(seeds(claim(part()), 3, p=PerSeed("m", (-0.1, 0.12, 0.01))))
    assert outcome.assert_expected("report") == "inconclusive"


def test_a_measurement_that_does_not_vary_is_degenerate_and_says_why():
    """A model whose residual branches output exactly zero: every unit's change is 0 on every image, so every
    resample gives 0. The part says what happened, not that more samples would settle it."""
    zeros = np.zeros(50)
    said = judge(checkpoint(claim(part(degenerate="every unit leaves its input unchanged")),
                            p=OnReports(Measured("a", Scores(zeros), "test"))), n_boot=200)  # fmt: skip
    (p,) = said.parts
    assert p.verdict == "inconclusive" and p.degenerate == "every unit leaves its input unchanged"
    assert "DEGENERATE: every unit leaves its input unchanged" in p.describe() and "would likely" not in p.describe()
    assert p.to_json()["degenerate"] and p.minimum_detectable_effect is None and p.samples_to_settle is None
    generic = judge(seeds(claim(part()), 3, p=PerSeed("m", (0.2, 0.2, 0.2)))).parts[0]
    assert "the statistic is 0.2 on every seed" in generic.degenerate
    varies = judge(seeds(claim(part()), 3, p=PerSeed("m", (0.1, 0.2, 0.3)))).parts[0]
    assert varies.degenerate == ""


def test_a_report_below_a_statistics_minimum_sample_is_skipped_with_the_reason():
    one = OnReports(Measured("a", Scores(np.array([0.3])), "test"))
    (p,) = judge(checkpoint(claim(part()), p=one)).parts
    assert p.verdict == "skipped" and p.reason == "'mean score' needs at least 2 images of a, and its report has 1"
