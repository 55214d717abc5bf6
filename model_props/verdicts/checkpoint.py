"""A part judged on one checkpoint's reports (the checkpoint scope of :func:`~.judge.judge`), and the loop that
gathers a sequential part's looks.

- **fixed sample** (:class:`~.evidence.OnReports`): the part's statistic is bootstrapped over its report's sampling
  units, every resample in one vectorised call; a comparison of two models measured on the same samples (equal
  sample identities) is bootstrapped paired, otherwise as two samples. Below 30 units (16 CKA mini-batches) the
  interval is the jackknife t's instead, the percentile bootstrap being too narrow there (:mod:`.small_sample`).
- **sequential** (:class:`~.evidence.OnLooks`): the same bootstrap on the first n_k sampling units at each look k of
  a group-sequential design (:mod:`.sequential`); the part stops at the first look whose repeated interval,
  estimate +- c_k standard errors, decides it (an equivalence: inside the margin, or wholly outside it), and carries
  the repeated p-value to Holm. The standard error is the bootstrap's scaled by sqrt(n_k / (n_k - 1)) to the t
  standard error that c_k is carried to (:meth:`~.stats.Estimate.at_look`, which the gate's tolerances call too).
- **the gatherer's loop** (:func:`gather_looks`): the gatherer, not the evidence, measures the looks. It measures
  each model's prefix at the design's sample sizes (:func:`look_sizes`) while :func:`next_look`, by the rule the
  judge applies, asks for another (none once a look decides the part, or at the last); the judge refuses a part left
  undecided before its last look. The evidence it returns is plain data.

A statistic that finds nothing to read raises :class:`~model_props.errors.NotApplicable`; one that is undefined
(NaN) where the part allows it skips the part with :func:`undefined_reason`, and any other NaN is an error.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from ..claims.base import Claim, Part
from ..errors import ModelPropsError
from .evidence import Measured, OnLooks, OnReports, point_value
from .outcome import PartOutcome, measured
from .sequential import Design, critical_t, design, repeated_p
from .small_sample import one_sample, two_sample
from .stats import N_BOOT, decide

__all__ = ["on_reports", "on_looks", "look_sizes", "next_look", "gather_looks", "undefined_reason",
           "degenerate_reason"]  # fmt: skip


def undefined_reason(part: Part, model: str, value: float, where: str) -> str:
    """The skip reason of a statistic that is undefined (NaN) where the part allows it; an error elsewhere."""
    if not part.undefined:
        raise ModelPropsError(
            f"[{part.name}] on {model}: the statistic '{part.statistic_name}' is undefined ({value}) {where}"
        )
    return f"'{part.statistic_name}' is undefined {where}: {part.undefined}"


def degenerate_reason(part: Part, values: np.ndarray | None, over: str) -> str:
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


def on_reports(part: Part, evidence: OnReports, level: float, seed: int, n_boot: int, *,
                jackknife: bool = True) -> PartOutcome:  # fmt: skip
    """A fixed-sample part: below :data:`~.small_sample.SMALL_SAMPLE` units a jackknife t interval (where
    ``jackknife``: not a sequential look), else the percentile bootstrap (:mod:`.small_sample`)."""
    stat, subject, other = part.statistic, evidence.subject, evidence.versus
    if (few := _too_few(part, subject) or (_too_few(part, other) if other else None)) is not None:
        return PartOutcome(part, "skipped", reason=few)
    n = subject.report.size(part.sampling)
    value = point_value(part, subject.report)  # raises NotApplicable before any resampling
    if math.isnan(value):
        return PartOutcome(part, "skipped", reason=undefined_reason(part, subject.name, value, "on its sample"))
    if other is None:
        one = one_sample(n, lambda i: stat(subject.report, i), level=level, seed=seed, n_boot=n_boot,
                         jackknife=jackknife)  # fmt: skip
        return measured(
            part, one, degenerate=degenerate_reason(part, one.replicates, f"resample of its {part.sampling}")
        )
    if math.isnan(point_value(part, other.report)):
        return PartOutcome(part, "skipped", reason=undefined_reason(part, other.name, math.nan, f"on {other.name}"))
    m = other.report.size(part.sampling)
    if subject.samples == other.samples and n == m:
        diff = one_sample(n, lambda i: stat(subject.report, i) - stat(other.report, i), level=level, seed=seed,
                          n_boot=n_boot, paired=True, jackknife=jackknife)  # fmt: skip
        flat = degenerate_reason(part, diff.replicates, f"resample of its {part.sampling}")
        return measured(part, diff, paired=True, degenerate=flat)
    two = two_sample(n, m, lambda i, j: stat(subject.report, i) - stat(other.report, j), level=level, seed=seed,
                     n_boot=n_boot, jackknife=jackknife)  # fmt: skip
    return measured(part, two, paired=False,
                    degenerate=degenerate_reason(part, two.replicates, f"resample of its {part.sampling}"))  # fmt: skip


def _at_look(part: Part, reports: OnReports, k: int, d: Design, level: float, seed: int, n_boot: int,
             parts: int) -> PartOutcome:  # fmt: skip
    """The part at look ``k`` of design ``d``, on reports of its first ``d.sizes[k]`` units (module docstring);
    ``parts``: the claim's part count, which bounds the Holm levels the repeated p-value is rounded up to."""
    n, c = d.sizes[k], float(critical_t(d)[k])
    # a look's interval is built on its bootstrap's (scaled) standard error, never a jackknife's
    fixed = on_reports(part, reports, level, seed, n_boot, jackknife=False)
    if fixed.estimate is None:  # skipped: undefined, or too few samples
        return fixed
    e = fixed.estimate
    at_look = e.at_look(c, k, d.sizes)
    se = at_look.standard_error
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
    :func:`~.judge.judge` applies. ``seed`` and ``n_boot`` are the judge's, so that both read the same interval. A
    statistic that finds nothing to read raises :class:`~model_props.errors.NotApplicable`, as in the judge."""
    d = design(looks.size, alpha=1.0 - claim.level)
    if looks.look == len(d.sizes) - 1:
        return None
    outcome = _at_look(part, looks.reports, looks.look, d, claim.level, seed, n_boot, len(claim.parts))
    return d.sizes[looks.look + 1] if outcome.estimate is not None and outcome.verdict == "inconclusive" else None


def on_looks(part: Part, evidence: OnLooks, level: float, seed: int, n_boot: int, parts: int) -> PartOutcome:
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


def gather_looks(claim: Claim, part: Part, size: int, reports_at: Callable[[int], OnReports], *, seed: int = 0,
                 n_boot: int = N_BOOT) -> OnLooks:  # fmt: skip
    """A sequential part's evidence over ``size`` sampling units, gathered look by look: ``reports_at(n)`` measures
    the reports of each model's first n units, at each of :func:`look_sizes`, while :func:`next_look` asks for the
    next look; the reports of the look that stopped it, as plain :class:`~.evidence.OnLooks`. ``seed`` and
    ``n_boot`` are the judge's."""
    sizes, k = look_sizes(claim, size), 0
    while True:
        looks = OnLooks(reports_at(sizes[k]), k, sizes[-1])
        if next_look(claim, part, looks, seed=seed, n_boot=n_boot) is None:
            return looks
        k += 1
