"""Measures: pure functions on tensors and arrays, plus small accumulators (docs/measurements.md#definitions).

Owns the Fourier Δlog-amplitude, feature-map variance, skip norm ratio, minibatch CKA, attention distance,
calibration error, Hessian eigen-solvers and spectrum statistics, band-limited noise and common
corruptions. Each is checked against an independent reference in ``property_tests``. Running a model over a
dataset to fill a report is the job of :mod:`model_props.measurements`, not of this package.

May import: the foundation (:mod:`model_props.errors`) only.
"""

from .attention import attention_distance, patch_distances
from .calibration import expected_calibration_error
from .cka import MinibatchCKA, cka_from_hsic, gram, hsic_matrix
from .fourier import delta_log_amplitude, high_frequency
from .skip import skip_norm_ratio
from .variance import feature_variance

__all__ = [
    "attention_distance",
    "patch_distances",
    "MinibatchCKA",
    "cka_from_hsic",
    "gram",
    "hsic_matrix",
    "delta_log_amplitude",
    "high_frequency",
    "skip_norm_ratio",
    "feature_variance",
    "expected_calibration_error",
]
