"""Does an interval cover what it claims to? Simulated studies with known within- and between-seed variance.

A recipe's seeds differ (between-seed standard deviation ``tau``) and each seed's estimate is a mean over ``n``
samples (within-seed standard deviation ``sigma``). The architecture's mean is 0. :func:`coverage` counts how
often two intervals contain it: the t interval over ``k`` per-seed estimates (architecture scope) and the
interval over one seed's samples (checkpoint scope, the normal approximation a percentile bootstrap of a mean
converges to). ``test_stats.py`` asserts the first within 2 points of 95 % and the second below it;
``benchmarks/coverage.py`` records both for the README.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as sps

__all__ = ["simulate", "architecture_intervals", "coverage", "TAU", "SIGMA", "N"]

TAU, SIGMA, N = (
    0.05,
    0.5,
    1024,
)  # the seed-to-seed spread is three times one seed's standard error, as in the smoke study


def simulate(k: int, reps: int, *, tau: float = TAU, sigma: float = SIGMA, n: int = N, seed: int = 0):
    """``reps`` studies of ``k`` seeds: per-seed estimates (reps, k) and the first seed's samples (reps, n)."""
    rng = np.random.default_rng(seed)
    seed_means = rng.normal(0.0, tau, size=(reps, k))
    first = seed_means[:, :1] + rng.normal(0.0, sigma, size=(reps, n))
    estimates = seed_means + rng.normal(0.0, sigma / np.sqrt(n), size=(reps, k))
    estimates[:, 0] = first.mean(axis=1)
    return estimates, first


def architecture_intervals(estimates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Each row's t interval over its per-seed estimates, all rows in one call of scipy's vectorised
    ``ttest_1samp``: the interval :func:`~model_props.claims.stats.t_interval` computes one study at a time
    (``test_stats.py`` checks that they agree), ~100x faster over thousands of simulated studies."""
    ci = sps.ttest_1samp(estimates, 0.0, axis=1).confidence_interval(confidence_level=level)
    return ci.low, ci.high


def coverage(k: int, reps: int = 4000, **kw) -> dict[str, float]:
    """Share of simulated studies whose architecture interval (k seeds) and one-seed interval cover the mean."""
    estimates, first = simulate(k, reps, **kw)
    low, high = architecture_intervals(estimates)
    seeds = float(np.mean((low <= 0.0) & (0.0 <= high)))
    half = 1.96 * first.std(axis=1, ddof=1) / np.sqrt(first.shape[1])
    return {"k": k, "architecture": seeds, "one_seed": float(np.mean(np.abs(first.mean(axis=1)) <= half))}
