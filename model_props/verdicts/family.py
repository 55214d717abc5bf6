"""What the live checks read: every statistic a committed verdict on a reference's family reads, with the sides on
which a live value would move it (:func:`family`), and its check at a live value (:func:`single_check`).

- what is checked is what the verdict reads: for a comparison part (subject - versus) whose two models the run
  trains, the paired difference per seed (on the models' link scale, :mod:`.scales`: a log ratio, a logit
  difference; in the statistic's units for an equivalence); otherwise the values of the one model of the family it
  reads, a ``greater`` part claiming high values of its subject and low ones of its ``versus``, ``less`` the
  reverse;
- a part the snapshot expects ``supported`` is checked on the side against the claim, ``contradicted`` on the side
  towards it (a live value further in the contradicted direction moves nothing; for an equivalence, ``within``, the
  side towards equivalence), ``inconclusive`` (or without an entry) on both sides; a ``skipped`` part is not
  checked. A statistic several parts read is checked once, on the union of their sides;
- each live model's test accuracy is checked on its lower side: the training's health;
- the default run (``--claims-live=references``, :func:`default_family`) checks the references' statistics of every
  report kind but the costliest, :data:`RELEASE_KINDS` (Hessian spectra and PGD attacks, about three quarters of a
  cold default run's measuring on two cores); the full live run (``--claims-live=all``) checks those too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..claims import list_claims
from ..claims.base import Part
from ..errors import StudyError
from ..training.profiles import Profile
from .live_check import Check, Predictive, Side
from .scales import RAW, Scale, fitted, scale_of
from .snapshot import Snapshot
from .study import SeedStudy

__all__ = [
    "StudyStatistic",
    "RELEASE_KINDS",
    "default_kind",
    "family",
    "default_family",
    "single_check",
    "shifted_live",
]

BOTH: frozenset[Side] = frozenset({"lower", "upper"})
RELEASE_KINDS = frozenset({"spectrum", "attack", "attack_test"})  # measured live by the full live run only


def default_kind(kind: str) -> bool:
    """Whether the default run measures the ``kind`` report (``kind@partner``: a pair's) on the live weights of the
    profile's references: every kind but :data:`RELEASE_KINDS`."""
    return kind.partition("@")[0] not in RELEASE_KINDS


@dataclass(frozen=True)
class StudyStatistic:
    """One statistic the study holds of recipe ``name``: a claim part's (``part``), or the recipe's test accuracy
    (``part`` None: the training-health check) at ``checkpoint``, with its per-seed values; for a comparison part
    whose ``versus`` is trained live too, the paired difference the verdict reads, per seed (:meth:`paired`);
    ``sides``: where a live value would move a verdict (or, for a test accuracy, show a training that went wrong);
    ``readers``: the (claim, reference, part) verdicts that read it."""

    label: str
    name: str
    checkpoint: str
    values: tuple[float | None, ...]
    part: Part | None = None
    sides: frozenset[Side] = frozenset()
    readers: tuple[tuple[str, str, str], ...] = ()
    versus: str | None = None
    link: Scale = RAW  # the scale of the models' own values, fitted to the study's

    @property
    def scale(self) -> Scale:
        """The statistic's scale: its models' own (:attr:`link`); a paired difference of values on a log or logit
        link (a log ratio, a logit difference) is raw, one of raw values raw on the range of differences."""
        if self.versus is None:
            return self.link
        if self.link.link != "raw":
            return RAW
        return Scale("raw", self.link.low - self.link.high, self.link.high - self.link.low)

    @property
    def null(self) -> float:
        """The value at which the part's verdict reverses, where this statistic has one: 0 for a paired difference
        (threshold 0), the threshold for the values of a part about one model; NaN otherwise."""
        if self.part is None or self.part.direction == "within":
            return math.nan
        if self.versus is not None:
            return 0.0 if self.part.threshold == 0 else math.nan
        return math.nan if self.part.versus else self.part.threshold

    @property
    def towards(self) -> float:
        """The direction in which a live value threatens what the statistic's check guards: -1 where it tests the lower
        side only, +1 otherwise (upwards for a two-sided check)."""
        return -1.0 if self.sides == {"lower"} else 1.0

    def paired(self, subject: float, versus: float) -> float:
        """The difference the statistic holds of one seed's (or the live run's) ``subject`` and ``versus`` values;
        NaN where either is undefined or not a possible value of the part's statistic."""
        if math.isnan(subject) or math.isnan(versus) or not (self.link.inside(subject) and self.link.inside(versus)):
            return math.nan
        return self.link.to(subject) - self.link.to(versus)


def _link(part: Part | None, values: Sequence[float | None], paired: bool = False) -> Scale:
    """The scale of a statistic's per-model ``values``: the part's (:func:`~.scales.scale_of`) fitted to them
    (:func:`~.scales.fitted`); for an equivalence's paired difference (``paired``) raw on the statistic's range,
    since its margin is in the statistic's units."""
    scale = fitted(scale_of(part), [v for v in values if v is not None])
    if paired and part is not None and part.direction == "within":
        return Scale("raw", 0.0 if scale.link == "log" else scale.low, scale.high)
    return scale


def _claimed(part: Part, name: str | None) -> Side | None:
    """The side of model ``name``'s values (None: of the paired difference) that the part claims (None: an
    equivalence claims neither)."""
    if part.direction == "within":
        return None
    side: Side = "upper" if part.direction == "greater" else "lower"
    return ("lower" if side == "upper" else "upper") if name is not None and name == part.versus else side


def _sides(part: Part, claimed: Side | None, expected: str | None, towards: Side) -> frozenset[Side]:
    """Where a live value would move the verdict ``expected`` (module docstring); ``towards``: the side towards
    equivalence, which alone can move a contradicted equivalence."""
    if expected == "skipped":
        return frozenset()
    if claimed is None:
        return frozenset({towards}) if expected == "contradicted" else BOTH
    if expected not in ("supported", "contradicted"):
        return BOTH
    return frozenset({claimed}) if expected == "contradicted" else BOTH - {claimed}


def _mean(values: Sequence[float | None]) -> float:
    defined = [v for v in values if v is not None and not math.isnan(v)]
    return math.fsum(defined) / len(defined) if defined else math.nan


def family(study: SeedStudy, profile: Profile, reference: str, snapshot: Snapshot | None = None,
           live: Callable[[str], bool] | None = None, *, skip_stale: bool = False,
           kinds: Callable[[str], bool] | None = None) -> list[StudyStatistic]:  # fmt: skip
    """Every distinct statistic a verdict on ``reference``'s family reads (the reference and its variants that
    ``live`` says are trained live; all of them without it), each once, with the sides the ``snapshot``'s verdicts
    ask for (both sides for every reading part without one): a comparison part's paired difference where its
    ``versus`` is trained live too, else the values of the family's model; and each member's test accuracy (the
    training-health check, lower side); ``kinds``: of the parts whose report kind it accepts (all without it). A stale
    entry raises :class:`~model_props.errors.StudyError` with the fix, or is left out with ``skip_stale``."""
    members = [n for n in study.recipes if profile.bases.get(n, n) == reference and (live is None or live(n))]
    found: dict[tuple, StudyStatistic] = {
        (name, checkpoint): StudyStatistic(f"test accuracy of {name} ({checkpoint})", name, checkpoint,
                                           tuple(metrics["test_accuracy"]), sides=frozenset({"lower"}),
                                           link=_link(None, metrics["test_accuracy"]))
        for name in members
        for checkpoint, metrics in study.recipes[name]["checkpoints"].items()
    }  # fmt: skip
    for claim in list_claims():
        if claim.id not in study.claims or (skip_stale and study.stale(claim, profile)):
            continue
        study.check(claim, profile)
        for part in claim.parts:
            if kinds is not None and not kinds(part.reads):
                continue
            record = study.claims[claim.id]["parts"].get(part.name, {})
            values = record.get("values", {})
            for model in study.evaluated_on(claim):
                if model in record.get("not_applicable", {}):
                    continue
                subject = part.subject or model
                both = part.versus is not None and all(n in values and (live is None or live(n))
                                                       for n in (subject, part.versus))  # fmt: skip
                for name in [None] if both else [n for n in (subject, part.versus) if n]:  # None: the difference
                    if (name or subject) not in members or (name is not None and name not in values):
                        continue
                    if name is None:
                        link = _link(part, [*values[subject], *values[part.versus]], paired=True)
                        template = StudyStatistic("", subject, part.checkpoint, (), part, versus=part.versus, link=link)
                        per_seed = tuple(None if a is None or b is None else template.paired(a, b)
                                         for a, b in zip(values[subject], values[part.versus]))  # fmt: skip
                        label = f"{claim.id} [{part.name}] {part.statistic_name} of {subject} - {part.versus}"
                        label += {"log": " (log ratio)", "logit": " (logit difference)"}.get(link.link, "")
                        new = dataclasses.replace(template, label=label, values=per_seed)
                        towards: Side = "lower" if _mean(per_seed) > 0 else "upper"
                    else:
                        per_seed = tuple(values[name])
                        label = f"{claim.id} [{part.name}] {part.statistic_name} of {name}"
                        new = StudyStatistic(label, name, part.checkpoint, per_seed, part, link=_link(part, per_seed))
                        other = values.get(part.versus if name == subject else subject, ())
                        towards = "lower" if _mean(per_seed) > _mean(other) else "upper"
                    key = (new.name, new.versus, part.reads, part.checkpoint, per_seed)
                    s = found.setdefault(key, new)
                    expected = snapshot.expected(claim, model) if snapshot is not None else None
                    sides = _sides(part, _claimed(part, name), expected.parts.get(part.name) if expected else None,
                                   towards)  # fmt: skip
                    if sides:
                        found[key] = dataclasses.replace(s, sides=s.sides | sides,
                                                         readers=(*s.readers, (claim.id, model, part.name)))  # fmt: skip
    return [s for s in found.values() if s.sides]


def default_family(study: SeedStudy, profile: Profile, reference: str,
                   snapshot: Snapshot | None = None) -> list[StudyStatistic]:  # fmt: skip
    """The family the default run checks live: the references trained live, every report kind but
    :data:`RELEASE_KINDS` (module docstring)."""
    return family(study, profile, reference, snapshot, profile.references.__contains__, kinds=default_kind)


def _predictive(s: StudyStatistic, value: float) -> Predictive | None:
    """None where there is nothing to predict from: fewer than two defined study values, the same value on every
    seed, or an undefined live value where some study value is undefined too."""
    defined = [v for v in s.values if v is not None and not math.isnan(v)]
    if len(defined) < 2 or len(set(defined)) == 1 or (math.isnan(value) and len(defined) < len(s.values)):
        return None
    if not all(s.scale.inside(v) and math.isfinite(s.scale.to(v)) for v in defined):
        raise StudyError(f"{s.label} is on the {s.scale} scale and a study seed's value is outside it or at a bound: "
                         f"{', '.join(f'{v:g}' for v in defined)}")  # fmt: skip
    return Predictive.of(defined, s.scale)


def single_check(s: StudyStatistic, value: float) -> Check | None:
    """The check of ``s`` at live ``value``, undecided; None where it has no sides or nothing to predict from."""
    predictive = _predictive(s, value)
    if predictive is None or not s.sides:
        return None
    return Check(s.label, value, s.sides, s.scale, predictive, null=s.null)


def shifted_live(statistics: Iterable[StudyStatistic], shift: float) -> dict[str, float]:
    """Live values ``shift`` predictive SDs from each statistic's study mean, on its scale, towards the side its check
    tests (:attr:`StudyStatistic.towards`); 0 for a statistic without a check. A broad shift of the live seed, the
    alternative the omnibus is built for (docs/verdicts.md; benchmarks/live_power.py simulates its power)."""
    live = {}
    for s in statistics:
        c = single_check(s, 0.0)
        live[s.label] = s.scale.back(c.predictive.mean + s.towards * shift * c.predictive.spread) if c else 0.0
    return live
