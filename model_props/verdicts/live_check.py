"""One live estimate against the seed study, on its natural scale (:mod:`.scales`) and one-sided where a verdict
can move one way.

On its scale a statistic's k study seeds give the predictive t distribution of a new seed, mean
x̄ + s √(1 + 1/k) t_{k-1} (:class:`Predictive`); the live value's standardized deviation z is t_{k-1} under the
null hypothesis that the live seed is one more draw of the recipe. A :class:`Check` rejects at level a on the
``sides`` it tests: ``upper`` (p = P(t > z)), ``lower`` (p = P(t < z)) or both (p = 2 P(t > |z|)). Its acceptance
region is the set of live values it does not reject, printed in the statistic's units; where it covers the
statistic's whole range the check cannot fail (:attr:`Check.testable`). Its **power**: the live value minus x̄ is
normal with the new seed's variance σ²(1 + 1/k), independent of s, so z is noncentral t_{k-1} with noncentrality
δ / (σ √(1 + 1/k)); :meth:`Check.detectable` is the shift δ on the link scale (s in place of σ) that rejects with
80 % power at the check's level, one tail (the level halved for a two-sided check).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize
from scipy import stats as sps

from .scales import Scale

__all__ = ["Side", "POWER", "Predictive", "Check", "p_value", "holm_decided"]

Side = Literal["lower", "upper"]
POWER = 0.8


@dataclass(frozen=True)
class Predictive:
    """A new seed's predictive t distribution on the statistic's link scale: ``mean + spread * t_df``."""

    mean: float
    spread: float  # s sqrt(1 + 1/k)
    df: int

    @classmethod
    def of(cls, values: Sequence[float], scale: Scale) -> Predictive:
        x = [scale.to(v) for v in values]
        k = len(x)
        mean = math.fsum(x) / k
        s = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (k - 1))
        return cls(mean, s * math.sqrt(1 + 1 / k), k - 1)

    def z(self, value: float) -> float:
        return (value - self.mean) / self.spread


def _tail(sides: frozenset[Side], level: float) -> float:
    return level / 2 if len(sides) == 2 else level


def p_value(z: np.ndarray | float, df: int, sides: frozenset[Side]) -> np.ndarray:
    """The p-value of standardized deviations ``z`` (t on ``df``) on ``sides``."""
    if len(sides) == 2:
        return np.minimum(1.0, 2 * sps.t.sf(np.abs(z), df))
    return sps.t.sf(z, df) if "upper" in sides else sps.t.cdf(z, df)


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
    null: float = math.nan  # the part's null on this statistic (a reversal), where it has one

    @property
    def p(self) -> float:
        if math.isnan(self.value) or not self.scale.inside(self.value):
            return 0.0  # undefined where every study seed's is defined, or impossible: the live model is broken
        return float(p_value(self.predictive.z(self.scale.to(self.value)), self.predictive.df, self.sides))

    def region(self) -> tuple[float, float]:
        """The live values not rejected at ``level``, in the statistic's units."""
        pred = self.predictive
        half = float(sps.t.isf(_tail(self.sides, self.level), pred.df)) * pred.spread
        low = pred.mean - half if "lower" in self.sides else -math.inf
        high = pred.mean + half if "upper" in self.sides else math.inf
        return self.scale.back(low), self.scale.back(high)

    @property
    def testable(self) -> bool:
        """Whether a possible live value can fail it: on a side it tests, its acceptance region ends inside the
        statistic's range."""
        low, high = self.region()
        return ("lower" in self.sides and low > self.scale.low) or ("upper" in self.sides and high < self.scale.high)

    def _seeds_to_reach(self, distance: float) -> int | None:
        """The fewest study seeds (with the study's mean and spread) at which a live value ``distance`` from the
        predictive mean, on the link scale, lies outside the acceptance region (None: over 100)."""
        pred, k = self.predictive, self.predictive.df + 1
        s = pred.spread / math.sqrt(1 + 1 / k)
        return next((n for n in range(k, 101)
                     if float(sps.t.isf(_tail(self.sides, self.level), n - 1)) * s * math.sqrt(1 + 1 / n) < distance),
                    None)  # fmt: skip

    def seeds_to_test(self) -> int | None:
        """The fewest study seeds at which a possible live value can fail it (the study's mean and spread held)."""
        room = [b - self.predictive.mean if side == "upper" else self.predictive.mean - b
                for side, b in (("upper", self.scale.high), ("lower", self.scale.low)) if side in self.sides]  # fmt: skip
        return self._seeds_to_reach(max(room))

    def seeds_to_see_reversal(self) -> int | None:
        """The fewest study seeds at which a live value at the part's :attr:`null` (a reversal of the study's
        verdict) fails it: the study's k where it does now; None where it has no null on a side it tests (or past
        100 seeds: :meth:`describe` tells the two apart)."""
        distance = self.distance_to_null()
        return None if math.isnan(distance) else self._seeds_to_reach(abs(distance))

    def distance_to_null(self) -> float:
        """The null minus the predictive mean on the link scale, where a one-sided check tests that side; else NaN."""
        distance = self.scale.to(self.null) - self.predictive.mean if self.scale.inside(self.null) else math.nan
        return distance if self.sides == {"upper" if distance > 0 else "lower"} else math.nan

    def _noncentrality(self, df: int | None = None) -> float:
        """The noncentrality of t_df (default: the study's k - 1) that rejects with :data:`POWER` at ``level``."""
        df = self.predictive.df if df is None else df
        critical = float(sps.t.isf(_tail(self.sides, self.level), df))
        return float(optimize.brentq(lambda nc: sps.nct.sf(critical, df, nc) - POWER, 0.0, 1e3))

    def seeds_to_detect(self, shift: float) -> int | None:
        """The fewest study seeds n (the study's spread s held, the level too) at which a shift of ``shift`` on the
        link scale is rejected with :data:`POWER`: noncentrality(n - 1) s √(1 + 1/n) <= shift; None past 100."""
        k = self.predictive.df + 1
        s = self.predictive.spread / math.sqrt(1 + 1 / k)
        return next((n for n in range(3, 101) if self._noncentrality(n - 1) * s * math.sqrt(1 + 1 / n) <= shift),
                    None)  # fmt: skip

    def detectable(self) -> float:
        """The shift on the link scale rejected with :data:`POWER` at ``level``, toward the side tested (module
        docstring: noncentral t)."""
        return self._noncentrality() * self.predictive.spread

    @property
    def detectable_sds(self) -> float:
        """:meth:`detectable` in the study's seed-to-seed standard deviations (on the statistic's scale)."""
        return self._noncentrality() * math.sqrt(1 + 1 / (self.predictive.df + 1))

    def describe(self) -> str:
        low, high = self.region()
        where = f"{'(' if low == -math.inf else '['}{low:.4g}, {high:.4g}{')' if high == math.inf else ']'}"
        sided = "two-sided" if len(self.sides) == 2 else "one-sided"
        power = f"{POWER:.0%} power at a shift of {self.scale.shift(self.detectable())}"
        if math.isnan(self.value):
            return f"{self.what}: UNDEFINED where every study seed's is defined (acceptance region {where}; p = 0)"
        if not self.testable:
            needs = self.seeds_to_test()
            return (f"{self.what}: UNTESTABLE with {self.predictive.df + 1} seeds, its acceptance region {where} "
                    f"covers the statistic's range [{self.scale.low:g}, {self.scale.high:g}] (testable with "
                    f"{needs if needs else 'over 100'} seeds); live value {self.value:.4g}")  # fmt: skip
        if not self.scale.inside(self.value):
            return f"{self.what}: {self.value:.4g} is not a possible value of it ({self.scale} scale; p = 0)"
        if self.failed:
            side = "below" if self.value < low else "above"
            return (f"{self.what}: {self.value:.4g} {side} the acceptance region {where} ({sided}, p = {self.p:.3g} "
                    f"at level {self.level:.2g})")  # fmt: skip
        seeds, k = self.seeds_to_see_reversal(), self.predictive.df + 1
        if seeds is not None and seeds > k:
            reversal = f"; a reversal to {self.null:.4g} would fail it with {seeds} seeds"
        elif seeds is None and not math.isnan(self.distance_to_null()):
            reversal = f"; a reversal to {self.null:.4g} would pass it even with 100 seeds"
        else:
            reversal = ""
        return f"{self.what}: {self.value:.4g} inside {where} ({sided}, p = {self.p:.3g}; {power}{reversal})"


def holm_decided(checks: Sequence[Check], level: float) -> tuple[Check, ...]:
    """Holm's procedure at ``level``: each check decided at the level its step tested it at, α / (m - r) for rank r
    up to the first step that does not reject, α / (m - s) for every rank after that step s; so that a check
    failed exactly where its value lies outside the acceptance region it prints."""
    order = sorted(range(len(checks)), key=lambda i: checks[i].p)
    m, decided = len(checks), list(checks)
    stop = next((r for r, i in enumerate(order) if checks[i].p > level / (m - r)), m)
    for r, i in enumerate(order):
        decided[i] = dataclasses.replace(checks[i], level=level / (m - min(r, stop)), failed=r < stop)
    return tuple(decided)
