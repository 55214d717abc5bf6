"""Bootstrap intervals and verdicts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from model_props.claims.stats import (
    Estimate,
    bootstrap,
    bootstrap_two_sample,
    decide,
    samples_to_settle,
    standardized_effect,
)


def mean_of(x):
    return lambda idx: float(x[idx].mean())


@pytest.mark.parametrize(
    ("low", "high", "direction", "verdict"),
    [
        (0.1, 0.3, "greater", "supported"),
        (-0.3, -0.1, "greater", "contradicted"),
        (-0.1, 0.1, "greater", "inconclusive"),
        (-0.3, -0.1, "less", "supported"),
        (0.1, 0.3, "less", "contradicted"),
        (-0.1, 0.1, "less", "inconclusive"),
    ],
)
def test_decide(low, high, direction, verdict):
    assert decide(Estimate((low + high) / 2, low, high, 0.95, 10), direction, 0.0) == verdict


def test_bootstrap_is_reproducible_and_seeded():
    x = np.random.default_rng(1).normal(size=200)
    a, b = bootstrap(200, mean_of(x), seed=3), bootstrap(200, mean_of(x), seed=3)
    assert a == b
    assert bootstrap(200, mean_of(x), seed=4) != a
    assert a.low < a.value < a.high and a.value == pytest.approx(x.mean())


def test_bootstrap_interval_matches_the_normal_approximation():
    x = np.random.default_rng(0).normal(1.0, 2.0, size=2000)
    est = bootstrap(len(x), mean_of(x), seed=0)
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
    assert (est.high - est.low) / 2 == pytest.approx(half, rel=0.1)


def test_bootstrap_coverage_is_near_nominal():
    """Over 200 samples of a known mean, the 95 % interval covers it about 95 % of the time."""
    rng = np.random.default_rng(0)
    covered = 0
    for i in range(200):
        x = rng.exponential(1.0, size=100)
        e = bootstrap(100, mean_of(x), seed=i, n_boot=400)
        covered += e.low <= 1.0 <= e.high
    assert 0.88 <= covered / 200 <= 0.99


def test_two_sample_detects_a_shift():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.5, 1, 300), rng.normal(0.0, 1, 200)
    est = bootstrap_two_sample(300, 200, lambda i, j: a[i].mean() - b[j].mean(), seed=0)
    assert decide(est, "greater", 0.0) == "supported"


def test_standardized_effect_recovers_cohens_d_of_a_mean():
    x = np.random.default_rng(0).normal(0.5, 2.0, size=1000)
    est = bootstrap(len(x), mean_of(x), seed=0)
    direct = x.mean() / x.std(ddof=1)  # Cohen's d against 0
    assert standardized_effect(est, 0.0) == pytest.approx(direct, rel=0.1)
    assert standardized_effect(est, 0.5) == pytest.approx((x.mean() - 0.5) / x.std(ddof=1), abs=0.05)


@given(st.floats(0.01, 1.0), st.floats(0.01, 1.0), st.integers(10, 1000))
def test_samples_to_settle_shrinks_the_interval_enough(gap, half, n):
    est = Estimate(gap, gap - half, gap + half, 0.95, n)
    needed = samples_to_settle(est, 0.0)
    assert needed is not None and needed > n
    # with that many samples the half-width (~ 1/sqrt(n)) no longer reaches the threshold
    assert half * np.sqrt(n / needed) <= gap * (1 + 1e-9)


def test_samples_to_settle_on_the_threshold_is_none():
    assert samples_to_settle(Estimate(0.0, -1.0, 1.0, 0.95, 10), 0.0) is None
