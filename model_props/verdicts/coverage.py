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

:func:`two_stage_coverage` simulates the design a user's seeds now run (``model_props.store.samples``): replica i
is the draw (training seed i, sample i): its estimate is a seed effect (sd ``tau * sqrt(2)``), the mean image effect of its
own sample and its own per-image noise, all three non-normal: resampled from the committed smoke study's pooled
standardised residuals (:func:`study_residuals`). It counts ``replicas``: the t
interval over the k replicas covers the architecture's mean; ``welch``: Welch's interval against a reference's
study seeds (as many as the study has, drawn alike) covers the difference 0; ``shared_sample``: the t interval when
every replica is measured on one sample (the design it replaces), under the same residuals.
``test_user_seeds.py`` asserts the first two within 2 points of 95 %.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import scipy.stats as sps

from .study import load_study

__all__ = ["Study", "simulate", "architecture_intervals", "coverage", "study_residuals", "two_stage_coverage", "TAU",
           "IMAGE", "MODEL", "N"]  # fmt: skip

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


@functools.lru_cache(maxsize=1)
def study_residuals(profile: str = "smoke") -> tuple[np.ndarray, int]:
    """The profile's committed seed study's residuals, pooled, and its number of seeds. Per claim part and reference,
    the per-seed values are centred on their mean and divided by their sd (ddof 1), times sqrt(k / (k - 1)) so that
    the pool has variance 1 (the squares of k such residuals sum to k - 1); a part with an undefined or constant
    value (a count, a degenerate statistic) is left out."""
    study = load_study(profile)
    assert study is not None, f"profile {profile!r} has no seed study"
    pooled = []
    for claim in study.claims.values():
        for part in claim["parts"].values():
            for values in part.get("values", {}).values():
                v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
                if np.all(np.isfinite(v)) and (sd := v.std(ddof=1)) > 0:
                    pooled.append((v - v.mean()) / sd * np.sqrt(len(v) / (len(v) - 1)))
    return np.concatenate(pooled), len(study.seeds)


def _two_stage(rng: np.random.Generator, residuals: np.ndarray, shape: tuple[int, int], *, tau: float, image: float,
               model: float, n: int, shared_sample: bool = False) -> np.ndarray:  # fmt: skip
    """Per-seed estimates, (reps, k), of an architecture of mean 0 (module docstring), each effect resampled from
    ``residuals``: the seed's (sd ``tau * sqrt(2)``: what a seed index gives and the recipe's own, which a user's
    training seed and a study seed do not share), its sample's mean image effect (sd ``image / sqrt(n)``; one for every
    seed of a row with ``shared_sample``) and the model's own noise on its sample (sd ``model / sqrt(n)``)."""
    reps, k = shape
    seed_effect = np.hypot(tau, tau) * rng.choice(residuals, size=shape)
    sample_effect = image / np.sqrt(n) * rng.choice(residuals, size=(reps, 1 if shared_sample else k))
    return seed_effect + sample_effect + model / np.sqrt(n) * rng.choice(residuals, size=shape)


def two_stage_coverage(k: int, reps: int = 4000, *, tau: float = TAU, image: float = IMAGE, model: float = MODEL,
                       n: int = N, seed: int = 0) -> dict[str, float]:  # fmt: skip
    """Share of simulated users' studies (k replicas, module docstring) whose intervals cover what they are about:
    ``replicas``, ``welch`` (against the study's seeds) and ``shared_sample``."""
    residuals, study_seeds = study_residuals()
    rng = np.random.default_rng(seed)
    draw = functools.partial(_two_stage, rng, residuals, tau=tau, image=image, model=model, n=n)
    user = draw((reps, k))
    reference = draw((reps, study_seeds))
    shared = draw((reps, k), shared_sample=True)
    welch = sps.ttest_ind(user, reference, axis=1, equal_var=False).confidence_interval(confidence_level=0.95)
    return {
        "k": k,
        "replicas": _covers(*architecture_intervals(user)),
        "welch": _covers(welch.low, welch.high),
        "shared_sample": _covers(*architecture_intervals(shared)),
        "study_seeds": study_seeds,
        "residuals": len(residuals),
    }
