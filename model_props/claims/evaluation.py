"""Claim x model -> verdict: bootstrap every applicable part of a claim and combine (design Sec. 7).

A claim is *supported* when every applicable part is supported, *contradicted* when any part is
contradicted, and *inconclusive* otherwise. The outcome carries the numbers for the report, and a failure
message that states the claim, the statistic, the interval, the rule and, when inconclusive, about how many
more samples would settle it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..anatomy import Anatomy
from ..errors import ModelPropsError, NotApplicable
from .base import Claim, Part
from .stats import (
    N_BOOT,
    Estimate,
    Verdict,
    bootstrap,
    bootstrap_two_sample,
    decide,
    samples_to_settle,
    standardized_effect,
)

__all__ = ["PartOutcome", "ClaimOutcome", "evaluate_claim"]

_PRIORITY = {"contradicted": 0, "inconclusive": 1, "supported": 2}


@dataclass(frozen=True)
class PartOutcome:
    part: Part
    verdict: Verdict | Literal["skipped"]
    estimate: Estimate | None = None
    reason: str = ""
    samples_to_settle: int | None = None

    def describe(self) -> str:
        p = self.part
        if self.estimate is None:
            return f"[{p.name}] skipped: {self.reason}"
        e = self.estimate
        text = (
            f"[{p.name}] {self.verdict}: {p.rule}; measured {e.value:.4g}, "
            f"{e.level:.0%} CI [{e.low:.4g}, {e.high:.4g}] over {e.n} {p.sampling}, "
            f"effect size d = {standardized_effect(e, p.threshold):.2f}"
        )
        if self.verdict == "inconclusive":
            more = (
                f"about {self.samples_to_settle} {p.sampling}"
                if self.samples_to_settle
                else "no sample size (the estimate sits on the threshold)"
            )
            text += f"; would likely be settled by {more}"
        return text

    def to_json(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "part": self.part.name,
            "statistic": self.part.statistic_name,
            "rule": self.part.rule,
            "verdict": self.verdict,
            "reason": self.reason,
            "versus": self.part.versus,
            "value": e.value if e else None,
            "interval": list(e.interval) if e else None,
            "level": e.level if e else None,
            "n": e.n if e else None,
            "sampling": self.part.sampling,
            "effect_size": standardized_effect(e, self.part.threshold) if e else None,
            "samples_to_settle": self.samples_to_settle,
        }


@dataclass(frozen=True)
class ClaimOutcome:
    claim: Claim
    model: str
    parts: tuple[PartOutcome, ...]
    verdict: Verdict = field(init=False)

    def __post_init__(self) -> None:
        decided = [p.verdict for p in self.parts if p.verdict != "skipped"]
        verdict = min(decided, key=_PRIORITY.__getitem__) if decided else "inconclusive"
        object.__setattr__(self, "verdict", verdict)

    @property
    def decisive(self) -> PartOutcome:
        """The part that decided the verdict: the first contradicted, else inconclusive, else supported."""
        decided = [p for p in self.parts if p.verdict != "skipped"]
        return min(decided, key=lambda p: _PRIORITY[p.verdict])

    def message(self) -> str:
        lines = [
            f"{self.claim.id} on {self.model}: {self.verdict.upper()}",
            f"claim: {self.claim.statement}",
            f"units: {self.claim.units}",
        ]
        lines += [p.describe() for p in self.parts]
        return "\n".join(lines)


Reports = Callable[[str | None, str, str], Any]  # (model name or None for the model under test, kind, checkpoint)


def evaluate_claim(
    claim: Claim,
    model: str,
    anat: Anatomy,
    reports: Reports,
    *,
    seed: int = 0,
    n_boot: int = N_BOOT,
    skip_part: Callable[[Part], str | None] = lambda part: None,
) -> ClaimOutcome:
    """Bootstrap every part of ``claim`` that applies to ``anat``. ``reports(name, kind, checkpoint)`` gives
    the report a part reads: of the model under test (``name=None``) or of a named model of the profile;
    ``skip_part`` may give a reason to skip a part (e.g. a comparison across image sizes)."""
    outcomes = []
    for part in claim.parts:
        reason = part.applies(anat) or skip_part(part)
        if reason is not None:
            outcomes.append(PartOutcome(part, "skipped", reason=reason))
            continue
        try:
            est = _estimate(part, reports, claim.level, seed, n_boot)
        except NotApplicable as exc:
            outcomes.append(PartOutcome(part, "skipped", reason=str(exc)))
            continue
        if not all(map(math.isfinite, (est.value, est.low, est.high))):
            raise ModelPropsError(
                f"{claim.id} [{part.name}] on {model}: the statistic '{part.statistic_name}' is "
                f"undefined (NaN) on this model's measurement"
            )
        verdict = decide(est, part.direction, part.threshold)
        settle = samples_to_settle(est, part.threshold) if verdict == "inconclusive" else None
        outcomes.append(PartOutcome(part, verdict, est, samples_to_settle=settle))
    return ClaimOutcome(claim, model, tuple(outcomes))


def _estimate(part: Part, reports: Reports, level: float, seed: int, n_boot: int) -> Estimate:
    stat = part.statistic
    report = reports(part.subject, part.report, part.checkpoint)
    n = report.size(part.sampling)
    stat(report, np.arange(n))  # raises NotApplicable before any resampling when there is nothing to read
    if part.versus is None:
        return bootstrap(n, lambda i: stat(report, i), level=level, seed=seed, n_boot=n_boot)
    other = reports(part.versus, part.report, part.checkpoint)
    return bootstrap_two_sample(
        n,
        other.size(part.sampling),
        lambda i, j: stat(report, i) - stat(other, j),
        level=level,
        seed=seed,
        n_boot=n_boot,
    )
