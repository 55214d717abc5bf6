"""Calibration: expected calibration error with equal-width confidence bins (Park & Kim 2022, App.; docs/papers.md#accuracy-and-calibration; docs/measurements.md#definitions).

With the max-softmax confidence c_i and correctness a_i of N predictions, bin b holding the predictions with
c in [b/B, (b+1)/B) (the last bin closed at 1):

    ECE = sum_b (n_b / N) |acc_b - conf_b|

where acc_b and conf_b are the bin's mean correctness and mean confidence. B = 10 as in the paper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["N_BINS", "expected_calibration_error"]

N_BINS = 10


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS) -> Any:
    """ECE of predictions with max-softmax ``confidence`` in [0, 1] and boolean ``correct``: sum over bins of
    |sum of (correct - confidence) in the bin| / n. For (rows, n) arrays (e.g. bootstrap resamples), one ECE per
    row.

    >>> float(expected_calibration_error(np.full(10, 0.9), np.arange(10) < 6))  # 90 % sure, 60 % right
    0.3
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if confidence.shape != correct.shape or confidence.ndim not in (1, 2) or not confidence.shape[-1]:
        raise ValueError(
            f"confidence {confidence.shape} and correct {correct.shape} must be equal, non-empty 1-D or 2-D arrays"
        )
    rows = confidence.reshape(-1, confidence.shape[-1])
    bins = np.minimum((rows * n_bins).astype(np.int64), n_bins - 1) + n_bins * np.arange(len(rows))[:, None]
    gap = np.bincount(bins.ravel(), (correct.reshape(rows.shape) - rows).ravel(), minlength=n_bins * len(rows))
    ece = np.abs(gap.reshape(len(rows), n_bins)).sum(axis=1) / rows.shape[1]  # sum of (a_i - c_i) per bin
    return ece[0] if confidence.ndim == 1 else ece
