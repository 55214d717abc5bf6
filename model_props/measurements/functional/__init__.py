"""The functional core of the measurements: pure functions on tensors and arrays, plus small accumulators
(docs/measurements.md#definitions).

Each module mirrors the report module of :mod:`model_props.measurements` it serves, in torchmetrics' manner
(``functional/noise.py`` is the band-limited noise that ``noise.py`` measures accuracy under): ``corruption``,
``cross`` (CKA across two models), ``fit`` (calibration error), ``noise``, ``occlusion``, ``position``, ``probe``
(location probes) and ``spectrum`` (Hessian eigen-solvers and spectrum statistics). The unit-level measures that
``units.py`` computes in one pass have a module each: ``attention`` (distance), ``cka``, ``fourier`` (Δlog
amplitude), ``skip`` (norm ratio) and ``variance``. Each is checked against an independent reference in
``property_tests``. Running a model over a dataset to fill a report is the job of the report modules, not of
this package.

May import: the foundation (:mod:`model_props.errors`) only; no report module (import contracts in pyproject).
"""

from .attention import attention_distance, patch_distances
from .cka import MinibatchCKA, cka_from_hsic, gram, hsic_matrix
from .fit import expected_calibration_error
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
