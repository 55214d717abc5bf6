"""Does an interval cover what it claims to? Simulated seed studies of the two-stage design, with known variances.

A study trains two recipes, A and B, with seeds 1..k. What a training seed gives both recipes of its index (the data
order) moves each per-seed estimate by ``common`` (sd ``tau``), and each recipe's own seed-to-seed spread by sd
``tau`` again. Each seed index draws its own measurement sample of ``n`` images, shared by both recipes: the
sample's mean image effect (per-image sd ``image``) moves both estimates alike, and each recipe's own per-image
noise (sd ``model``) moves it alone. Both architectures' means are 0, so their difference is 0.

:func:`coverage` counts how often each interval contains what it is about:

- ``architecture``: the t interval over A's k per-seed estimates (each seed its own sample): A's mean;
- ``paired``: the t interval over the per-seed differences A - B (paired by seed index): the difference;
- ``welch``: Welch's interval of A - B, as if the two recipes shared nothing: valid but wider here (``width``: the
  paired interval's mean width over Welch's);
- ``shared_sample``: the t interval over A's seeds when every seed is measured on one and the same sample (the
  design this replaces): an interval about that sample, which undercovers A's mean;
- ``one_seed``: the interval over one seed's images (checkpoint scope, the normal approximation a percentile
  bootstrap of a mean converges to): about those weights, not the architecture.

``test_stats.py`` asserts the first two within 2 points of 95 % and the last two below it;
``benchmarks/coverage.py`` records them for the README.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.stats as sps

__all__ = ["Study", "simulate", "architecture_intervals", "coverage", "TAU", "IMAGE", "MODEL", "N"]

# A seed's spread about as large as its sample's standard error, as in the smoke study's unit and fit statistics.
TAU, IMAGE, MODEL, N = 0.02, 0.5, 0.3, 1024


class Study(NamedTuple):
    a: np.ndarray  # (reps, k) recipe A's per-seed estimates
    b: np.ndarray  # (reps, k) recipe B's, on the same seed indices and samples
    first: np.ndarray  # (reps, n) the samples of A's first seed


def simulate(k: int, reps: int, *, tau: float = TAU, image: float = IMAGE, model: float = MODEL, n: int = N,
             shared_sample: bool = False, seed: int = 0) -> Study:  # fmt: skip
    """``reps`` studies of ``k`` seed indices (module docstring); ``shared_sample``: one sample for every seed."""
    rng = np.random.default_rng(seed)
    common = rng.normal(0.0, tau, size=(reps, k))
    own_a, own_b = rng.normal(0.0, tau, size=(2, reps, k))
    sample = rng.normal(0.0, image / np.sqrt(n), size=(reps, 1 if shared_sample else k))
    noise_a, noise_b = rng.normal(0.0, model / np.sqrt(n), size=(2, reps, k))
    a = common + own_a + sample + noise_a
    b = common + own_b + sample + noise_b
    first = (common + own_a)[:, :1] + rng.normal(0.0, np.hypot(image, model), size=(reps, n))
    a[:, 0] = first.mean(axis=1)  # the first seed's estimate is the mean of its samples
    return Study(a, b, first)


def architecture_intervals(estimates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Each row's t interval over its per-seed estimates, all rows in one call of scipy's vectorised
    ``ttest_1samp``: the interval :func:`~model_props.verdicts.stats.t_interval` computes one study at a time
    (``test_stats.py`` checks that they agree), ~100x faster over thousands of simulated studies."""
    ci = sps.ttest_1samp(estimates, 0.0, axis=1).confidence_interval(confidence_level=level)
    return ci.low, ci.high


def _covers(low: np.ndarray, high: np.ndarray) -> float:
    return float(np.mean((low <= 0.0) & (0.0 <= high)))


def coverage(k: int, reps: int = 4000, **kw) -> dict[str, float]:
    """Share of simulated studies whose intervals cover what they are about (module docstring)."""
    study = simulate(k, reps, **kw)
    paired = architecture_intervals(study.a - study.b)
    welch = sps.ttest_ind(study.a, study.b, axis=1, equal_var=False).confidence_interval(confidence_level=0.95)
    shared = simulate(k, reps, shared_sample=True, **kw)
    half = 1.96 * study.first.std(axis=1, ddof=1) / np.sqrt(study.first.shape[1])
    return {
        "k": k,
        "architecture": _covers(*architecture_intervals(study.a)),
        "paired": _covers(*paired),
        "welch": _covers(welch.low, welch.high),
        "width": float(np.mean(paired[1] - paired[0]) / np.mean(welch.high - welch.low)),
        "shared_sample": _covers(*architecture_intervals(shared.a)),
        "one_seed": float(np.mean(np.abs(study.first.mean(axis=1)) <= half)),
    }
