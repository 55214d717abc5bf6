"""Statistics read from unit reports: the mean change a set of units makes to a per-image measure (Fourier
high-frequency amplitude, feature-map variance), over the units whose maps are large enough to measure.

These are part of what a seed study's per-seed estimates were computed by: its fingerprint hashes this module
and the claim's catalogue module (:func:`~.expectations.claim_fingerprint`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from ..anatomy import Unit
from ..errors import NotApplicable
from ..measurements.units import UnitReport
from .base import Statistic

__all__ = ["unit_columns", "measured_units", "mean_effect", "unchanged"]


def unit_columns(report: UnitReport, select: Callable[[Unit], bool]) -> list[int]:
    return [i for i, u in enumerate(report.units) if i > 0 and select(u)]


def measured_units(values: np.ndarray) -> np.ndarray:
    """(N, U) values of a unit report -> (U,) bool: the unit's map was large enough to measure (not all NaN)."""
    return ~np.isnan(values).all(axis=0)


def unchanged(what: str) -> str:
    """What a constant mean change over units means: the units leave their input as it is."""
    return (
        f"every one of its {what} leaves the feature map exactly as it was on every image (its residual branch "
        "outputs zero: e.g. zero-initialised normalisation weights in the branch, as before training)"
    )


def mean_effect(field_name: Literal["high_freq", "variance"], select: Callable[[Unit], bool], what: str) -> Statistic:
    """Mean over the selected units (``what`` names them) and the resampled images of value(after unit) -
    value(before unit), over the units whose maps are large enough to measure (before and after): the mean over
    the resampled images of each image's mean change over those units (every image has the same units), one value
    per row of the index matrix. A model with no such unit raises :class:`NotApplicable`: the part is skipped with
    that reason."""

    def stat(report: UnitReport, idx: np.ndarray) -> np.ndarray:
        cols = unit_columns(report, select)
        if not cols:
            raise NotApplicable(f"the model has no {what}")
        values = getattr(report, field_name)
        ok = measured_units(values)
        measured = [c for c in cols if ok[c] and ok[c - 1]]
        if not measured:
            measure = (
                "high-frequency amplitude (maps under 4x4)" if field_name == "high_freq" else "variance (1x1 maps)"
            )
            raise NotApplicable(f"the maps of its {what} are too small to measure their {measure}")
        per_image = (values[:, measured] - values[:, [c - 1 for c in measured]]).mean(axis=1)
        return per_image[idx].mean(axis=-1)

    return stat
