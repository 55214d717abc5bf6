"""One set of weights against a recipe's committed seeds (``model_props.verdicts.against_seeds``): the judge's
interval is Welch's, checked against scipy's; it decides either way; at the truth its false verdicts stay at the
nominal 2.5 % per side within Monte Carlo error (bound: nominal + 2.576 Monte Carlo SEs, fixed before the first run);
and a recipe with fewer than 3 seeds is skipped with the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from toy_reports import Scores  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.verdicts import AgainstSeeds, Evidence, Measured, judge
from model_props.verdicts.outcome import PartOutcome

NOMINAL = 0.025
TRIALS = 1500
BOUND = NOMINAL + 2.576 * math.sqrt(NOMINAL * (1 - NOMINAL) / TRIALS)


def _mean(report: Scores, idx: np.ndarray) -> np.ndarray:
    return report.values[idx].mean(axis=-1)


def _judged(weights: np.ndarray, seeds, *, weights_first: bool = True, threshold: float = 0.0,
            n_boot: int = 2000) -> PartOutcome:  # fmt: skip
    """The judge's outcome of 'weights - recipe > threshold' (or 'recipe - weights', where not ``weights_first``)."""
    part = Part("diff", "mean difference", _mean, "greater", threshold=threshold, versus="recipe")
    claim = Claim("toy.claim", 99, PAPER, "s", "statement", "units", "evidence", "fit", (part,), lambda a: None)
    found = AgainstSeeds(Measured("weights", Scores(weights), "s"), "recipe", tuple(seeds), weights_first)
    return judge(Evidence(claim, "weights", "checkpoint", {"diff": found}), n_boot=n_boot).parts[0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=20),
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=10),
    st.booleans(),
)
def test_below_30_units_it_is_welchs_interval_between_the_weights_units_and_the_seeds(units, seeds, weights_first):
    """Below 30 units the weights' interval is the jackknife t, whose standard error of a mean is s / sqrt(n) with
    n - 1 degrees of freedom: the comparison is then Welch's two-sample t between the units and the seeds, to 1e-6."""
    x, v = np.asarray(units), np.asarray(seeds)
    if min(np.ptp(x), np.ptp(v)) < 1e-3:
        return  # a (nearly) constant group: scipy's interval loses its precision
    estimate = _judged(x, v, weights_first=weights_first).estimate
    assert estimate is not None and estimate.t is not None
    welch = sps.ttest_ind(x, v, equal_var=False) if weights_first else sps.ttest_ind(v, x, equal_var=False)
    assert estimate.t[2] == pytest.approx(welch.df, rel=1e-6)
    assert estimate.interval == pytest.approx(tuple(welch.confidence_interval(0.95)), rel=1e-6, abs=1e-9)


def test_it_decides_either_way_and_says_what_it_compared():
    rng = np.random.default_rng(0)
    weights, seeds = rng.normal(1.0, 0.1, 200), [0.0, 0.05, -0.05, 0.02, -0.01]
    above = _judged(weights, seeds)
    assert above.verdict == "supported" and above.estimate is not None
    assert above.estimate.method == "Welch t: these weights against the recipe's seeds"
    assert above.seeds == {"recipe": seeds} and above.paired is False and above.estimate.n == 5
    assert "against the mean of recipe's 5 committed seeds (0.002)" in above.describe()
    assert _judged(weights, seeds, weights_first=False).verdict == "contradicted"  # recipe - weights > 0: reversed
    assert _judged(weights, seeds, threshold=1.0).verdict == "inconclusive"


def test_a_recipe_with_fewer_than_three_seeds_is_skipped():
    outcome = _judged(np.arange(40.0), [0.1, 0.2])
    assert outcome.verdict == "skipped"
    assert outcome.reason.endswith("a comparison with a recipe's seeds needs at least 3 with a value; recipe has 2")


def test_at_the_truth_its_false_verdicts_stay_nominal_per_side():
    """The weights: 100 units (a percentile bootstrap's standard error) around mu; the recipe: 5 seeds from
    N(mu, 0.3), so the recipe's mean is mu too and the threshold 0 is the truth; either verdict is false."""
    rng = np.random.default_rng(7)
    verdicts = [_judged(rng.normal(0.0, 1.0, 100), rng.normal(0.0, 0.3, 5), n_boot=400).verdict for _ in range(TRIALS)]
    below, above = verdicts.count("contradicted") / TRIALS, verdicts.count("supported") / TRIALS
    assert below <= BOUND and above <= BOUND, f"false verdicts {below:.4f} below, {above:.4f} above; bound {BOUND:.4f}"
