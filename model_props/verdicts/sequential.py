"""Group-sequential decisions: stop measuring a checkpoint's part once its verdict is decided.

A part's statistic that is a mean over images or batches is looked at K times over a fixed seeded order of the
rule's sample (information fractions ``t_k = n_k / n_max``). At look k the repeated confidence interval is
``estimate_k +- c_k se_k`` (Jennison & Turnbull 2000, *Group Sequential Methods*, Ch. 9); the part stops at the first
look where that interval lies on one side of the threshold (:func:`~.stats.decide`), and at the last look it is
decided, or inconclusive, on ``c_K``. The symmetric critical values spend each side's error ``a = alpha / 2`` by the
Lan-DeMets O'Brien-Fleming-type function (Lan & DeMets 1983; the form of gsDesign's ``sfLDOF`` and ldbounds)::

    a(t) = 2 - 2 Phi(z_{1 - a/2} / sqrt(t))

so that at the threshold the chance of *ever* leaving on one side is at most ``alpha / 2``, as the fixed 95 %
interval's, and early looks need overwhelming evidence (c_1 = 4.88 of K = 5).

Written by hand because no maintained Python library computes group-sequential boundaries (gsDesign and rpact
are R packages); the recursion is Armitage, McPherson & Rowe's (1969) numerical integration of the score process
``S_k = Z_k sqrt(t_k)`` (Brownian motion with drift ``theta``) on a grid, the method of gsDesign (Jennison & Turnbull
Ch. 19), and :mod:`property_tests` pins its boundaries to published values and checks its crossing probabilities
against a Monte Carlo simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize
from scipy import stats as sps

from ..measurements.chunks import LOOKS

__all__ = [
    "LOOKS", "MIN_PER_LOOK", "obf_spending", "boundaries", "crossing", "Design", "design", "look_statistics",
    "Sequential", "decide_sequential", "critical_t", "repeated_p",
]  # fmt: skip

# LOOKS was fixed at design time (2026-11-26) from the analytic operating characteristics (:func:`crossing`), before
# any simulation or measurement: with 8 equally spaced looks the expected sample at 4 standard errors of the full
# sample is 61 % of it, and the power at 2 SE 1.5 points under the fixed design's. It lives with the chunks, which are
# sized by it (a measurement may not import a verdict).
MIN_PER_LOOK = 4  # samples per look at the least: a part of 16 Hessian batches gets 4 looks
GRID = 1001  # grid points of the numerical integration over the continuation region


def obf_spending(t: np.ndarray | float, alpha: float = 0.05) -> np.ndarray:
    """The error one side has spent by information fraction ``t`` (Lan-DeMets O'Brien-Fleming type, side level
    ``alpha / 2``)."""
    t = np.asarray(t, dtype=float)
    z = sps.norm.ppf(1 - alpha / 4)
    with np.errstate(divide="ignore"):
        return np.where(t > 0, 2 - 2 * sps.norm.cdf(z / np.sqrt(np.maximum(t, 1e-300))), 0.0)


def _trapezoid(grid: np.ndarray) -> np.ndarray:
    """The trapezoid rule's weights on an evenly spaced ``grid``."""
    w = np.full(len(grid), grid[1] - grid[0])
    w[[0, -1]] /= 2
    return w


def _step(density: np.ndarray, grid: np.ndarray, dt: float, drift: float, to: np.ndarray) -> np.ndarray:
    """The density of S at the next look on ``to``, from ``density`` on ``grid`` (trapezoid rule), an increment
    N(drift dt, dt)."""
    w = _trapezoid(grid)
    kernel = sps.norm.pdf((to[:, None] - grid[None, :] - drift * dt) / np.sqrt(dt)) / np.sqrt(dt)
    return kernel @ (density * w)


def _leave(density: np.ndarray, grid: np.ndarray, dt: float, drift: float, bound: float) -> tuple[float, float]:
    """P(S_next >= bound) and P(S_next <= -bound) from the continuation density on ``grid``."""
    w = _trapezoid(grid)
    mean, sd = grid + drift * dt, np.sqrt(dt)
    upper = float(np.sum(density * w * sps.norm.sf((bound - mean) / sd)))
    lower = float(np.sum(density * w * sps.norm.cdf((-bound - mean) / sd)))
    return upper, lower


@lru_cache(maxsize=32)
def _boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    spend = 2 * np.diff(obf_spending(np.array((0.0, *fractions)), alpha))  # both sides
    c = [float(sps.norm.isf(spend[0] / 2))]
    grid = np.linspace(-c[0], c[0], GRID) * np.sqrt(fractions[0])
    density = sps.norm.pdf(grid / np.sqrt(fractions[0])) / np.sqrt(fractions[0])
    for k in range(1, len(fractions)):
        dt = fractions[k] - fractions[k - 1]

        def excess(ck: float, k: int, dt: float, density: np.ndarray, grid: np.ndarray) -> float:
            up, low = _leave(density, grid, dt, 0.0, ck * np.sqrt(fractions[k]))
            return up + low - spend[k]

        c.append(float(optimize.brentq(excess, 0.5, 12.0, args=(k, dt, density, grid), xtol=1e-10)))
        new = np.linspace(-c[k], c[k], GRID) * np.sqrt(fractions[k])
        density, grid = _step(density, grid, dt, 0.0, new), new
    return tuple(c)


def boundaries(fractions: Sequence[float], alpha: float = 0.05) -> np.ndarray:
    """The two-sided critical values c_1..c_K on the Z scale at information ``fractions`` (increasing, last 1)."""
    fractions = tuple(float(f) for f in fractions)
    if not fractions or fractions[-1] != 1.0 or any(b <= a for a, b in zip((0.0, *fractions), fractions)):
        raise ValueError(f"information fractions must increase to 1, got {fractions}")
    return np.array(_boundaries(fractions, alpha))


def crossing(fractions: Sequence[float], c: Sequence[float], drift: float) -> tuple[np.ndarray, np.ndarray]:
    """(P(stop above at look k), P(stop below at look k)) for a Z statistic of mean ``drift`` at the full sample
    (the effect in standard errors of the full sample), by the same numerical integration."""
    t = np.asarray(fractions, dtype=float)
    upper, lower = np.zeros(len(t)), np.zeros(len(t))
    sd = np.sqrt(t[0])
    upper[0] = sps.norm.sf(c[0] - drift * sd)
    lower[0] = sps.norm.cdf(-c[0] - drift * sd)
    grid = np.linspace(-c[0], c[0], GRID) * sd
    density = sps.norm.pdf((grid - drift * t[0]) / sd) / sd
    for k in range(1, len(t)):
        dt = t[k] - t[k - 1]
        upper[k], lower[k] = _leave(density, grid, dt, drift, c[k] * np.sqrt(t[k]))
        new = np.linspace(-c[k], c[k], GRID) * np.sqrt(t[k])
        density, grid = _step(density, grid, dt, drift, new), new
    return upper, lower


@dataclass(frozen=True)
class Design:
    """K looks at ``sizes`` (samples used by each look) of a part whose rule's sample is ``sizes[-1]``."""

    sizes: tuple[int, ...]
    critical: tuple[float, ...]  # c_k on the Z scale
    alpha: float

    @property
    def fractions(self) -> tuple[float, ...]:
        return tuple(n / self.sizes[-1] for n in self.sizes)


def design(n_max: int, looks: int = LOOKS, alpha: float = 0.05) -> Design:
    """Equally spaced looks over ``n_max`` samples (rounded up; fewer looks where n_max is small, each look at
    least :data:`MIN_PER_LOOK` samples), with their O'Brien-Fleming-type critical values."""
    looks = max(1, min(looks, n_max // MIN_PER_LOOK))
    sizes = tuple(int(np.ceil(n_max * (k + 1) / looks)) for k in range(looks))
    fractions = tuple(n / n_max for n in sizes)
    return Design(sizes, tuple(boundaries(fractions, alpha)), alpha)


def look_statistics(values: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The mean and its standard error at each look of per-unit ``values`` (..., n_max) taken in their order:
    arrays (..., K). A paired comparison passes the per-unit differences."""
    n = np.asarray(sizes)
    total = np.cumsum(values, axis=-1)[..., n - 1]
    squares = np.cumsum(values**2, axis=-1)[..., n - 1]
    mean = total / n
    var = np.maximum(squares - n * mean**2, 0.0) / (n - 1)
    return mean, np.sqrt(var / n)


def critical_t(d: Design) -> np.ndarray:
    """The critical values c_k carried to Student's t with n_k - 1 degrees of freedom at the same tail probability
    (the significance-level approach, Jennison & Turnbull Sec. 3.6): few units per look stay conservative."""
    return np.asarray(sps.t.isf(sps.norm.sf(np.asarray(d.critical)), df=np.asarray(d.sizes) - 1))


def repeated_p(d: Design, look: int, z: float, levels: Sequence[float]) -> float:
    """The repeated p-value at ``look`` (0-based) of a one-sided test whose statistic is ``z`` standard errors on
    the null's far side, rounded up to the one-sided ``levels`` (Jennison & Turnbull Sec. 9.1): the smallest of them
    at which the repeated interval of the design spending twice that level excludes the null, else 1. Holm's
    procedure compares p-values with exactly such levels (alpha / m, ..., alpha), so rounding up to them changes none
    of its decisions and keeps each p-value valid."""
    p = 1.0
    for level in sorted(levels, reverse=True):  # the loosest first: a part rejected at none computes one design
        if z <= critical_t(Design(d.sizes, tuple(boundaries(d.fractions, 2 * level)), 2 * level))[look]:
            break
        p = float(level)
    return p


@dataclass(frozen=True)
class Sequential:
    """Per replicate: the verdict, the look it stopped at (0-based), the samples used, the repeated interval."""

    verdict: np.ndarray  # "supported" | "contradicted" | "inconclusive"
    look: np.ndarray
    used: np.ndarray
    low: np.ndarray
    high: np.ndarray


def decide_sequential(mean: np.ndarray, se: np.ndarray, d: Design, direction: str, threshold: float) -> Sequential:
    """Stop at the first look whose repeated interval ``mean_k +- c_k se_k`` lies on one side of ``threshold``
    (claimed side: supported; the other: contradicted); else inconclusive at the last look. Each c_k is carried to
    Student's t (:func:`critical_t`). A ``within`` rule (equivalence, margin ``|threshold|``) stops where the
    repeated interval lies inside the margin (supported) or wholly outside it (contradicted): the intervals cover
    the statistic at every look at once, so each one-sided test of the equivalence keeps its level (Jennison &
    Turnbull Ch. 6)."""
    if direction not in ("greater", "less", "within"):
        raise ValueError(f"a sequential part has direction 'greater', 'less' or 'within', got {direction!r}")
    c = critical_t(d)
    low, high = mean - c * se, mean + c * se
    if direction == "within":
        margin = abs(threshold)
        above, below = (low > -margin) & (high < margin), (low > margin) | (high < -margin)  # inside, outside
    else:
        above, below = low > threshold, high < threshold
    decided = above | below
    look = np.where(decided.any(axis=-1), decided.argmax(axis=-1), len(d.sizes) - 1)
    pick = look[..., None]
    up = np.take_along_axis(above, pick, axis=-1)[..., 0]
    down = np.take_along_axis(below, pick, axis=-1)[..., 0]
    claimed, other = (down, up) if direction == "less" else (up, down)
    verdict = np.where(claimed, "supported", np.where(other, "contradicted", "inconclusive"))
    return Sequential(
        verdict,
        look,
        np.asarray(d.sizes)[look],
        np.take_along_axis(low, pick, axis=-1)[..., 0],
        np.take_along_axis(high, pick, axis=-1)[..., 0],
    )
