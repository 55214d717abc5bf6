"""Measurements: pure functions on tensors, plus small accumulators (design Sec. 6)."""
from .attention import attention_distance, patch_distances
from .calibration import expected_calibration_error
from .fit import FitReport, fit_report
from .cka import MinibatchCKA, cka_from_hsic, gram, hsic_matrix
from .fourier import delta_log_amplitude, high_frequency
from .skip import skip_norm_ratio
from .spectrum import SpectrumReport, TrainingLoss, hessian_spectrum
from .units import UnitReport, measure_units
from .variance import feature_variance

__all__ = [
    "attention_distance", "patch_distances", "MinibatchCKA", "cka_from_hsic", "gram", "hsic_matrix",
    "delta_log_amplitude", "high_frequency", "skip_norm_ratio", "UnitReport", "measure_units", "feature_variance",
    "expected_calibration_error", "FitReport", "fit_report", "SpectrumReport", "TrainingLoss", "hessian_spectrum",
]
