"""Claim x evidence -> verdict, at either scope: a pure function of the :class:`~.evidence.Evidence`.

- **checkpoint** (:class:`~.evidence.OnReports`, :class:`~.evidence.OnLooks`): each part on one checkpoint's
  reports, a fixed sample or a sequential part at the look its gatherer stopped at (:mod:`.checkpoint`).
- **checkpoint, against a recipe's seeds** (:class:`~.evidence.AgainstSeeds`): the weights' own interval (as a
  one-model part's) gives their standard error, and Welch's interval compares them with the mean of the recipe's
  committed per-seed estimates (:mod:`.against_seeds`).
- **architecture** (:class:`~.evidence.PerSeed`): each part's per-seed estimates give a t interval over seeds; a
  comparison of two recipes of one study is paired by seed index (a t interval over the per-seed differences),
  one of groups that share nothing (a user's checkpoints against a reference's study seeds) gives Welch's.

Both then combine the parts (:func:`~.outcome.combine`: intersection-union for *supported*, Holm for
*contradicted*); a part that a claim of another paper disputes also carries that side's verdict, at the disputed
claim's own level and correction (:mod:`.disputed`). A part whose evidence is :class:`~.evidence.Skipped`, whose
statistic finds nothing to read (:class:`~model_props.errors.NotApplicable`), whose report has fewer sampling units
than the statistic needs (``Part.min_samples``), or whose statistic is undefined where the part says it may be
(``Part.undefined``) is skipped with the reason; any other NaN is an error. A measurement that does not vary (the
statistic is the same on every resample, or on every seed) is *degenerate*: the part says why (``Part.degenerate``)
instead of asking for more samples, whatever its verdict.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..claims.base import Claim, Part
from ..errors import NotApplicable
from .against_seeds import against_seeds
from .checkpoint import degenerate_reason, on_looks, on_reports, undefined_reason
from .disputed import disputed_side
from .evidence import AgainstSeeds, Evidence, OnLooks, OnReports, PerSeed, Skipped
from .live_check import Check
from .outcome import ClaimOutcome, PartOutcome, combine, measured
from .stats import MIN_SEEDS, N_BOOT, Estimate, paired_interval, t_interval, welch_interval

__all__ = ["judge", "TestVerdict"]


def _defined(values: Sequence[float | None]) -> int:
    return sum(v is not None and not math.isnan(v) for v in values)


def _against_seeds(part: Part, evidence: AgainstSeeds, level: float, seed: int, n_boot: int) -> PartOutcome:
    """The weights against a recipe's committed seeds (module docstring); skipped where the recipe has fewer than
    :data:`~.stats.MIN_SEEDS` seeds with a value."""
    defined = _defined(evidence.seeds)
    undefined = len(evidence.seeds) - defined
    where = f"on {undefined} of {len(evidence.seeds)} seeds of {evidence.recipe}"
    reason = undefined_reason(part, evidence.recipe, math.nan, where) if undefined else ""  # raises unless allowed
    if defined < MIN_SEEDS:
        needs = f"a comparison with a recipe's seeds needs at least {MIN_SEEDS} with a value; {evidence.recipe} has"
        return PartOutcome(part, "skipped", reason=f"{reason + '; ' if reason else ''}{needs} {defined}")
    own = on_reports(part, OnReports(evidence.weights), level, seed, n_boot)
    if own.estimate is None:  # skipped: too few samples, or undefined on the weights' sample
        return own
    n = evidence.weights.report.size(part.sampling)
    estimate = against_seeds(own.estimate, n, evidence.seeds, weights_first=evidence.weights_first, level=level)
    seeds = np.array([np.nan if v is None else v for v in evidence.seeds], dtype=float)
    flat = own.degenerate if degenerate_reason(part, seeds, "seed") else ""  # neither side varies
    found = measured(part, estimate, paired=False, seeds={evidence.recipe: list(evidence.seeds)}, degenerate=flat)
    note = (f"these weights ({own.estimate.value:.4g} over {n} {part.sampling}) against the mean of "
            f"{evidence.recipe}'s {defined} committed seeds ({np.nanmean(seeds):.4g}), which this run does not train")  # fmt: skip
    return dataclasses.replace(found, note=note)


def _seed_interval(evidence: PerSeed, level: float) -> Estimate:
    if evidence.versus is None:
        return t_interval(evidence.subject, level=level)
    if evidence.paired:
        return paired_interval(evidence.subject, evidence.versus, level=level)
    return welch_interval(evidence.subject, evidence.versus, level=level)


def _per_seed(part: Part, model: str, evidence: PerSeed, level: float) -> PartOutcome:
    groups = {evidence.subject_name: evidence.subject}
    if evidence.versus_name is not None and evidence.versus is not None:
        groups[evidence.versus_name] = evidence.versus
    undefined = {name: len(v) - _defined(v) for name, v in groups.items() if len(v) > _defined(v)}
    where = "on " + ", ".join(f"{n} of {len(groups[name])} seeds of {name}" for name, n in undefined.items())
    reason = undefined_reason(part, model, math.nan, where) if undefined else ""  # raises unless allowed
    usable = {name: _defined(v) for name, v in groups.items()}
    if evidence.paired and evidence.versus is not None:  # a paired difference needs both sides of a seed
        both = sum(a is not None and b is not None and not (math.isnan(a) or math.isnan(b))
                   for a, b in zip(evidence.subject, evidence.versus))  # fmt: skip
        usable = {"both models": both}
    short = {name: k for name, k in usable.items() if k < MIN_SEEDS}
    if short:
        needs = f"an architecture verdict needs at least {MIN_SEEDS} seeds with a value"
        got = ", ".join(f"{name} has {k}" for name, k in short.items())
        return PartOutcome(part, "skipped", reason=f"{reason + '; ' if reason else ''}{needs}; {got}")
    seeds = {name: list(v) for name, v in groups.items()}
    paired = evidence.paired if evidence.versus is not None else None
    per_seed = np.array([np.nan if v is None else v for v in evidence.subject], dtype=float)
    if evidence.versus is not None and evidence.paired:
        per_seed = per_seed - np.array([np.nan if v is None else v for v in evidence.versus], dtype=float)
    flat = degenerate_reason(part, per_seed, "seed") if evidence.versus is None or evidence.paired else ""
    return measured(part, _seed_interval(evidence, level), paired=paired, seeds=seeds, degenerate=flat)


def _with_disputed(claim: Claim, outcome: PartOutcome) -> PartOutcome:
    """The part's outcome with the disputed side of each of ``claim``'s disputes restated on it."""
    if outcome.estimate is None:
        return outcome
    sides = tuple(disputed_side(outcome.estimate, d) for d in claim.disputes if d.part == outcome.part.name)
    return dataclasses.replace(outcome, disputed=sides) if sides else outcome


def judge(evidence: Evidence, *, seed: int = 0, n_boot: int = N_BOOT) -> ClaimOutcome:
    """The claim's outcome on the evidence (module docstring): ``seed`` and ``n_boot`` drive the bootstrap of a
    checkpoint-scope part."""
    claim = evidence.claim
    outcomes = []
    for part in claim.parts:
        found = evidence.parts.get(part.name, Skipped("no evidence was gathered for it"))
        try:
            if isinstance(found, Skipped):
                outcomes.append(PartOutcome(part, "skipped", reason=found.reason))
            elif isinstance(found, OnReports):
                outcomes.append(on_reports(part, found, claim.level, seed, n_boot))
            elif isinstance(found, OnLooks):
                outcomes.append(on_looks(part, found, claim.level, seed, n_boot, len(claim.parts)))
            elif isinstance(found, AgainstSeeds):
                outcomes.append(_against_seeds(part, found, claim.level, seed, n_boot))
            else:
                outcomes.append(_per_seed(part, evidence.model, found, claim.level))
        except NotApplicable as exc:  # the statistic finds nothing to read in the report
            outcomes.append(PartOutcome(part, "skipped", reason=str(exc)))
    outcomes = [_with_disputed(claim, o) for o in outcomes]
    return combine(claim, evidence.model, evidence.scope, outcomes, evidence.seeds, evidence.expected)


@dataclass(frozen=True)
class TestVerdict:
    """A claim test's whole verdict: ``outcome``, the claim at its scope (a reference's from the seed study, with
    the snapshot's expectation and the live checks of its parts), and ``live``, this machine's weights judged at
    checkpoint scope beside a verdict from the study (None for a verdict about these weights or a user's
    checkpoints, and where every part of it reads a run this session does not train)."""

    __test__ = False  # not a pytest test class
    outcome: ClaimOutcome
    live: ClaimOutcome | None = None

    @classmethod
    def of(
        cls, outcome: ClaimOutcome, *, live: ClaimOutcome | None = None, checks: Sequence[Check] = ()
    ) -> TestVerdict:
        """The verdict of a test whose claim is judged ``outcome``; beside a verdict from the study, ``live`` and the
        live ``checks`` (would this session's live seed move a committed verdict?)."""
        if live is not None and all(p.verdict == "skipped" for p in live.parts):
            live = None
        return cls(dataclasses.replace(outcome, live_checks=tuple(checks)), live)

    @property
    def skip_reason(self) -> str | None:
        """Why the claim does not apply after all (no part measured at its scope, or no defining part)."""
        return self.outcome.skip_reason
