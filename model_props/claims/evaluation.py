"""Claim x model -> verdict, at either scope (design Sec. 3 and 7).

- :func:`evaluate_checkpoint`: one set of weights. Each part's statistic is bootstrapped over its report's
  sampling units; a comparison of two models measured on the same samples (``Measured.samples`` equal: the
  same test images, noise draws or Hessian batches) is bootstrapped paired, otherwise as two samples.
- :func:`evaluate_architecture`: a recipe over k >= 3 training seeds. Each part's statistic is computed once
  per seed (:func:`point_value`, on the seed's whole sample) and the k values give a t interval; a
  comparison of two recipes, whose seeds are independent, gives Welch's interval.

Both then combine the parts (:func:`~.outcome.combine`: intersection-union for *supported*, Holm for
*contradicted*). A part that does not apply, reads nothing, or reads a statistic that is undefined where the
part says it may be (``Part.undefined``) is skipped with the reason; any other NaN is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..anatomy import Anatomy
from ..errors import ModelPropsError, NotApplicable
from .base import Claim, Part
from .outcome import ClaimOutcome, PartOutcome, combine, measured
from .stats import MIN_SEEDS, N_BOOT, Estimate, bootstrap, bootstrap_two_sample, t_interval, welch_interval

__all__ = [
    "Measured",
    "Reports",
    "PerSeed",
    "SkipPart",
    "Memo",
    "point_value",
    "evaluate_checkpoint",
    "evaluate_architecture",
]


@dataclass(frozen=True)
class Measured:
    """A report and, per sampling unit, the identity of the samples it was measured on (equal identities pair)."""

    report: Any
    samples: Mapping[str, str]


Reports = Callable[[str | None, str, str], Measured]  # (model name or None for the model under test, kind, checkpoint)
PerSeed = Callable[[Part, str | None], Sequence[float | None]]  # (part, model name or None) -> per-seed values
SkipPart = Callable[[Part], "str | None"]
# (part, the reports its statistic reads, how they are resampled, the computation) -> its estimate: a memo may return
# an estimate it computed before from equal reports and the same resampling (the session's estimate cache)
Memo = Callable[[Part, tuple[Any, ...], str, Callable[[], Estimate]], Estimate]


def _no_skip(part: Part) -> str | None:
    return None


def _compute(part: Part, reports: tuple[Any, ...], resampling: str, compute: Callable[[], Estimate]) -> Estimate:
    return compute()


def point_value(part: Part, report: Any) -> float:
    """The part's statistic on the report's whole sample (NaN where it is undefined)."""
    return float(part.statistic(report, np.arange(report.size(part.sampling))))


def _undefined(part: Part, model: str, value: float, where: str) -> str:
    """The skip reason of a statistic that is undefined (NaN) where the part allows it; an error elsewhere."""
    if not part.undefined:
        raise ModelPropsError(
            f"[{part.name}] on {model}: the statistic '{part.statistic_name}' is undefined ({value}) {where}"
        )
    return f"'{part.statistic_name}' is undefined {where}: {part.undefined}"


def _checkpoint_part(
    part: Part, model: str, reports: Reports, level: float, seed: int, n_boot: int, memo: Memo
) -> PartOutcome:  # fmt: skip
    stat = part.statistic
    subject = reports(part.subject, part.reads, part.checkpoint)
    n = subject.report.size(part.sampling)
    value = point_value(part, subject.report)  # raises NotApplicable before any resampling
    if math.isnan(value):
        return PartOutcome(part, "skipped", reason=_undefined(part, part.subject or model, value, "on its sample"))
    resampling = f"level={level}|seed={seed}|n_boot={n_boot}|"
    if part.versus is None:
        one = memo(part, (subject.report,), resampling + "one", lambda: bootstrap(
            n, lambda i: stat(subject.report, i), level=level, seed=seed, n_boot=n_boot))  # fmt: skip
        return measured(part, one)
    other = reports(part.versus, part.reads, part.checkpoint)
    if math.isnan(point_value(part, other.report)):
        return PartOutcome(part, "skipped", reason=_undefined(part, part.versus, math.nan, f"on {part.versus}"))
    m = other.report.size(part.sampling)
    pair = (subject.report, other.report)
    if subject.samples.get(part.sampling) == other.samples.get(part.sampling) and n == m:
        diff = memo(part, pair, resampling + "paired", lambda: bootstrap(
            n, lambda i: stat(subject.report, i) - stat(other.report, i), level=level, seed=seed, n_boot=n_boot,
            method="paired percentile bootstrap"))  # fmt: skip
        return measured(part, diff, paired=True)
    two = memo(part, pair, resampling + "two-sample", lambda: bootstrap_two_sample(
        n, m, lambda i, j: stat(subject.report, i) - stat(other.report, j), level=level, seed=seed, n_boot=n_boot))  # fmt: skip
    return measured(part, two, paired=False)


def evaluate_checkpoint(
    claim: Claim, model: str, anat: Anatomy, reports: Reports, *, seed: int = 0, n_boot: int = N_BOOT,
    skip_part: SkipPart = _no_skip, memo: Memo = _compute,
) -> ClaimOutcome:  # fmt: skip
    """Every part of ``claim`` that applies to ``anat``, bootstrapped over its samples (module docstring).
    ``reports(name, kind, checkpoint)`` gives the report a part reads: of the model under test (``name=None``)
    or of a named model of the profile; ``skip_part`` may give a reason to skip a part; ``memo`` may return a
    bootstrap it computed before on equal reports (:data:`Memo`)."""
    outcomes = []
    for part in claim.parts:
        reason = part.applies(anat) or skip_part(part)
        if reason is not None:
            outcomes.append(PartOutcome(part, "skipped", reason=reason))
            continue
        try:
            outcomes.append(_checkpoint_part(part, model, reports, claim.level, seed, n_boot, memo))
        except NotApplicable as exc:
            outcomes.append(PartOutcome(part, "skipped", reason=str(exc)))
    return combine(claim, model, "checkpoint", outcomes)


def _seed_interval(part: Part, values: Sequence[float | None], versus: Sequence[float | None] | None,
                   level: float) -> Estimate:  # fmt: skip
    return t_interval(values, level=level) if versus is None else welch_interval(values, versus, level=level)


def _defined(values: Sequence[float | None]) -> int:
    return sum(v is not None and not math.isnan(v) for v in values)


def evaluate_architecture(
    claim: Claim, model: str, anat: Anatomy | None, per_seed: PerSeed, *, seeds: Sequence[int],
    skip_part: SkipPart = _no_skip,
) -> ClaimOutcome:  # fmt: skip
    """Every part of ``claim`` that applies to ``anat``, over the per-seed estimates ``per_seed(part, name)`` of
    the model under test (``name=None``) or of a named recipe (module docstring). Without an anatomy, a part
    applies unless ``per_seed`` raises :class:`NotApplicable` (a seed study records where parts do not apply)."""
    outcomes = []
    for part in claim.parts:
        reason = (part.applies(anat) if anat is not None else None) or skip_part(part)
        if reason is not None:
            outcomes.append(PartOutcome(part, "skipped", reason=reason))
            continue
        try:
            values = list(per_seed(part, part.subject))
            versus = list(per_seed(part, part.versus)) if part.versus else None
        except NotApplicable as exc:
            outcomes.append(PartOutcome(part, "skipped", reason=str(exc)))
            continue
        groups = {part.subject or model: values, **({part.versus: versus} if part.versus and versus else {})}
        undefined = {name: len(v) - _defined(v) for name, v in groups.items() if len(v) > _defined(v)}
        where = "on " + ", ".join(f"{n} of {len(groups[name])} seeds of {name}" for name, n in undefined.items())
        reason = _undefined(part, model, math.nan, where) if undefined else ""  # raises unless allowed
        short = {name: _defined(v) for name, v in groups.items() if _defined(v) < MIN_SEEDS}
        if short:
            needs = f"an architecture verdict needs at least {MIN_SEEDS} seeds with a value"
            got = ", ".join(f"{name} has {n}" for name, n in short.items())
            outcomes.append(PartOutcome(part, "skipped", reason=f"{reason + '; ' if reason else ''}{needs}; {got}"))
            continue
        outcomes.append(measured(part, _seed_interval(part, values, versus, claim.level), seeds=groups))
    return combine(claim, model, "architecture", outcomes, seeds)
