"""Where a new seed's estimate should fall, given a study's k seeds: the prediction interval and p-value that check
a seed study's held-out seeds (:mod:`.study`) and a live run's own seed (:mod:`.reproduction`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats as sps

from .stats import finite_values

__all__ = ["prediction_interval", "prediction_p"]


def prediction_interval(values: Sequence[float | None], *, level: float = 0.95) -> tuple[float, float]:
    """Where a new seed's estimate should fall: mean +- t_{k-1} s sqrt(1 + 1/k) of the k defined values."""
    x, _ = finite_values(values)
    if len(x) < 2:
        raise ValueError(f"a prediction interval needs at least 2 defined values, got {len(x)}")
    half = float(sps.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / len(x)))
    return float(x.mean() - half), float(x.mean() + half)


def prediction_p(values: Sequence[float | None], new: float) -> float:
    """Two-sided p-value of a new seed's estimate under the predictive t distribution of ``values``."""
    x, _ = finite_values(values)
    scale = float(x.std(ddof=1) * math.sqrt(1 + 1 / len(x)))
    if scale == 0.0:
        return 1.0 if math.isclose(new, float(x.mean()), rel_tol=1e-9, abs_tol=1e-12) else 0.0
    return float(2 * sps.t.sf(abs(new - x.mean()) / scale, len(x) - 1))
