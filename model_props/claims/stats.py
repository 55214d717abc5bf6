"""Bootstrap confidence intervals, decisions and effect sizes (design Sec. 7).

Every claim reduces to a scalar statistic of a sample (images, or mini-batches for CKA) and a rule
``statistic <direction> threshold``. The percentile bootstrap gives a confidence interval; the verdict is

- ``supported``: the interval lies entirely on the claimed side of the threshold;
- ``contradicted``: it lies entirely on the other side;
- ``inconclusive``: it contains the threshold. Then :func:`samples_to_settle` estimates how many samples
  would shrink the interval (half-width ~ 1/sqrt(n)) to exclude the threshold at the current estimate.

All resampling uses ``numpy.random.Generator(seed)``: the same seed gives the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

__all__ = [
    "Direction",
    "Verdict",
    "Estimate",
    "bootstrap",
    "bootstrap_two_sample",
    "decide",
    "samples_to_settle",
    "standardized_effect",
    "N_BOOT",
]

Direction = Literal["greater", "less"]
Verdict = Literal["supported", "contradicted", "inconclusive"]
N_BOOT = 2000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile-bootstrap interval, over ``n`` samples."""

    value: float
    low: float
    high: float
    level: float
    n: int

    @property
    def interval(self) -> tuple[float, float]:
        return (self.low, self.high)


def _interval(boot: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(boot, alpha)), float(np.quantile(boot, 1.0 - alpha))


def bootstrap(
    n: int, statistic: Callable[[np.ndarray], float], *, level: float = 0.95, seed: int = 0, n_boot: int = N_BOOT
) -> Estimate:
    """Percentile bootstrap of ``statistic(indices)`` over ``n`` exchangeable samples.

    ``statistic`` receives an index array into the samples (``arange(n)`` for the point estimate), so
    ratio-of-sums statistics such as minibatch CKA resample whole batches correctly.
    """
    if n < 2:
        raise ValueError(f"bootstrap needs at least 2 samples, got n={n}")
    rng = np.random.default_rng(seed)
    boot = np.array([statistic(rng.integers(0, n, n)) for _ in range(n_boot)])
    low, high = _interval(boot, level)
    return Estimate(float(statistic(np.arange(n))), low, high, level, n)


def bootstrap_two_sample(
    n_a: int,
    n_b: int,
    statistic: Callable[[np.ndarray, np.ndarray], float],
    *,
    level: float = 0.95,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> Estimate:
    """Percentile bootstrap of ``statistic(idx_a, idx_b)`` resampling two independent samples."""
    if min(n_a, n_b) < 2:
        raise ValueError(f"bootstrap needs at least 2 samples per group, got {n_a} and {n_b}")
    rng = np.random.default_rng(seed)
    boot = np.array([statistic(rng.integers(0, n_a, n_a), rng.integers(0, n_b, n_b)) for _ in range(n_boot)])
    low, high = _interval(boot, level)
    return Estimate(float(statistic(np.arange(n_a), np.arange(n_b))), low, high, level, min(n_a, n_b))


def decide(est: Estimate, direction: Direction, threshold: float) -> Verdict:
    """Supported if the interval excludes the threshold on the claimed side; contradicted if on the other."""
    above, below = est.low > threshold, est.high < threshold
    if direction == "greater":
        return "supported" if above else "contradicted" if below else "inconclusive"
    return "supported" if below else "contradicted" if above else "inconclusive"


def samples_to_settle(est: Estimate, threshold: float) -> int | None:
    """Samples needed for the interval to exclude ``threshold`` if the estimate stays where it is.

    The half-width shrinks like 1/sqrt(n): n' = n * (half-width / |estimate - threshold|)^2. None when the
    estimate sits on the threshold (no sample size settles it).
    """
    gap = abs(est.value - threshold)
    if gap == 0.0:
        return None
    half = (est.high - est.low) / 2.0
    return max(est.n + 1, math.ceil(est.n * (half / gap) ** 2))


def standardized_effect(est: Estimate, threshold: float = 0.0) -> float:
    """Cohen's d-style effect size of a mean statistic: (estimate - threshold) / (sample standard deviation).

    The standard deviation is recovered from the bootstrap interval: SE = (high - low) / (2 z_level) and
    SD = SE * sqrt(n). For a plain mean this is Cohen's d against the threshold; for a two-sample difference
    with ``n`` the smaller group it is a conservative d.
    """
    z = NormalDist().inv_cdf(0.5 + est.level / 2.0)
    sd = (est.high - est.low) / (2.0 * z) * math.sqrt(est.n)
    if sd == 0.0:
        return math.copysign(math.inf, est.value - threshold) if est.value != threshold else 0.0
    return (est.value - threshold) / sd
