"""A statistic's natural scale for the live checks: the link that maps its possible range onto the real line.

Decided by the statistic's type, before any value is seen (:func:`scale_of`, from :data:`SCALES`): *log* for a
positive quantity of scale type, whose seed-to-seed spread grows with its size (Hessian eigenvalue magnitudes,
negative log-likelihoods, ratios of norms); *logit* on [low, high] for a statistic bounded on both sides (fractions
and accuracies on [0, 1], accuracy drops and differences of CKA on [-1, 1], differences of those on [-2, 2]),
g(x) = log(u / (1 - u)) with u = (x - low) / (high - low); *raw* for everything else (unbounded differences and
changes). On a link scale a check's acceptance region maps back strictly inside the statistic's range, so the check
can fail. Where a study value sits at a bound of the range (an NEP of 0), the link would put it at infinity, and the
statistic is raw on its range instead (:func:`fitted`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scipy import special

from ..claims.base import Part

__all__ = ["Scale", "RAW", "LOG", "FRACTION", "SCALES", "scale_of", "fitted"]


@dataclass(frozen=True)
class Scale:
    """A statistic's natural scale: the link that maps its range onto the real line (module docstring)."""

    link: Literal["raw", "log", "logit"]
    low: float = -math.inf
    high: float = math.inf

    def __str__(self) -> str:
        return f"logit on [{self.low:g}, {self.high:g}]" if self.link == "logit" else self.link

    def inside(self, value: float) -> bool:
        """Whether ``value`` is a possible value of the statistic (its range's bounds included, except log's 0)."""
        return value > 0 if self.link == "log" else self.low <= value <= self.high

    def to(self, value: float) -> float:
        """``value`` on the link scale (±inf at a bound of the range; NaN stays NaN)."""
        if self.link == "raw" or math.isnan(value):
            return value
        if self.link == "log":
            return math.log(value) if value > 0 else -math.inf
        u = (value - self.low) / (self.high - self.low)
        return -math.inf if u <= 0 else math.inf if u >= 1 else math.log(u / (1 - u))

    def back(self, value: float) -> float:
        if self.link == "raw":
            return value
        if self.link == "log":
            return math.exp(value)
        return self.low + (self.high - self.low) * float(special.expit(value))

    def shift(self, delta: float) -> str:
        """A shift of ``delta`` on the link scale, in words."""
        return {"raw": f"{delta:.3g}", "log": f"x{math.exp(delta):.3g}", "logit": f"{delta:.3g} on the logit scale"}[
            self.link
        ]


RAW, LOG, FRACTION = Scale("raw"), Scale("log"), Scale("logit", 0.0, 1.0)
# Each statistic of the catalogue by the start of its name (``Part.statistic_name``), decided by what it is (module
# docstring); a test requires every part of the catalogue to be named here.
SCALES: tuple[tuple[str, Scale], ...] = (
    ("APE (", LOG), ("mean |negative top Hessian eigenvalue|", LOG), ("test NLL", LOG), ("train NLL", LOG),
    ("mean ||x||/||f(x)||", LOG),
    ("NEP (", FRACTION), ("test error", FRACTION), ("test ECE", FRACTION), ("test accuracy", FRACTION),
    ("location-probe accuracy", FRACTION), ("mean corruption accuracy", FRACTION),
    ("mean CKA between", FRACTION),
    ("accuracy drop under", Scale("logit", -1.0, 1.0)), ("mean accuracy drop under", Scale("logit", -1.0, 1.0)),
    ("mean within-stage CKA - mean across-stage CKA", Scale("logit", -1.0, 1.0)),
    ("mean drop of key units - mean drop of", Scale("logit", -2.0, 2.0)),
    ("matched-depth CKA to", Scale("logit", -2.0, 2.0)), ("best-match CKA to ResNet", Scale("logit", -2.0, 2.0)),
    ("mean over query positions of mean cosine", Scale("logit", -2.0, 2.0)),
    ("CKA-weighted depth of ResNet units for the lower band - 0.6", Scale("logit", -0.6, 0.4)),
    ("mean ΔlogA(hf) change", RAW), ("mean feature-variance change", RAW), ("mean (CLS ratio - spatial ratio)", RAW),
    ("mean attention distance (px)", RAW), ("std over heads of mean attention distance", RAW),
    ("relative accuracy drop under occlusion", RAW),
)  # fmt: skip


def scale_of(part: Part | None) -> Scale:
    """The scale of a part's statistic (:data:`SCALES`; raw where unnamed); a test accuracy (``part`` None) is a
    fraction."""
    if part is None:
        return FRACTION
    return next((scale for start, scale in SCALES if part.statistic_name.startswith(start)), RAW)


def fitted(scale: Scale, values: Sequence[float]) -> Scale:
    """``scale``, or raw on its range where a value sits at a bound of it (the link would put that seed at infinity):
    a check on such a scale may be untestable (:attr:`~.live_check.Check.testable`)."""
    if scale.link == "raw" or all(math.isfinite(scale.to(v)) for v in values if not math.isnan(v)):
        return scale
    return Scale("raw", 0.0 if scale.link == "log" else scale.low, scale.high)
