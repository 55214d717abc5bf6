"""The live checks' omnibus: is the live seed off the study broadly, towards the verdicts, by less than any single
check sees?

The broad shift it is for moves every statistic towards the side that would move its verdict, so it enters the
statistics whose check is one-sided (:class:`~.live_check.Check`: a supported or contradicted part's); one a
two-sided check tests (an inconclusive part's, an equivalence's) has no such side, and its own check alone covers it.
Each p-value becomes a normal score y = Φ⁻¹(1 - p), truncated at 0 (a deviation on a verdict's safe side counts
nothing), and T = Σ y⁺ (Stouffer's sum, one-sided). Statistics whose study values are near duplicates
(|r| >= :data:`DUPLICATE_R` over the seeds, on their scales: an error and an accuracy, one drop at two nearby
budgets) enter once. The terms are dependent (statistics of one model share its seed), so T's reference
distribution is simulated (:func:`simulate_omnibus`): k + 1 seeds drawn from a normal distribution with the study's
own correlation of standardized residuals, the live procedure applied to the last, :data:`SIMULATIONS` times;
p = (1 + #{T_sim >= T}) / (1 + :data:`SIMULATIONS`). Written here rather than taken from a library: the reference
distribution is this procedure's own, one-sided and truncated, and no package simulates it.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from .live_check import Check, Side, p_value

__all__ = ["SIMULATIONS", "DUPLICATE_R", "Omnibus", "Decided", "omnibus", "simulate_omnibus"]

SIMULATIONS = 20_000  # draws of the omnibus's reference distribution (MC error of p at 0.005: about 0.0005)
DUPLICATE_R = 0.99  # study values this correlated (in absolute value) are one statistic to the omnibus


def _scores(p: np.ndarray) -> np.ndarray:
    """y⁺ = max(Φ⁻¹(1 - p), 0), finite (p floored at 1e-300)."""
    return np.maximum(sps.norm.isf(np.maximum(p, 1e-300)), 0.0)


def simulate_omnibus(residuals: np.ndarray, sides: Sequence[frozenset[Side]], draws: int, seed: int) -> np.ndarray:
    """T = Σ y⁺ of ``draws`` simulated live seeds (module docstring), sorted: each draw is k + 1 seeds from the
    normal distribution whose correlation is that of the (k, n) study ``residuals`` (standardized per column), the
    first k the study, the last the live seed, judged as the live procedure judges it."""
    k = residuals.shape[0]
    rng = np.random.default_rng(seed)
    factors = residuals / math.sqrt(k - 1)  # Σ = factorsᵀ factors, the study's correlation
    seeds = np.einsum("bij,jn->bin", rng.standard_normal((draws, k + 1, k)), factors)
    study, live = seeds[:, :k, :], seeds[:, k, :]
    z = (live - study.mean(axis=1)) / (study.std(axis=1, ddof=1) * math.sqrt(1 + 1 / k))
    p = np.stack([p_value(z[:, j], k - 1, s) for j, s in enumerate(sides)], axis=1)
    return np.sort(_scores(p).sum(axis=1))


@dataclass(frozen=True, eq=False)
class Omnibus:
    """The family's one-sided Stouffer sum T against its simulated reference distribution (module docstring)."""

    what: str
    scores: tuple[float, ...]  # y⁺ per statistic entered
    reference: np.ndarray = field(repr=False)  # T of the simulated live seeds, sorted
    directions: tuple[float, ...]  # per statistic entered, the side its check tests: -1 lower, +1 upper
    correlation: np.ndarray = field(repr=False)  # of the statistics entered, over the study's seeds
    merged: int = 0  # statistics left out as near duplicates of one entered
    level: float = math.nan
    failed: bool = False

    @property
    def value(self) -> float:
        return math.fsum(self.scores)

    @property
    def p(self) -> float:
        above = len(self.reference) - int(np.searchsorted(self.reference, self.value, side="left"))
        return (1 + above) / (1 + len(self.reference))

    def best_noncentrality(self) -> float | None:
        """How far the most powerful test of a broad shift, of one predictive SD on every statistic entered towards
        its side, sees it, with the study's correlation R taken as known: √(dᵀR⁻¹d), d the :attr:`directions`
        (Neyman-Pearson: the likelihood ratio of a normal mean shift along d is linear in dᵀR⁻¹z). A bound on this
        omnibus's power at that shift, against Φ⁻¹(1 - level); None where R is singular (as many statistics as
        seeds, or more)."""
        d = np.array(self.directions)
        if np.linalg.matrix_rank(self.correlation) < len(d):
            return None
        return math.sqrt(float(d @ np.linalg.solve(self.correlation, d)))

    def region(self) -> tuple[float, float]:
        return 0.0, float(np.quantile(self.reference, 1 - self.level))

    def describe(self) -> str:
        low, high = self.region()
        verdict = "above the acceptance region" if self.failed else "inside"
        merged = f", {self.merged} near duplicates entered once" if self.merged else ""
        return (f"{self.what}: Σ y⁺ {self.value:.3g} {verdict} [{low:.3g}, {high:.3g}] over {len(self.scores)} "
                f"statistics (one-sided towards the verdicts{merged}; p = {self.p:.3g}, simulated from the study's "
                f"correlation, {len(self.reference):,} draws)")  # fmt: skip


def omnibus(what: str, checks: Sequence[Check], study: Sequence[Sequence[float]]) -> Omnibus | None:
    """The omnibus of the one-sided ``checks`` among those given (each with a defined, possible live value and
    complete study values ``study``, one row of k values per check, in its units); None where fewer than two enter or
    k < 3."""
    entered = [(c, row) for c, row in zip(checks, study) if len(c.sides) == 1]
    checks, study = [c for c, _ in entered], [row for _, row in entered]
    if len(checks) < 2 or len(study[0]) < 3:
        return None
    x = np.array([[c.scale.to(v) for v in row] for c, row in zip(checks, study)]).T  # (k, n) on the link scales
    residuals = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    kept: list[int] = []
    for j in range(x.shape[1]):
        if all(abs(float(residuals[:, j] @ residuals[:, i])) / (len(x) - 1) < DUPLICATE_R for i in kept):
            kept.append(j)
    sides = [checks[j].sides for j in kept]
    reference = simulate_omnibus(residuals[:, kept], sides, SIMULATIONS, zlib.crc32(what.encode()))
    scores = _scores(np.array([checks[j].p for j in kept]))
    directions = tuple(-1.0 if side == {"lower"} else 1.0 for side in sides)
    correlation = residuals[:, kept].T @ residuals[:, kept] / (len(x) - 1)
    return Omnibus(what, tuple(float(s) for s in scores), reference, directions, correlation, len(checks) - len(kept))


Decided = Check | Omnibus
