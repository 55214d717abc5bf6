"""What a claim test found: per part a verdict, an interval and what it is about; per claim the combined verdict,
and what the test makes of it.

A part's verdict is its interval's (:func:`~.stats.decide`) with one correction: a part counts as contradicted
only when Holm's procedure across the claim's parts rejects it (:func:`combine`); a part whose interval
excludes the threshold on the wrong side but does not survive the correction is inconclusive, and says so.
A claim is **supported** when every applicable part is (intersection-union), **contradicted** when a part is
(after Holm), and **inconclusive** otherwise. Every message names the verdict's scope: *checkpoint* (these
weights; an interval over images or batches) or *architecture* (a recipe over k seeds).

What a test asserts (:meth:`ClaimOutcome.assert_expected`): with an :class:`Expected` (the reviewed expectation
snapshot of a reference), every part's verdict must equal its entry; without one (a user's model), the claim must
be supported. An inconclusive claim is its own outcome, never a pass. A reference's outcome also carries the live
checks of its parts (:func:`~.reproduction.claim_checks`: would this run's live seed move a committed verdict?); one
that fails raises :class:`LiveCheckFailed`, which no known failure's ``xfail(raises=ClaimContradicted)`` expects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..claims.base import Claim, Part
from .disputed import DisputedSide
from .effects import minimum_detectable_effect, samples_to_settle, standardized_effect
from .live_check import Check
from .stats import Estimate, Scope, Verdict, contradiction_p, decide, effect_origin, holm, settle_point

__all__ = [
    "ClaimContradicted", "ClaimInconclusive", "ExpectationMismatch", "LiveCheckFailed", "Expected", "PartVerdict", "PartOutcome",
    "ClaimOutcome", "Inconclusive", "TestOutcome", "combine", "measured",
]  # fmt: skip

PartVerdict = Verdict | Literal["skipped"]
TestOutcome = Literal["passed", "inconclusive"]  # what a claim test that raised nothing found
Inconclusive = Literal["fail", "report"]  # what an inconclusive claim without an expectation does to its test
_PRIORITY = {"contradicted": 0, "inconclusive": 1, "supported": 2}
ABOUT: dict[str, str] = {
    "checkpoint": "about these weights (one checkpoint; interval over {sampling})",
    "architecture": "about the architecture (its recipe over {k} training seeds; interval over seeds)",
}


class ClaimContradicted(AssertionError):
    """A claim test whose claim is contradicted: the only failure a known failure's ``xfail(raises=...)`` expects,
    so that a crash, a NaN or a shape error in such a test still surfaces as an error."""


class ExpectationMismatch(AssertionError):
    """A claim test where a part's verdict differs from its entry in the reviewed expectation snapshot: the evidence
    no longer says what was expected. Changing the snapshot is an explicit, reviewed step (its update command)."""


class LiveCheckFailed(AssertionError):
    """A reference's claim test whose live seed would move a committed verdict: a live check of one of its parts
    fails (:func:`~.reproduction.claim_checks`). Not a :class:`ClaimContradicted`, so that a known failure's strict
    xfail does not swallow it."""


class ClaimInconclusive(AssertionError):
    """A claim test on a model without an expectation (a user's model) whose claim is inconclusive, where
    ``--claims-inconclusive fail`` (the default) asks for a verdict."""


@dataclass(frozen=True)
class Expected:
    """A claim's expected verdict per part on one model, from the expectation snapshot (``source``), and the
    command that rewrites the snapshot from the current study (``update``)."""

    parts: Mapping[str, PartVerdict]
    source: str
    update: str


@dataclass(frozen=True)
class PartOutcome:
    part: Part
    verdict: PartVerdict
    estimate: Estimate | None = None
    reason: str = ""
    p_contradiction: float | None = None  # one-sided, before Holm's correction
    paired: bool | None = None  # both models measured on the same samples (checkpoint) or seed indices (architecture)
    seeds: Mapping[str, Sequence[float | None]] | None = None  # architecture scope: per-seed estimates per model
    note: str = ""
    degenerate: str = ""  # why the measurement does not vary (the same value on every resample or seed), if it does not
    sample: int | None = None  # a sequential part: its rule's whole sample (``estimate.n``: the units it used)
    disputed: tuple[DisputedSide, ...] = ()  # the claims of other papers restated on it (:mod:`.disputed`)

    @property
    def sampling(self) -> str:
        if self.seeds is not None:  # architecture scope: over training seeds (a jackknife t over images is not)
            return "paired seeds" if self.paired else "seeds"
        return f"paired {self.part.sampling}" if self.paired else self.part.sampling

    @property
    def samples_to_settle(self) -> int | None:
        if self.verdict != "inconclusive" or self.estimate is None or self.degenerate:
            return None
        p = self.part
        return samples_to_settle(self.estimate, settle_point(self.estimate, p.direction, p.threshold))

    @property
    def minimum_detectable_effect(self) -> float | None:
        """For an inconclusive part: the distance from the threshold (or the margin's end) that this design decides
        with 80 % power (:func:`~.stats.minimum_detectable_effect`)."""
        if self.verdict != "inconclusive" or self.estimate is None or self.degenerate:
            return None
        return minimum_detectable_effect(self.estimate)

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
        if self.degenerate:
            return text + (f"; DEGENERATE: {self.degenerate}, so the interval is a point and no sample size or "
                           "number of seeds would tell more")  # fmt: skip
        if self.verdict == "inconclusive":
            more, mde = self.samples_to_settle, self.minimum_detectable_effect
            gap = abs(e.value - settle_point(e, p.direction, p.threshold))
            text += (
                f"; this design detects an effect {mde:.3g} from {settle_point(e, p.direction, p.threshold):g} with "
                f"80 % power (minimum detectable effect; the estimate is {gap:.3g} from it); would likely be settled "
                "by " + (
                    f"about {more} {'seeds' if e.t else p.sampling} (a plan for the next study: re-judging after "
                    f"adding {'seeds' if e.t else 'samples'} to this one is a second look at the same data, which "
                    "keeps the level only when the looks are corrected for)" if more
                    else "no sample size (it sits on the threshold)"
                )
            )  # fmt: skip
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
            "sample": self.sample,
            "n_versus": e.n_versus if e else None,
            "dropped": e.dropped if e else None,
            "sampling": self.sampling if e else self.part.sampling,
            "paired": self.paired,
            "p_contradiction": self.p_contradiction,
            "effect_size": standardized_effect(e, effect_origin(self.part.direction, self.part.threshold))
            if e
            else None,
            "samples_to_settle": self.samples_to_settle,
            "minimum_detectable_effect": self.minimum_detectable_effect,
            "degenerate": self.degenerate or None,
            "per_seed": {k: list(v) for k, v in self.seeds.items()} if self.seeds else None,
            "disputed": [dataclasses.asdict(side) for side in self.disputed],
        }


@dataclass(frozen=True)
class ClaimOutcome:
    claim: Claim
    model: str
    scope: Scope
    parts: tuple[PartOutcome, ...]
    seeds: tuple[int, ...] | None = None  # architecture scope: the training seeds
    expected: Expected | None = None  # the snapshot's verdict per part (a reference), None for a user's model
    live_checks: tuple[Check, ...] = ()  # a reference's: its parts' live estimates against the study
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
        return ABOUT[self.scope].format(sampling=sampling, k=len(self.seeds or ()))

    def mismatches(self) -> list[tuple[PartOutcome, PartVerdict | None]]:
        """The parts whose verdict differs from their snapshot entry, each with that entry (None: the snapshot has
        no entry for the part); empty without an expectation."""
        if self.expected is None:
            return []
        return [(p, want) for p in self.parts if (want := self.expected.parts.get(p.part.name)) != p.verdict]

    def assert_expected(self, inconclusive: Inconclusive = "fail") -> TestOutcome:
        """What a claim test asserts, and what it found when it raises nothing.

        With an expectation, every part must have its snapshot verdict, else :class:`ExpectationMismatch` names
        each differing part, both verdicts, its estimate and interval, and the update command; a failed live check
        then raises :class:`LiveCheckFailed` naming it. When every part matches and no live check fails, a
        contradicted claim raises :class:`ClaimContradicted` (what a known failure's strict
        ``xfail(raises=ClaimContradicted)`` expects), an inconclusive one is ``"inconclusive"`` and a supported
        one ``"passed"``. Without an expectation the claim must be supported: contradicted raises
        :class:`ClaimContradicted`, inconclusive raises :class:`ClaimInconclusive` unless ``inconclusive`` is
        ``"report"`` (then ``"inconclusive"``)."""
        if self.expected is not None:
            if differ := self.mismatches():
                lines = [
                    f"[{p.part.name}] expected {want or 'no entry'}, now {p.verdict}: {p.describe()}"
                    for p, want in differ
                ]
                raise ExpectationMismatch(
                    f"{self.claim.id} on {self.model}: {len(differ)} part(s) differ from the expectation snapshot "
                    f"{self.expected.source}:\n" + "\n".join(lines) + f"\nIf the change is intended, rewrite the "
                    f"snapshot from the current study and review its diff: {self.expected.update}\n{self.message()}"
                )
            if failed := [c for c in self.live_checks if c.failed]:
                raise LiveCheckFailed(
                    f"{self.claim.id} on {self.model}: the live seed would move a committed verdict, {len(failed)} "
                    f"live check(s) fail:\n" + "\n".join(c.describe() for c in failed) + f"\n{self.message()}"
                )
        elif self.verdict == "inconclusive" and inconclusive == "fail":
            raise ClaimInconclusive(
                f"{self.message()}\n(an inconclusive claim fails a model without an expectation; "
                "--claims-inconclusive report reports it as its own outcome instead)"
            )
        if self.verdict == "contradicted":
            raise ClaimContradicted(self.message())
        return "inconclusive" if self.verdict == "inconclusive" else "passed"

    def message(self) -> str:
        lines = [
            f"{self.claim.id} on {self.model}: {self.verdict.upper()}, {self.about}",
            f"claim: {self.claim.statement}",
            f"units: {self.claim.units}",
        ]
        live = [f"live check: {c.describe()}" for c in self.live_checks]
        return "\n".join(lines + [p.describe() for p in self.parts] + live)


def measured(part: Part, estimate: Estimate, *, paired: bool | None = None, seeds=None,
             degenerate: str = "") -> PartOutcome:  # fmt: skip
    """A measured part before Holm's correction: its interval's verdict and its contradiction p-value."""
    return PartOutcome(
        part, decide(estimate, part.direction, part.threshold), estimate, "",
        contradiction_p(estimate, part.direction, part.threshold), paired, seeds, degenerate=degenerate,
    )  # fmt: skip


def combine(
    claim: Claim, model: str, scope: Scope, parts: Sequence[PartOutcome], seeds: Sequence[int] | None = None,
    expected: Expected | None = None,
) -> ClaimOutcome:  # fmt: skip
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
    return ClaimOutcome(claim, model, scope, tuple(final), tuple(seeds) if seeds is not None else None, expected)
