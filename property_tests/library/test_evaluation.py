"""Claim evaluation at both scopes: paired comparisons where models share samples, Holm across parts, undefined
statistics, and the test outcomes an expectation allows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from model_props.anatomy import Anatomy, Tap, Unit
from model_props.claims.base import Claim, Part
from model_props.claims.evaluation import Measured, evaluate_architecture, evaluate_checkpoint
from model_props.claims.outcome import ClaimContradicted, ExpectationMoved
from model_props.claims.park2022 import PAPER
from model_props.errors import ModelPropsError

ANATOMY = Anatomy("toy", (Unit(0, "embed", "embed", 0, 0.0, Tap("net.x")),), frozenset())


@dataclass
class Scores:
    """A report of one number per image."""

    values: np.ndarray

    def size(self, sampling: str) -> int:
        return len(self.values)


def mean(report: Scores, idx: np.ndarray) -> float:
    return float(np.mean(report.values[idx]))


def claim(*parts: Part, defining: tuple[str, ...] = ()) -> Claim:
    return Claim("toy.claim", 99, PAPER, "s", "statement", "units", "evidence", "fit", parts, lambda a: None,
                 defining=defining)  # fmt: skip


def part(name: str = "p", direction: str = "greater", **kw) -> Part:
    return Part(name, "mean score", mean, direction, report="fit", **kw)  # type: ignore[arg-type]


RNG = np.random.default_rng(0)
SHARED = RNG.normal(0.0, 1.0, 500)  # per-image difficulty both models share


def reports(subject: np.ndarray, versus: np.ndarray, same_samples: bool):
    def get(name, kind, checkpoint):
        values = subject if name is None else versus
        key = "test" if same_samples or name is None else "other"
        return Measured(Scores(values), {"images": key})

    return get


def test_a_comparison_on_shared_samples_is_paired():
    """A small shift hidden under the variance both models share: paired it is detected, unpaired it is not."""
    a, b = SHARED + 0.05 + RNG.normal(0, 0.05, 500), SHARED + RNG.normal(0, 0.05, 500)
    c = claim(part(versus="b"))
    paired = evaluate_checkpoint(c, "a", ANATOMY, reports(a, b, True), n_boot=500)
    unpaired = evaluate_checkpoint(c, "a", ANATOMY, reports(a, b, False), n_boot=500)
    assert paired.parts[0].paired is True and paired.verdict == "supported"
    assert unpaired.parts[0].paired is False and unpaired.verdict == "inconclusive"
    assert "paired images" in paired.message() and "checkpoint" in paired.scope


def test_holm_keeps_a_single_marginal_contradiction_from_deciding_the_claim():
    """Each of three parts barely contradicted on its own (p ~ 0.02): after Holm's correction none is."""
    per_seed = {"p1": [-0.105, -0.1, -0.095], "p2": [-0.105, -0.1, -0.095], "p3": [0.05, 0.1, 0.15]}
    c = claim(part("p1"), part("p2"), part("p3"))
    outcome = evaluate_architecture(c, "m", ANATOMY, lambda p, name: per_seed[p.name], seeds=(0, 1, 2))
    assert [p.verdict for p in outcome.parts][:2] == ["contradicted", "contradicted"]  # strong: survive Holm
    weak = {"p1": [-0.3, -0.1, -0.05], "p2": [-0.3, -0.1, -0.05], "p3": [-0.3, -0.1, -0.05]}
    outcome = evaluate_architecture(c, "m", ANATOMY, lambda p, name: weak[p.name], seeds=(0, 1, 2))
    single = evaluate_architecture(claim(part("p1")), "m", ANATOMY, lambda p, name: weak["p1"], seeds=(0, 1, 2))
    if single.verdict == "contradicted":  # contradicted alone at 2.5 %, but not at 2.5 % / 3
        assert outcome.verdict == "inconclusive" and "before Holm's correction" in outcome.parts[0].note


def test_architecture_comparisons_are_welch_over_independent_seeds():
    c = claim(part(versus="ref"))
    values = {None: [0.5, 0.55, 0.6, 0.52], "ref": [0.1, 0.12, 0.09]}
    outcome = evaluate_architecture(c, "m", ANATOMY, lambda p, name: values[name], seeds=(0, 1, 2, 3))
    e = outcome.parts[0].estimate
    assert outcome.verdict == "supported" and e.method == "Welch t over seeds" and (e.n, e.n_versus) == (4, 3)
    assert outcome.parts[0].seeds == {"m": values[None], "ref": values["ref"]}
    assert "about the architecture (its recipe over 4 training seeds" in outcome.message()


def test_too_few_seeds_or_undefined_seeds_skip_the_part_with_the_reason():
    c = claim(part(undefined="no negative eigenvalue"))
    two = evaluate_architecture(c, "m", ANATOMY, lambda p, name: [0.1, 0.2], seeds=(0, 1))
    assert two.parts[0].verdict == "skipped" and "at least 3 seeds" in two.parts[0].reason
    nan = evaluate_architecture(c, "m", ANATOMY, lambda p, name: [0.1, None, float("nan"), 0.3], seeds=(0, 1, 2, 3))
    assert nan.parts[0].verdict == "skipped" and "2 of 4 seeds of m" in nan.parts[0].reason
    with pytest.raises(ModelPropsError, match="undefined"):  # a NaN the part does not allow is an error
        evaluate_architecture(claim(part()), "m", ANATOMY, lambda p, name: [0.1, None, 0.3, 0.2], seeds=(0, 1, 2, 3))


def test_a_nan_at_checkpoint_scope_is_an_error_unless_the_part_allows_it():
    nan = np.full(10, np.nan)
    allowed = evaluate_checkpoint(claim(part(undefined="nothing to average")), "m", ANATOMY, reports(nan, nan, True))
    assert allowed.parts[0].verdict == "skipped" and "nothing to average" in allowed.parts[0].reason
    with pytest.raises(ModelPropsError, match="undefined"):
        evaluate_checkpoint(claim(part()), "m", ANATOMY, reports(nan, nan, True))


def test_a_skipped_defining_part_makes_the_claim_not_applicable():
    c = claim(part("defining", applies=lambda a: "toy has no msa units"), part("other"), defining=("defining",))
    outcome = evaluate_architecture(c, "m", ANATOMY, lambda p, name: [0.1, 0.2, 0.3], seeds=(0, 1, 2))
    assert outcome.skip_reason == "its defining part 'defining' does not apply: toy has no msa units"


@pytest.mark.parametrize(
    ("expected", "values", "raises"),
    [
        (None, [0.1, 0.12, 0.11], None),  # no study: supported passes
        (None, [-0.1, -0.12, -0.11], ClaimContradicted),
        (None, [-0.1, 0.12, 0.01], AssertionError),  # inconclusive fails
        ({"p": "supported"}, [0.1, 0.12, 0.11], None),
        ({"p": "supported"}, [-0.1, 0.12, 0.01], ExpectationMoved),  # the expectation no longer holds
        ({"p": "inconclusive"}, [-0.1, 0.12, 0.01], None),  # passes, reported inconclusive
        ({"p": "inconclusive"}, [0.1, 0.12, 0.11], ExpectationMoved),  # its interval now excludes the threshold
        ({"p": "contradicted"}, [-0.1, -0.12, -0.11], ClaimContradicted),  # a known failure: xfail(raises=...)
        ({"p": "contradicted"}, [0.1, 0.12, 0.11], ExpectationMoved),  # fixed: fails under a ClaimContradicted xfail
    ],
)
def test_the_outcome_a_test_asserts(expected, values, raises):
    import dataclasses

    outcome = evaluate_architecture(claim(part()), "m", ANATOMY, lambda p, name: values, seeds=(0, 1, 2))
    outcome = dataclasses.replace(outcome, expected=expected)
    if raises is None:
        outcome.assert_expected()
    else:
        with pytest.raises(raises) as info:
            outcome.assert_expected()
        assert info.type is raises  # both are AssertionErrors; neither is the other
