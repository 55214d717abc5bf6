"""Measurements: pure functions on tensors, plus small accumulators (design Sec. 6)."""
from .attention import attention_distance, patch_distances
from .cka import MinibatchCKA, cka_from_hsic, gram, hsic_matrix
from .fourier import delta_log_amplitude, high_frequency
from .skip import skip_norm_ratio
from .units import UnitReport, measure_units
from .variance import feature_variance

__all__ = [
    "attention_distance", "patch_distances", "MinibatchCKA", "cka_from_hsic", "gram", "hsic_matrix",
    "delta_log_amplitude", "high_frequency", "skip_norm_ratio", "UnitReport", "measure_units", "feature_variance",
]
