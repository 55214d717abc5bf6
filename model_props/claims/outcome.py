"""What a claim test found: per part a verdict, an interval and what it is about; per claim the combined verdict.

A part's verdict is its interval's (:func:`~.stats.decide`) with one correction: a part counts as contradicted
only when Holm's procedure across the claim's parts rejects it (:func:`combine`); a part whose interval
excludes the threshold on the wrong side but does not survive the correction is inconclusive, and says so.
A claim is **supported** when every applicable part is (intersection-union), **contradicted** when a part is
(after Holm), and **inconclusive** otherwise. Every message names the verdict's scope: *checkpoint* (these
weights; an interval over images or batches) or *architecture* (a recipe over k seeds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .base import Claim, Part
from .stats import (
    Estimate,
    Scope,
    Verdict,
    contradiction_p,
    decide,
    effect_origin,
    holm,
    samples_to_settle,
    settle_point,
    standardized_effect,
)  # fmt: skip

__all__ = ["ClaimContradicted", "PartVerdict", "PartOutcome", "ClaimOutcome", "combine", "measured"]

PartVerdict = Verdict | Literal["skipped"]
_PRIORITY = {"contradicted": 0, "inconclusive": 1, "supported": 2}
SCOPES: dict[str, str] = {
    "checkpoint": "about these weights (one checkpoint; interval over {sampling})",
    "architecture": "about the architecture (its recipe over {k} training seeds; interval over seeds)",
}


class ClaimContradicted(AssertionError):
    """A claim test whose claim is contradicted: the only failure a known failure's ``xfail(raises=...)`` expects,
    so that a crash, a NaN or a shape error in such a test still surfaces as an error."""


class ExpectationMoved(AssertionError):
    """A claim test where a part's verdict over all the study's seeds differs from the expectation its setting
    seeds pre-registered: the held-out seeds did not confirm it. Where the committed study already shows this,
    the test is a strict ``xfail(raises=ExpectationMoved)``: reported, never hidden, and a crash is an error."""


@dataclass(frozen=True)
class PartOutcome:
    part: Part
    verdict: PartVerdict
    estimate: Estimate | None = None
    reason: str = ""
    p_contradiction: float | None = None  # one-sided, before Holm's correction
    paired: bool | None = None  # checkpoint scope: both models measured on the same samples
    seeds: Mapping[str, Sequence[float | None]] | None = None  # architecture scope: per-seed estimates per model
    note: str = ""

    @property
    def sampling(self) -> str:
        if self.estimate is not None and self.estimate.t is not None:
            return "seeds"
        return f"paired {self.part.sampling}" if self.paired else self.part.sampling

    @property
    def samples_to_settle(self) -> int | None:
        if self.verdict != "inconclusive" or self.estimate is None:
            return None
        p = self.part
        return samples_to_settle(self.estimate, settle_point(self.estimate, p.direction, p.threshold))

    def describe(self) -> str:
        p = self.part
        if self.estimate is None:
            return f"[{p.name}] skipped: {self.reason}"
        e = self.estimate
        n = f"{e.n} and {e.n_versus}" if e.n_versus is not None else f"{e.n}"
        text = (
            f"[{p.name}] {self.verdict}: {p.rule}; measured {e.value:.4g}, {e.level:.0%} CI [{e.low:.4g}, "
            f"{e.high:.4g}] over {n} {self.sampling} ({e.method}), effect size d = "
            f"{standardized_effect(e, effect_origin(p.direction, p.threshold)):.2f}"
        )
        if e.dropped:
            text += f"; {e.dropped} {'seeds' if e.t else 'resamples'} dropped where it is undefined ({p.undefined})"
        if self.note:
            text += f"; {self.note}"
        if self.verdict == "inconclusive":
            more = self.samples_to_settle
            text += "; would likely be settled by " + (
                f"about {more} {'seeds' if e.t else p.sampling}"
                if more
                else "no sample size (it sits on the threshold)"
            )
        return text

    def to_json(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "part": self.part.name,
            "statistic": self.part.statistic_name,
            "rule": self.part.rule,
            "verdict": self.verdict,
            "reason": self.reason,
            "note": self.note,
            "subject": self.part.subject,
            "versus": self.part.versus,
            "checkpoint": self.part.checkpoint,
            "value": e.value if e else None,
            "interval": list(e.interval) if e else None,
            "level": e.level if e else None,
            "method": e.method if e else None,
            "n": e.n if e else None,
            "n_versus": e.n_versus if e else None,
            "dropped": e.dropped if e else None,
            "sampling": self.sampling if e else self.part.sampling,
            "paired": self.paired,
            "p_contradiction": self.p_contradiction,
            "effect_size": standardized_effect(e, effect_origin(self.part.direction, self.part.threshold))
            if e
            else None,
            "samples_to_settle": self.samples_to_settle,
            "per_seed": {k: list(v) for k, v in self.seeds.items()} if self.seeds else None,
        }


@dataclass(frozen=True)
class ClaimOutcome:
    claim: Claim
    model: str
    scope: Scope
    parts: tuple[PartOutcome, ...]
    seeds: tuple[int, ...] | None = None  # architecture scope: the training seeds
    expected: Mapping[str, PartVerdict] | None = None  # per part, what the seed study expects (None: no study)
    verdict: Verdict = field(init=False)

    def __post_init__(self) -> None:
        decided = [p.verdict for p in self.parts if p.verdict != "skipped"]
        verdict = min(decided, key=_PRIORITY.__getitem__) if decided else "inconclusive"
        object.__setattr__(self, "verdict", verdict)

    @property
    def skip_reason(self) -> str | None:
        """Why the claim does not apply after all: no part could be measured, or a defining part could not."""
        skipped = {p.part.name: p.reason for p in self.parts if p.verdict == "skipped"}
        if len(skipped) == len(self.parts):
            return "; ".join(f"[{name}] {why}" for name, why in skipped.items())
        return self.claim.undefined_by(skipped)

    @property
    def decisive(self) -> PartOutcome:
        """The part that decided the verdict: the first contradicted, else inconclusive, else supported."""
        decided = [p for p in self.parts if p.verdict != "skipped"]
        return min(decided, key=lambda p: _PRIORITY[p.verdict])

    @property
    def about(self) -> str:
        sampling = ", ".join(sorted({p.sampling for p in self.parts if p.estimate is not None})) or "samples"
        return SCOPES[self.scope].format(sampling=sampling, k=len(self.seeds or ()))

    def moved(self) -> list[tuple[PartOutcome, PartVerdict]]:
        """The parts whose verdict differs from the one expected of them, each with that expected verdict (parts
        expected skipped, or without an expectation, never move)."""
        expected = self.expected or {}
        return [
            (p, want)
            for p in self.parts
            if (want := expected.get(p.part.name, "skipped")) not in ("skipped", p.verdict)
        ]

    def assert_expected(self) -> None:
        """What a claim test asserts. Without an expectation the claim must be supported (a contradiction raises
        :class:`ClaimContradicted`, an inconclusive verdict fails). With one, every part must have its expected
        verdict: expected supported stays supported, expected inconclusive stays inconclusive (the test passes,
        reported as inconclusive), expected contradicted stays contradicted, and then :class:`ClaimContradicted`
        is raised (a known failure's strict ``xfail(raises=ClaimContradicted)`` expects exactly that). Any part
        whose verdict moved fails the test with :class:`ExpectationMoved`: the expectation is out of date."""
        if self.expected is None:
            if self.verdict == "supported":
                return
            raise (ClaimContradicted if self.verdict == "contradicted" else AssertionError)(self.message())
        if moved := [f"[{p.part.name}] expected {want}, now {p.verdict}" for p, want in self.moved()]:
            raise ExpectationMoved(
                f"{'; '.join(moved)}: the seed study's expectation no longer holds\n{self.message()}"
            )
        if self.verdict == "contradicted":
            raise ClaimContradicted(self.message())

    def message(self) -> str:
        lines = [
            f"{self.claim.id} on {self.model}: {self.verdict.upper()}, {self.about}",
            f"claim: {self.claim.statement}",
            f"units: {self.claim.units}",
        ]
        return "\n".join(lines + [p.describe() for p in self.parts])


def measured(part: Part, estimate: Estimate, *, paired: bool | None = None, seeds=None) -> PartOutcome:
    """A measured part before Holm's correction: its interval's verdict and its contradiction p-value."""
    return PartOutcome(
        part, decide(estimate, part.direction, part.threshold), estimate, "",
        contradiction_p(estimate, part.direction, part.threshold), paired, seeds,
    )  # fmt: skip


def combine(
    claim: Claim, model: str, scope: Scope, parts: Sequence[PartOutcome], seeds: Sequence[int] | None = None
) -> ClaimOutcome:
    """Holm's procedure across the measured parts at level (1 - confidence) / 2, one-sided: a part stays
    contradicted only where it rejects (module docstring)."""
    decided = [i for i, p in enumerate(parts) if p.p_contradiction is not None]
    rejected = holm([parts[i].p_contradiction or 0.0 for i in decided], (1.0 - claim.level) / 2)
    final = list(parts)
    for i, reject in zip(decided, rejected):
        if parts[i].verdict == "contradicted" and not reject:
            m = len(decided)
            note = f"contradicted before Holm's correction across {m} parts (p = {parts[i].p_contradiction:.3g})"
            final[i] = dataclasses.replace(parts[i], verdict="inconclusive", note=note)
    return ClaimOutcome(claim, model, scope, tuple(final), tuple(seeds) if seeds is not None else None)
