"""One live estimate against the seed study, on its natural scale and one-sided where a verdict can move one way.

A statistic's **scale** is decided by its type, before any value is seen (:func:`scale_of`): *log* for a positive
quantity of scale type, whose seed-to-seed spread grows with its size (Hessian eigenvalue magnitudes: APE and
``|negative eigenvalue|``; negative log-likelihoods: ``NLL``; a ratio of norms: ``||x||/||f(x)||``), *raw* for
everything else: differences (``-``, change, drop), fractions (NEP, error, ECE, CKA) and accuracies.

On its scale a statistic's k study seeds give the predictive t distribution of a new seed, mean
x̄ + s √(1 + 1/k) t_{k-1} (:class:`Predictive`); the live value's standardized deviation z is t_{k-1} under the
null hypothesis that the live seed is one more draw of the recipe. A :class:`Check` rejects at level a on the
``sides`` it tests: ``upper`` (p = P(t > z)), ``lower`` (p = P(t < z)) or both (p = 2 P(t > |z|)). Its acceptance
region is the set of live values it does not reject, printed in the statistic's units. Its **power**: the live value
minus x̄ is normal with the new seed's variance σ²(1 + 1/k), independent of s, so z is noncentral t_{k-1} with
noncentrality δ / (σ √(1 + 1/k)); :meth:`Check.detectable` is the shift δ (s in place of σ; a factor on the log
scale) that rejects with 80 % power at the check's level, one tail (the level halved for a two-sided check).

The **omnibus** (:class:`Omnibus`) asks whether the live seed is off the study broadly, by less than any single
check sees: T = the mean over n statistics of q = log(1 + z²/ν), ν = k - 1, which is the live seed's mean negative
predictive log-density up to constants (the t density is ∝ (1 + z²/ν)^{-(ν+1)/2}). Unlike z² (whose mean over
t_4 deviates has infinite variance, so a mean of z² is a max in disguise), q = -log B with B ~ Beta(ν/2, 1/2) has
every moment: mean ψ((ν+1)/2) - ψ(ν/2), variance ψ'(ν/2) - ψ'((ν+1)/2). The reference distribution of n T treats
the n terms as independent and matches a gamma distribution to its mean and variance (Satterthwaite's method).
Statistics of one model are correlated, which widens T's spread beyond that reference: the leave-one-seed-out
calibration (:func:`~.reproduction.held_out`) counts how often that shows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scipy import optimize, special
from scipy import stats as sps

from ..claims.base import Part

__all__ = ["Side", "Scale", "POWER", "LOG_SCALE", "scale_of", "on_scale", "Predictive", "Check", "Omnibus", "holm_decided"]  # fmt: skip

Side = Literal["lower", "upper"]
Scale = Literal["log", "raw"]
POWER = 0.8
# the statistic names of positive scale-type quantities (module docstring), matched in ``Part.statistic_name``
LOG_SCALE = ("APE (", "|negative top Hessian eigenvalue|", "NLL", "||x||/||f(x)||")


def scale_of(part: Part | None) -> Scale:
    """``log`` for a part whose statistic is a positive scale-type quantity (:data:`LOG_SCALE`), else ``raw``; a
    test accuracy (``part`` None) is raw."""
    return "log" if part is not None and any(m in part.statistic_name for m in LOG_SCALE) else "raw"


def on_scale(value: float, scale: Scale) -> float:
    """``value`` on ``scale``; a non-positive value of a log-scale statistic is -inf (below every positive one)."""
    if scale == "raw" or math.isnan(value):
        return value
    return math.log(value) if value > 0 else -math.inf


def _natural(value: float, scale: Scale) -> float:
    return math.exp(value) if scale == "log" else value


@dataclass(frozen=True)
class Predictive:
    """A new seed's predictive t distribution on the statistic's scale: ``mean + spread * t_df``."""

    mean: float
    spread: float  # s sqrt(1 + 1/k)
    df: int

    @classmethod
    def of(cls, values: Sequence[float], scale: Scale) -> Predictive:
        x = [on_scale(v, scale) for v in values]
        k = len(x)
        mean = math.fsum(x) / k
        s = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (k - 1))
        return cls(mean, s * math.sqrt(1 + 1 / k), k - 1)

    def z(self, value: float) -> float:
        return (value - self.mean) / self.spread


def _tail(sides: frozenset[Side], level: float) -> float:
    return level / 2 if len(sides) == 2 else level


@dataclass(frozen=True)
class Check:
    """One live estimate (``value``, in the statistic's units; NaN where undefined) against its study's predictive
    distribution, rejecting on ``sides``; ``level`` and ``failed`` are set when it is decided (:func:`holm_decided`)."""

    what: str
    value: float
    sides: frozenset[Side]
    scale: Scale
    predictive: Predictive
    level: float = math.nan
    failed: bool = False

    @property
    def p(self) -> float:
        if math.isnan(self.value):
            return 0.0  # undefined where every study seed's is defined: the live model lacks what was measured
        z, df = self.predictive.z(on_scale(self.value, self.scale)), self.predictive.df
        if len(self.sides) == 2:
            return float(min(1.0, 2 * sps.t.sf(abs(z), df)))
        return float(sps.t.sf(z, df) if "upper" in self.sides else sps.t.cdf(z, df))

    def region(self) -> tuple[float, float]:
        """The live values not rejected at ``level``, in the statistic's units."""
        pred = self.predictive
        half = float(sps.t.isf(_tail(self.sides, self.level), pred.df)) * pred.spread
        low = pred.mean - half if "lower" in self.sides else -math.inf
        high = pred.mean + half if "upper" in self.sides else math.inf
        return _natural(low, self.scale), _natural(high, self.scale)

    def _noncentrality(self) -> float:
        df, critical = self.predictive.df, float(sps.t.isf(_tail(self.sides, self.level), self.predictive.df))
        return float(optimize.brentq(lambda nc: sps.nct.sf(critical, df, nc) - POWER, 0.0, 1e3))

    def detectable(self) -> float:
        """The shift (a difference; a factor on the log scale) rejected with :data:`POWER` at ``level``, toward the
        side tested (module docstring: noncentral t)."""
        shift = self._noncentrality() * self.predictive.spread
        return math.exp(shift) if self.scale == "log" else shift

    @property
    def detectable_sds(self) -> float:
        """:meth:`detectable` in the study's seed-to-seed standard deviations (on the statistic's scale)."""
        return self._noncentrality() * math.sqrt(1 + 1 / (self.predictive.df + 1))

    def describe(self) -> str:
        low, high = self.region()
        where = f"{'(' if low == -math.inf else '['}{low:.4g}, {high:.4g}{')' if high == math.inf else ']'}"
        sided = "two-sided" if len(self.sides) == 2 else "one-sided"
        shift = f"x{self.detectable():.3g}" if self.scale == "log" else f"{self.detectable():.3g}"
        power = f"{POWER:.0%} power at a shift of {shift}{' (log scale)' if self.scale == 'log' else ''}"
        if math.isnan(self.value):
            return f"{self.what}: UNDEFINED where every study seed's is defined (acceptance region {where}; p = 0)"
        if self.failed:
            side = "below" if self.value < low else "above"
            return (f"{self.what}: {self.value:.4g} {side} the acceptance region {where} ({sided}, p = {self.p:.3g} "
                    f"at level {self.level:.2g})")  # fmt: skip
        return f"{self.what}: {self.value:.4g} inside {where} ({sided}, p = {self.p:.3g}; {power})"


def _terms(df: int) -> tuple[float, float]:
    """Mean and variance of log(1 + t²/ν) for t ~ t_ν: -log B, B ~ Beta(ν/2, 1/2) (module docstring)."""
    a = df / 2
    return float(special.digamma(a + 0.5) - special.digamma(a)), float(special.polygamma(1, a) - special.polygamma(1, a + 0.5))  # fmt: skip


@dataclass(frozen=True)
class Omnibus:
    """The family's mean predictive log score T against its gamma-matched reference (module docstring)."""

    what: str
    scores: tuple[float, ...]  # log(1 + z²/ν) per statistic
    dfs: tuple[int, ...]
    level: float = math.nan
    failed: bool = False

    @classmethod
    def of(cls, what: str, deviations: Sequence[tuple[float, int]]) -> Omnibus:
        """From each statistic's (z, ν)."""
        return cls(what, tuple(math.log1p(z * z / df) for z, df in deviations), tuple(df for _, df in deviations))

    def _gamma(self) -> tuple[float, float]:
        mean = math.fsum(_terms(d)[0] for d in self.dfs)
        var = math.fsum(_terms(d)[1] for d in self.dfs)
        return mean * mean / var, var / mean  # shape, scale

    @property
    def value(self) -> float:
        return math.fsum(self.scores) / len(self.scores)

    @property
    def p(self) -> float:
        shape, scale = self._gamma()
        return float(sps.gamma.sf(math.fsum(self.scores), shape, scale=scale))

    def region(self) -> tuple[float, float]:
        shape, scale = self._gamma()
        return 0.0, float(sps.gamma.isf(self.level, shape, scale=scale)) / len(self.scores)

    def describe(self) -> str:
        low, high = self.region()
        verdict = "above the acceptance region" if self.failed else "inside"
        return (f"{self.what}: mean log(1 + z²/ν) {self.value:.3g} {verdict} [{low:.3g}, {high:.3g}] over "
                f"{len(self.scores)} statistics (one-sided, p = {self.p:.3g})")  # fmt: skip


Decided = Check | Omnibus


def holm_decided(checks: Sequence[Decided], level: float) -> tuple[Decided, ...]:
    """Holm's procedure at ``level``: each check decided at the level its step tested it at, α / (m - r) for rank r
    up to the first step that does not reject, α / (m - s) for every rank after that step s; so that a check
    failed exactly where its value lies outside the acceptance region it prints."""
    order = sorted(range(len(checks)), key=lambda i: checks[i].p)
    m, decided = len(checks), list(checks)
    stop = next((r for r, i in enumerate(order) if checks[i].p > level / (m - r)), m)
    for r, i in enumerate(order):
        decided[i] = dataclasses.replace(checks[i], level=level / (m - min(r, stop)), failed=r < stop)
    return tuple(decided)
