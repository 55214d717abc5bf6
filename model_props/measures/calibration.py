"""Calibration: expected calibration error with equal-width confidence bins (Park & Kim 2022, App.; PAPER.md
Sec. 3.8; design Sec. 6).

With the max-softmax confidence c_i and correctness a_i of N predictions, bin b holding the predictions with
c in [b/B, (b+1)/B) (the last bin closed at 1):

    ECE = sum_b (n_b / N) |acc_b - conf_b|

where acc_b and conf_b are the bin's mean correctness and mean confidence. B = 10 as in the paper.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_BINS", "expected_calibration_error"]

N_BINS = 10


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS) -> float:
    """ECE of predictions with max-softmax ``confidence`` in [0, 1] and boolean ``correct``.

    >>> float(expected_calibration_error(np.full(10, 0.9), np.arange(10) < 6))  # 90 % sure, 60 % right
    0.3
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if confidence.shape != correct.shape or confidence.ndim != 1 or not len(confidence):
        raise ValueError(
            f"confidence {confidence.shape} and correct {correct.shape} must be equal, non-empty 1-D arrays"
        )
    bins = np.minimum((confidence * n_bins).astype(np.int64), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    gap = np.bincount(bins, correct - confidence, minlength=n_bins)  # sum of (a_i - c_i) per bin
    return float(np.abs(gap).sum() / len(confidence)) if counts.any() else 0.0
