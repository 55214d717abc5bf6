"""The disputed side of a disagreement between papers: a claim of the catalogue that a later paper's claim disputes
(:class:`~model_props.claims.base.Dispute`) is restated on the statistic of one of the disputing claim's parts and
judged on that part's estimate, at **its own claim's level and correction**, not the disputing claim's:

- its interval at the disputed claim's confidence (:func:`at_level`, by the method that made the estimate);
- *supported* where that interval lies on the claimed side (intersection-union: a claim's support takes no
  multiplicity correction; it speaks of this statistic only, not of the disputed claim's own parts, which read
  others);
- *contradicted* only where the interval at the one-sided level alpha / (m + 1) lies on the other side, alpha the
  disputed claim's one-sided level and m its parts: Holm's first step (Bonferroni) over its parts and this
  restatement, the one step of its correction that needs none of the other parts' p-values;
- else inconclusive.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..claims import CLAIMS
from ..claims.base import Dispute
from .sequential import Design, boundaries, critical_t
from .stats import Estimate, Verdict, decide

__all__ = ["DisputedSide", "at_level", "disputed_side"]


@dataclass(frozen=True)
class DisputedSide:
    """The disputed ``claim``'s verdict on a disputing part's statistic, its interval [``low``, ``high``] at that
    claim's ``level``; contradicted only past the one-sided level (1 - level) / 2 / ``family``."""

    claim: str
    verdict: Verdict
    low: float
    high: float
    level: float
    family: int


def at_level(est: Estimate, level: float) -> Estimate:
    """The estimate's interval at confidence ``level`` by the method that made it: Student's t at its degrees of
    freedom, a sequential look's repeated interval under the design that spends 1 - ``level`` (a repeated interval
    covers at every look whatever rule stopped the looks: Jennison & Turnbull 2000, Ch. 9), or the bootstrap's
    percentiles."""
    if est.t is not None:
        mean, se, df = est.t
        half = float(sps.t.ppf(0.5 + level / 2, df)) * se if se > 0 else 0.0
        return dataclasses.replace(est, low=mean - half, high=mean + half, level=level)
    if est.repeated is not None:
        r = est.repeated
        fractions = tuple(n / r.sizes[-1] for n in r.sizes)
        design = Design(r.sizes, tuple(boundaries(fractions, 1.0 - level)), 1.0 - level)
        c = float(critical_t(design)[r.look])
        return dataclasses.replace(est, low=est.value - c * r.se, high=est.value + c * r.se, level=level,
                                   repeated=dataclasses.replace(r, critical=c))  # fmt: skip
    if est.replicates is None:
        raise ValueError("this estimate keeps no t parameters, repeated interval or replicates to change its level")
    low, high = np.quantile(est.replicates, [(1.0 - level) / 2, (1.0 + level) / 2])
    return dataclasses.replace(est, low=float(low), high=float(high), level=level)


def disputed_side(est: Estimate, dispute: Dispute) -> DisputedSide:
    """The disputed claim's side of ``dispute``, judged on the disputing part's estimate (module docstring)."""
    disputed = CLAIMS[dispute.claim]
    family = len(disputed.parts) + 1
    at = at_level(est, disputed.level)
    verdict = decide(at, dispute.direction, dispute.threshold)
    strict = at_level(est, 1.0 - (1.0 - disputed.level) / family)
    if verdict == "contradicted" and decide(strict, dispute.direction, dispute.threshold) != "contradicted":
        verdict = "inconclusive"
    return DisputedSide(disputed.id, verdict, at.low, at.high, disputed.level, family)
