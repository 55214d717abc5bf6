"""Would this run's evidence move a committed verdict? A live run trains every recipe it judges live
(``Settings.trains_live``: the references by default) with the profile's live seed, which no study holds: one fresh
draw of each recipe. Each statistic a committed verdict reads (a claim part's, one per model the part reads) is
checked against the study's predictive distribution for a new seed (:mod:`.live_check`: its natural scale, its
k - 1 degrees of freedom), **one-sided in the direction that would move the snapshot's verdict** of that part:

- the claimed side of a model's values: a part ``greater`` claims high values of its subject (the model under
  test, or ``Part.subject``) and low ones of its ``versus`` (the statistic is subject - versus); ``less`` the
  reverse; ``within`` (equivalence, |subject - versus| < margin) claims neither, and is checked on both sides;
- a part the snapshot expects ``supported`` is checked on the side against the claim, ``contradicted`` on the side
  towards it (a live value further in the contradicted direction moves nothing), ``inconclusive`` (or without an
  entry) on both sides; a ``skipped`` part is not checked. A statistic several parts read is checked once, on the
  union of their sides.

An **omnibus** (:class:`~.live_check.Omnibus`) over every statistic of the family (those no verdict reads and the
test accuracies included, which are not checked singly) sees broad shifts that no single check does. A run checks
every reference it trains live, so the 5 % family-wise level is the run's: each of the n references gets 5 % / n
(Bonferroni), and Holm's procedure over its single checks and its omnibus keeps it there. A live value that is
undefined where every study seed's is defined fails its check (p = 0). A statistic constant over the study's seeds
has no spread to predict from, and is not checked. The rule is calibrated by :func:`held_out`: each study seed in
turn predicted from the others, the same procedure as the live one.

Each reference's claim tests carry the checks of their own parts (:func:`claim_checks`), each at the Bonferroni
share of its reference's family (Holm's first step): a check that fails there also fails the reproduction test.

A **known discrepancy** (``<profile>-discrepancies.json``, written by hand and reviewed like the expectation
snapshot) records one estimate of one draw known to fail its check: keyed by what determines the draw, the
recipe's fingerprint (:func:`~.fingerprint.recipe_fingerprint`) and the live seed, with the machines it was seen on.
At most one record per reference, naming a statistic of its own model, and justified by extra training seeds
(``benchmarks/extra_seeds.py``): the live value's p-value predicted from the study and the extra seeds together is
recorded with it and must lie below the reference's level (:func:`run_level`); above it, the study's prediction was
too narrow, which no record may hide. A reproduction whose failed checks are
exactly the known discrepancies raises :class:`ReproductionDiscrepancy`, which its test expects as a strict
``xfail(raises=...)``; one more check failed, or a known one passing, fails the test.

Pure: the session computes the live values (:func:`family` says which) and hands them to :func:`reproduce`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..claims import list_claims
from ..claims.base import Part
from ..errors import StudyError
from ..training.profiles import Profile
from .live_check import Check, Decided, Omnibus, Predictive, Side, holm_decided, on_scale, scale_of
from .snapshot import Snapshot
from .study import SeedStudy, read_fixture

__all__ = ["FAMILY_LEVEL", "StudyStatistic", "KnownDiscrepancy", "ReproductionDiscrepancy", "Reproduction", "family",
           "run_level", "reproduce", "claim_checks", "held_out", "discrepancies_name", "load_discrepancies"]  # fmt: skip

FAMILY_LEVEL = 0.05
DISCREPANCY_SCHEMA = 3  # 2: keyed by the recipe's fingerprint and the live seed; 3: with the extra seeds' p-value
BOTH: frozenset[Side] = frozenset({"lower", "upper"})


class ReproductionDiscrepancy(AssertionError):
    """A reproduction whose only failed checks are the known discrepancies of this draw: the one failure its test's
    strict ``xfail(raises=...)`` expects."""


@dataclass(frozen=True)
class KnownDiscrepancy:
    """A reviewed record that check ``statistic`` of recipe ``model``'s draw (its fingerprint ``recipe``, training
    seed ``seed``) fails, seen on ``machines``, and ``why``; ``still_needed``: checked to fail under the current rule;
    ``extra_seeds_p``: the live value's p-value predicted from the study's and the extra seeds' values together."""

    model: str
    recipe: str
    seed: int
    statistic: str
    machines: tuple[str, ...]
    still_needed: bool
    why: str
    extra_seeds_p: float


def discrepancies_name(profile: str) -> str:
    return f"{profile}-discrepancies.json"


def load_discrepancies(profile: Profile, user_dir: Path | None = None) -> tuple[KnownDiscrepancy, ...]:
    """The profile's known discrepancies (none where it has no file), the user's recipes folder first; a record no
    longer needed, one without an extra-seeds p-value below the reference's level, or a second record of one
    reference raises :class:`~model_props.errors.StudyError`."""
    name = discrepancies_name(profile.name)
    read = read_fixture(name, user_dir, DISCREPANCY_SCHEMA, f"rewrite {name} in schema {DISCREPANCY_SCHEMA}")
    if read is None:
        return ()
    known = tuple(KnownDiscrepancy(d["model"], d["recipe"], d["seed"], d["statistic"], tuple(d["machines"]),
                                   d["still_needed"], d["why"], d.get("extra_seeds_p", math.nan))
                  for d in read[0]["known"])  # fmt: skip
    for k in known:
        if not k.still_needed:
            raise StudyError(f"{read[1]}: the record of {k.model} ({k.statistic}) is no longer needed; remove it")
        if not k.extra_seeds_p < run_level(profile):  # NaN (not recorded) included
            raise StudyError(f"{read[1]}: the record of {k.model} ({k.statistic}) needs extra_seeds_p below "
                             f"{run_level(profile):.2%} (python benchmarks/extra_seeds.py: the live value's "
                             f"p_from_study_and_extra), has {k.extra_seeds_p:g}")  # fmt: skip
    references = [profile.bases.get(k.model, k.model) for k in known]
    if twice := sorted({r for r in references if references.count(r) > 1}):
        raise StudyError(f"{read[1]}: more than one known discrepancy of reference {', '.join(twice)} (one at most)")
    return known


@dataclass(frozen=True)
class StudyStatistic:
    """One statistic the study holds of recipe ``name``: a claim part's (``part``) or its test accuracy (``part``
    None) at ``checkpoint``, with its per-seed values; ``sides``: where a live value would move a verdict (empty:
    the omnibus only); ``readers``: the (claim, reference, part) verdicts that read it."""

    label: str
    name: str
    checkpoint: str
    values: tuple[float | None, ...]
    part: Part | None = None
    sides: frozenset[Side] = frozenset()
    readers: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Reproduction:
    model: str
    checks: tuple[Decided, ...]  # the single checks and the omnibus, decided by Holm's procedure
    level: float  # this reference's share of the run's family-wise level
    known: tuple[KnownDiscrepancy, ...] = ()  # those recorded for the draw checked here

    @property
    def failed(self) -> list[Decided]:
        return [c for c in self.checks if c.failed]

    def assert_reproduced(self) -> None:
        """Pass when no check fails; raise :class:`ReproductionDiscrepancy` when exactly the known ones do, else
        AssertionError naming what fails unexpectedly and what known discrepancy passes."""
        outside = {c.what for c in self.failed}
        known = {k.statistic for k in self.known}
        if outside == known == set():
            return
        lines = [self.message()]
        lines += [f"NOT a known discrepancy: {what}" for what in sorted(outside - known)]
        lines += [f"a known discrepancy no longer fails, remove it from the discrepancies file: {what}"
                  for what in sorted(known - outside)]  # fmt: skip
        if outside != known:
            raise AssertionError("\n".join(lines))
        lines += [f"known discrepancy of {k.model} (seed {k.seed}, seen on {'; '.join(k.machines)}): {k.why}"
                  for k in self.known]  # fmt: skip
        raise ReproductionDiscrepancy("\n".join(lines))

    def message(self) -> str:
        head = (f"{self.model}: {len(self.failed)} of {len(self.checks)} checks fail against the seed study after "
                f"Holm's correction (family-wise {self.level:.2%}: {FAMILY_LEVEL:.0%} for the run's references "
                "together)")  # fmt: skip
        return "\n".join([head, *(c.describe() for c in sorted(self.checks, key=lambda c: c.p))])


def _claimed(part: Part, name: str) -> Side | None:
    """The side of model ``name``'s values that the part claims (None: an equivalence claims neither)."""
    if part.direction == "within":
        return None
    side: Side = "upper" if part.direction == "greater" else "lower"
    return ("lower" if side == "upper" else "upper") if name == part.versus else side


def _sides(part: Part, name: str, expected: str | None) -> frozenset[Side]:
    """Where a live value of model ``name`` would move the verdict ``expected`` (module docstring)."""
    claimed = _claimed(part, name)
    if expected == "skipped":
        return frozenset()
    if claimed is None or expected not in ("supported", "contradicted"):
        return BOTH
    return frozenset({claimed}) if expected == "contradicted" else BOTH - {claimed}


def family(study: SeedStudy, profile: Profile, reference: str, snapshot: Snapshot | None = None,
           live: Callable[[str], bool] | None = None, *, skip_stale: bool = False) -> list[StudyStatistic]:  # fmt: skip
    """Every distinct statistic the study holds of ``reference``'s family (the reference and its variants that
    ``live`` says are trained live; all of them without it), each once, with the sides the ``snapshot``'s verdicts
    ask for (both sides for every reading part without one). A stale entry raises
    :class:`~model_props.errors.StudyError` with the fix, or is left out with ``skip_stale``."""
    members = [n for n in study.recipes if profile.bases.get(n, n) == reference and (live is None or live(n))]
    found: dict[tuple, StudyStatistic] = {
        (name, checkpoint): StudyStatistic(
            f"test accuracy of {name} ({checkpoint})", name, checkpoint, tuple(metrics["test_accuracy"])
        )  # fmt: skip
        for name in members
        for checkpoint, metrics in study.recipes[name]["checkpoints"].items()
    }
    for claim in list_claims():
        if claim.id not in study.claims or (skip_stale and study.stale(claim, profile)):
            continue
        study.check(claim, profile)
        for part in claim.parts:
            record = study.claims[claim.id]["parts"].get(part.name, {})
            for name, values in record.get("values", {}).items():
                if name not in members:
                    continue
                key = (name, part.reads, part.checkpoint, tuple(values))
                s = found.setdefault(key, StudyStatistic(f"{claim.id} [{part.name}] {part.statistic_name} of {name}",
                                                         name, part.checkpoint, tuple(values), part))  # fmt: skip
                for model in study.evaluated_on(claim):
                    if name not in (part.subject or model, part.versus) or model in record.get("not_applicable", {}):
                        continue
                    expected = snapshot.expected(claim, model) if snapshot is not None else None
                    sides = _sides(part, name, expected.parts.get(part.name) if expected is not None else None)
                    if sides:
                        s = dataclasses.replace(s, sides=s.sides | sides,
                                                readers=(*s.readers, (claim.id, model, part.name)))  # fmt: skip
                found[key] = s
    return list(found.values())


def _predictive(s: StudyStatistic, value: float) -> Predictive | None:
    """None where there is nothing to predict from: fewer than two defined study values, the same value on every
    seed, or an undefined live value where some study value is undefined too."""
    defined = [v for v in s.values if v is not None and not math.isnan(v)]
    if len(defined) < 2 or len(set(defined)) == 1 or (math.isnan(value) and len(defined) < len(s.values)):
        return None
    if scale_of(s.part) == "log" and min(defined) <= 0:
        raise StudyError(f"{s.label} is on the log scale and a study seed's value is {min(defined):g}")
    return Predictive.of(defined, scale_of(s.part))


def _single(s: StudyStatistic, value: float) -> Check | None:
    predictive = _predictive(s, value)
    return None if predictive is None or not s.sides else Check(s.label, value, s.sides, scale_of(s.part), predictive)


def run_level(profile: Profile) -> float:
    """One reference's share of the run's family-wise level (module docstring)."""
    return FAMILY_LEVEL / len(profile.references)


def reproduce(reference: str, statistics: Sequence[StudyStatistic], live: Mapping[str, float],
              profile: Profile, known: Sequence[KnownDiscrepancy] = ()) -> Reproduction:  # fmt: skip
    """The reproduction of ``reference``: each statistic of its family (by label) against its ``live`` value (NaN
    where the live model's is undefined), single checks and the omnibus under Holm's procedure at the reference's
    share of the run's level; ``known``: the known discrepancies of the draw checked (module docstring)."""
    by_label = {s.label: s for s in statistics}
    for k in known:
        if (s := by_label.get(k.statistic)) is None or s.name != k.model:
            whose = "no statistic of its family" if s is None else f"a statistic of {s.name}, not of {k.model}"
            raise StudyError(f"the known discrepancy of {k.model} names {k.statistic!r}: {whose}")
    checks: list[Decided] = [c for s in statistics if (c := _single(s, live[s.label])) is not None]
    deviations = [(p.z(on_scale(live[s.label], scale_of(s.part))), p.df) for s in statistics
                  if not math.isnan(live[s.label]) and (p := _predictive(s, live[s.label])) is not None]  # fmt: skip
    if deviations:
        checks.append(Omnibus.of(f"omnibus of {reference}'s family", deviations))
    return Reproduction(reference, holm_decided(checks, run_level(profile)), run_level(profile), tuple(known))


def _family_size(statistics: Sequence[StudyStatistic]) -> int:
    """The checks a reproduction of these statistics can make: every single check, and the omnibus."""
    return sum(1 for s in statistics if _single(s, 0.0) is not None) + 1


def claim_checks(claim: str, model: str, families: Mapping[str, Sequence[StudyStatistic]],
                 live: Mapping[str, float], profile: Profile) -> tuple[Check, ...]:  # fmt: skip
    """The checks of the statistics that ``claim``'s verdicts on reference ``model`` read, from the ``families``
    (reference -> :func:`family`) that hold them, each at its family's Bonferroni share (Holm's first step)."""
    found = []
    for statistics in families.values():
        level = run_level(profile) / _family_size(statistics)
        for s in statistics:
            if any(r[:2] == (claim, model) for r in s.readers) and (c := _single(s, live[s.label])) is not None:
                found.append(dataclasses.replace(c, level=level, failed=c.p <= level))
    return tuple(found)


def held_out(study: SeedStudy, profile: Profile, reference: str, seed_index: int, snapshot: Snapshot | None = None,
             live: Callable[[str], bool] | None = None) -> Reproduction:  # fmt: skip
    """The reproduction rule applied to one of the study's own seeds, predicted from the others: how often it fails
    a draw that reproduces the recipe by construction (its false-alarm rate, with k - 1 seeds)."""
    rest, values = [], {}
    for s in family(study, profile, reference, snapshot, live):
        value = s.values[seed_index]
        rest.append(dataclasses.replace(s, values=s.values[:seed_index] + s.values[seed_index + 1 :]))
        values[s.label] = math.nan if value is None else value
    return reproduce(reference, rest, values, profile)
