"""Claim x evidence -> verdict, at either scope: a pure function of the :class:`~.evidence.Evidence`.

- **checkpoint** (:class:`~.evidence.OnReports`): each part's statistic is bootstrapped over its report's sampling
  units, every resample in one vectorised call; a comparison of two models measured on the same samples (equal
  sample identities) is bootstrapped paired, otherwise as two samples. Below 30 units (16 CKA mini-batches) the
  interval is the jackknife t's instead, the percentile bootstrap being too narrow there (:mod:`.small_sample`).
- **checkpoint, sequential** (:class:`~.evidence.OnLooks`): the same bootstrap on the first n_k sampling units at
  each look k of a group-sequential design (:mod:`.sequential`); the part stops at the first look whose repeated
  interval, estimate +- c_k standard errors, decides it (an equivalence: inside the margin, or wholly outside it),
  and carries the repeated p-value to Holm. The gatherer measures the looks: :func:`look_sizes` gives the design's
  sample sizes, and :func:`next_look`, by the rule the judge applies, the next look a part needs (none once a look
  decides it or at the last); the judge refuses a part left undecided before its last look. The standard error is the bootstrap's scaled by sqrt(n_k / (n_k - 1)):
  the bootstrap variance of a mean is the plug-in (n - 1) / n of the t variance s^2 / n that c_k is carried to
  (Efron & Tibshirani 1993, Ch. 5), which at 4 Hessian batches a look would leave the rule liberal.
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
from ..errors import ModelPropsError, NotApplicable
from .against_seeds import against_seeds
from .disputed import disputed_side
from .evidence import AgainstSeeds, Evidence, Measured, OnLooks, OnReports, PerSeed, Skipped, point_value
from .live_check import Check
from .outcome import ClaimOutcome, PartOutcome, combine, measured
from .sequential import Design, critical_t, design, repeated_p
from .small_sample import one_sample, two_sample
from .stats import (
    MIN_SEEDS,
    N_BOOT,
    Estimate,
    Repeated,
    decide,
    paired_interval,
    t_interval,
    welch_interval,
)  # fmt: skip

__all__ = ["judge", "look_sizes", "next_look", "TestVerdict"]


def _undefined(part: Part, model: str, value: float, where: str) -> str:
    """The skip reason of a statistic that is undefined (NaN) where the part allows it; an error elsewhere."""
    if not part.undefined:
        raise ModelPropsError(
            f"[{part.name}] on {model}: the statistic '{part.statistic_name}' is undefined ({value}) {where}"
        )
    return f"'{part.statistic_name}' is undefined {where}: {part.undefined}"


def _degenerate(part: Part, values: np.ndarray | None, over: str) -> str:
    """Why the part's measurement does not vary, where its values over resamples or seeds are all one number."""
    if values is None:
        return ""
    values = values[np.isfinite(values)]
    if len(values) < 2 or np.ptp(values) > 0:
        return ""
    return part.degenerate or f"the statistic is {values[0]:.4g} on every {over}: its measurement does not vary"


def _too_few(part: Part, measured: Measured) -> str | None:
    n = measured.report.size(part.sampling)
    if n >= part.min_samples:
        return None
    return (f"'{part.statistic_name}' needs at least {part.min_samples} {part.sampling} of {measured.name}, and its "
            f"report has {n}")  # fmt: skip


def _on_reports(part: Part, evidence: OnReports, level: float, seed: int, n_boot: int, *,
                jackknife: bool = True) -> PartOutcome:  # fmt: skip
    """A fixed-sample part: below :data:`~.small_sample.SMALL_SAMPLE` units a jackknife t interval (where
    ``jackknife``: not a sequential look), else the percentile bootstrap (:mod:`.small_sample`)."""
    stat, subject, other = part.statistic, evidence.subject, evidence.versus
    if (few := _too_few(part, subject) or (_too_few(part, other) if other else None)) is not None:
        return PartOutcome(part, "skipped", reason=few)
    n = subject.report.size(part.sampling)
    value = point_value(part, subject.report)  # raises NotApplicable before any resampling
    if math.isnan(value):
        return PartOutcome(part, "skipped", reason=_undefined(part, subject.name, value, "on its sample"))
    if other is None:
        one = one_sample(n, lambda i: stat(subject.report, i), level=level, seed=seed, n_boot=n_boot,
                         jackknife=jackknife)  # fmt: skip
        return measured(part, one, degenerate=_degenerate(part, one.replicates, f"resample of its {part.sampling}"))
    if math.isnan(point_value(part, other.report)):
        return PartOutcome(part, "skipped", reason=_undefined(part, other.name, math.nan, f"on {other.name}"))
    m = other.report.size(part.sampling)
    if subject.samples == other.samples and n == m:
        diff = one_sample(n, lambda i: stat(subject.report, i) - stat(other.report, i), level=level, seed=seed,
                          n_boot=n_boot, paired=True, jackknife=jackknife)  # fmt: skip
        return measured(part, diff, paired=True,
                        degenerate=_degenerate(part, diff.replicates, f"resample of its {part.sampling}"))  # fmt: skip
    two = two_sample(n, m, lambda i, j: stat(subject.report, i) - stat(other.report, j), level=level, seed=seed,
                     n_boot=n_boot, jackknife=jackknife)  # fmt: skip
    return measured(part, two, paired=False,
                    degenerate=_degenerate(part, two.replicates, f"resample of its {part.sampling}"))  # fmt: skip


def _at_look(part: Part, reports: OnReports, k: int, d: Design, level: float, seed: int, n_boot: int,
             parts: int) -> PartOutcome:  # fmt: skip
    """The part at look ``k`` of design ``d``, on reports of its first ``d.sizes[k]`` units (module docstring);
    ``parts``: the claim's part count, which bounds the Holm levels the repeated p-value is rounded up to."""
    n, c = d.sizes[k], float(critical_t(d)[k])
    # a look's interval is built on its bootstrap's (scaled) standard error, never a jackknife's
    fixed = _on_reports(part, reports, level, seed, n_boot, jackknife=False)
    if fixed.estimate is None:  # skipped: undefined, or too few samples
        return fixed
    e = fixed.estimate
    se = e.standard_error * math.sqrt(n / (n - 1))  # the t standard error (module docstring)
    at_look = dataclasses.replace(e, low=e.value - c * se, high=e.value + c * se,
                                  method=f"repeated interval of the {e.method}'s standard error",
                                  repeated=Repeated(se, c, k, d.sizes))  # fmt: skip
    verdict = decide(at_look, part.direction, part.threshold)
    gap = {"greater": part.threshold - e.value, "less": e.value - part.threshold,  # > 0: on the contradicting side
           "within": abs(e.value) - abs(part.threshold)}[part.direction]  # fmt: skip
    far = gap / se if se else math.copysign(math.inf, gap) if gap else 0.0
    p = repeated_p(d, k, far, [(1.0 - level) / 2 / j for j in range(1, parts + 1)])
    note = (f"sequential: {'decided' if verdict != 'inconclusive' else 'undecided'} at look {k + 1} of "
            f"{len(d.sizes)}, on {n} of {d.sizes[-1]} {part.sampling} (O'Brien-Fleming spending)")  # fmt: skip
    return dataclasses.replace(fixed, verdict=verdict, estimate=at_look, p_contradiction=p, note=note,
                               sample=d.sizes[-1])  # fmt: skip


def look_sizes(claim: Claim, size: int) -> tuple[int, ...]:
    """The sample sizes of a sequential part's looks over ``size`` sampling units: its group-sequential design at
    the claim's level (:func:`~.sequential.design`), the last look on all of them."""
    return tuple(design(size, alpha=1.0 - claim.level).sizes)


def next_look(claim: Claim, part: Part, looks: OnLooks, *, seed: int = 0, n_boot: int = N_BOOT) -> int | None:
    """The sample size of the look the gatherer measures next for ``part``, given its reports at look
    ``looks.look``; None where that look decides the part (or skips it) or is its design's last, by the rule
    :func:`judge` applies. ``seed`` and ``n_boot`` are the judge's, so that both read the same interval. A
    statistic that finds nothing to read raises :class:`~model_props.errors.NotApplicable`, as in the judge."""
    d = design(looks.size, alpha=1.0 - claim.level)
    if looks.look == len(d.sizes) - 1:
        return None
    outcome = _at_look(part, looks.reports, looks.look, d, claim.level, seed, n_boot, len(claim.parts))
    return d.sizes[looks.look + 1] if outcome.estimate is not None and outcome.verdict == "inconclusive" else None


def _on_looks(part: Part, evidence: OnLooks, level: float, seed: int, n_boot: int, parts: int) -> PartOutcome:
    """The part at the look its gatherer stopped at (:func:`next_look` asked for no other); an undecided look
    before the last is an error, as is a report of another size than the look's: the rule reads on to the next
    look."""
    d = design(evidence.size, alpha=1.0 - level)
    sizes = {m.report.size(part.sampling) for m in (evidence.reports.subject, evidence.reports.versus) if m}
    if sizes != {d.sizes[evidence.look]}:
        raise ValueError(f"[{part.name}] look {evidence.look + 1} reads {d.sizes[evidence.look]} {part.sampling}, "
                         f"and its reports have {sorted(sizes)}")  # fmt: skip
    outcome = _at_look(part, evidence.reports, evidence.look, d, level, seed, n_boot, parts)
    if outcome.estimate is not None and outcome.verdict == "inconclusive" and evidence.look < len(d.sizes) - 1:
        raise ValueError(f"[{part.name}] undecided at look {evidence.look + 1} of {len(d.sizes)}: the sequential "
                         "rule reads on to the next look")  # fmt: skip
    return outcome


def _defined(values: Sequence[float | None]) -> int:
    return sum(v is not None and not math.isnan(v) for v in values)


def _against_seeds(part: Part, evidence: AgainstSeeds, level: float, seed: int, n_boot: int) -> PartOutcome:
    """The weights against a recipe's committed seeds (module docstring); skipped where the recipe has fewer than
    :data:`~.stats.MIN_SEEDS` seeds with a value."""
    defined = _defined(evidence.seeds)
    undefined = len(evidence.seeds) - defined
    where = f"on {undefined} of {len(evidence.seeds)} seeds of {evidence.recipe}"
    reason = _undefined(part, evidence.recipe, math.nan, where) if undefined else ""  # raises unless allowed
    if defined < MIN_SEEDS:
        needs = f"a comparison with a recipe's seeds needs at least {MIN_SEEDS} with a value; {evidence.recipe} has"
        return PartOutcome(part, "skipped", reason=f"{reason + '; ' if reason else ''}{needs} {defined}")
    own = _on_reports(part, OnReports(evidence.weights), level, seed, n_boot)
    if own.estimate is None:  # skipped: too few samples, or undefined on the weights' sample
        return own
    n = evidence.weights.report.size(part.sampling)
    estimate = against_seeds(own.estimate, n, evidence.seeds, weights_first=evidence.weights_first, level=level)
    seeds = np.array([np.nan if v is None else v for v in evidence.seeds], dtype=float)
    flat = own.degenerate if _degenerate(part, seeds, "seed") else ""  # neither side varies
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
    reason = _undefined(part, model, math.nan, where) if undefined else ""  # raises unless allowed
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
    flat = _degenerate(part, per_seed, "seed") if evidence.versus is None or evidence.paired else ""
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
                outcomes.append(_on_reports(part, found, claim.level, seed, n_boot))
            elif isinstance(found, OnLooks):
                outcomes.append(_on_looks(part, found, claim.level, seed, n_boot, len(claim.parts)))
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
