"""ECE with 10 equal-width bins, against synthetic predictors whose calibration is known."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_props.measurements.functional import expected_calibration_error


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_calibrated_predictor_has_ece_near_zero(seed):
    """Correct with probability equal to its confidence: ECE is sampling noise, O(1/sqrt(N per bin))."""
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.1, 1.0, 200_000)
    correct = rng.random(confidence.shape) < confidence
    assert expected_calibration_error(confidence, correct) < 0.01


@settings(max_examples=30, deadline=None)
@given(confidence=st.floats(0.05, 0.999), accuracy=st.floats(0.0, 1.0))
def test_a_constant_confidence_predictor_has_the_analytic_ece(confidence, accuracy):
    n = 1000
    correct = np.arange(n) < round(accuracy * n)
    ece = expected_calibration_error(np.full(n, confidence), correct)
    assert ece == pytest.approx(abs(round(accuracy * n) / n - confidence), abs=1e-12)


def test_an_overconfident_predictor_over_bins():
    """Confidence uniform on [0.5, 1), right with probability confidence - 0.2: ECE = 0.2 in every bin."""
    rng = np.random.default_rng(0)
    confidence = rng.uniform(0.5, 1.0, 400_000)
    correct = rng.random(confidence.shape) < confidence - 0.2
    assert expected_calibration_error(confidence, correct) == pytest.approx(0.2, abs=0.005)


def test_bins_are_equal_width_and_the_last_is_closed():
    """Predictions at 0.95 and 1.0 share the last bin; at 0.05 and 0.95 they do not."""
    assert expected_calibration_error(np.array([0.95, 1.0]), np.array([True, False])) == pytest.approx(abs(0.5 - 0.975))
    assert expected_calibration_error(np.array([0.05, 0.95]), np.array([False, True])) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="must be equal, non-empty 1-D or 2-D arrays"):
        expected_calibration_error(np.array([0.5]), np.array([True, False]))
