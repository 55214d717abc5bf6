"""Would this run's evidence move a committed verdict? A live run trains every recipe it judges live
(``Settings.trains_live``: the references by default) with the profile's live seed, which no study holds: one fresh
draw of each recipe. Each statistic a committed verdict reads (:func:`~.family.family`: what is checked, and on
which side) is checked against the study's predictive distribution for a new seed (:mod:`.live_check`: its natural
scale, its k - 1 degrees of freedom), one-sided in the direction that would move the snapshot's verdict.

Each live model's test accuracy is checked on its lower side (the training's health). An **omnibus**
(:mod:`.omnibus`) over the statistics the verdicts read on one side (towards the side that would move them) sees
broad shifts that no single check does. A run checks every reference it trains live, so the 5 % family-wise level is the
run's: each of the n references gets 5 % / n (Bonferroni), half of it for Holm's procedure over its single checks,
half for its omnibus. A live value that is undefined where every study seed's is defined, or that is not a possible
value of its statistic, fails its check (p = 0). A statistic constant over the study's seeds has no spread to
predict from, and is not checked. The rule is calibrated by a simulation of the whole procedure under the null
(``benchmarks/live_null.py``) and by :func:`held_out`: each study seed in turn predicted from the others.

Each reference's claim tests carry the checks of their own parts (:func:`claim_checks`), each at the first step of
its reference's Holm procedure: a check that fails there also fails the reproduction test.

A **known discrepancy** (``<profile>-discrepancies.json``, written by hand and reviewed like the expectation
snapshot) records one estimate of one draw known to fail its check: keyed by what determines the draw, the
recipe's fingerprint (:func:`~.fingerprint.recipe_fingerprint`) and the live seed, with the machines it was seen on.
At most one record per reference, naming a statistic of its own model, and justified by extra training seeds
(``benchmarks/extra_seeds.py``): the live value's p-value predicted from the study and the extra seeds together is
recorded with it and must lie below its check's own level (Holm's first step); above it, the study's prediction was
too narrow, which no record may hide. A reproduction whose failed checks are exactly the known discrepancies raises
:class:`ReproductionDiscrepancy`, which its test expects as a strict ``xfail(raises=...)``; one more check failed,
or a known one passing, fails the test.

Pure: the session computes the live values (:func:`~.family.family` says which, :meth:`~.family.StudyStatistic.paired`
combines a comparison's two) and hands them to :func:`reproduce`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import StudyError
from ..training.profiles import Profile
from .family import StudyStatistic, family, single_check
from .live_check import Check, holm_decided
from .omnibus import Decided, omnibus
from .snapshot import Snapshot
from .study import SeedStudy, read_fixture

__all__ = ["FAMILY_LEVEL", "KnownDiscrepancy", "ReproductionDiscrepancy", "Reproduction", "run_level", "reproduce",
           "claim_checks", "held_out", "discrepancies_name", "load_discrepancies"]  # fmt: skip

FAMILY_LEVEL = 0.05
DISCREPANCY_SCHEMA = 3  # 2: keyed by the recipe's fingerprint and the live seed; 3: with the extra seeds' p-value


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


def run_level(profile: Profile) -> float:
    """One reference's share of the run's family-wise level (module docstring)."""
    return FAMILY_LEVEL / len(profile.references)


def reproduce(reference: str, statistics: Sequence[StudyStatistic], live: Mapping[str, float],
              profile: Profile, known: Sequence[KnownDiscrepancy] = ()) -> Reproduction:  # fmt: skip
    """The reproduction of ``reference``: each statistic of its family (by label) against its ``live`` value (NaN
    where the live model's is undefined), the single checks under Holm's procedure at half the reference's share of
    the run's level and the omnibus at the other half; ``known``: the known discrepancies of the draw checked
    (module docstring), each of whose extra-seeds p-value must lie below its own check's level."""
    by_label = {s.label: s for s in statistics}
    for k in known:
        if (s := by_label.get(k.statistic)) is None or s.name != k.model:
            whose = "no statistic of its family" if s is None else f"a statistic of {s.name}, not of {k.model}"
            raise StudyError(f"the known discrepancy of {k.model} names {k.statistic!r}: {whose}")
    first, untestable = _first_step(statistics, profile)
    candidates = [c for s in statistics if (c := single_check(s, live[s.label])) is not None]
    singles = (*holm_decided([c for c in candidates if c.what not in untestable], run_level(profile) / 2),
               *(dataclasses.replace(c, level=first) for c in candidates if c.what in untestable))  # fmt: skip
    for k in known:
        if not k.extra_seeds_p < first:
            raise StudyError(f"the known discrepancy of {k.model} ({k.statistic}) needs extra_seeds_p below its "
                             f"check's own level {first:.2g} (Holm's first step), has {k.extra_seeds_p:g}")  # fmt: skip
    entered = [(c, [v for v in by_label[c.what].values if v is not None]) for c in singles
               if by_label[c.what].part is not None and not math.isnan(c.value) and c.scale.inside(c.value)]  # fmt: skip
    complete = [(c, row) for c, row in entered if len(row) == len(by_label[c.what].values)]
    checks: list[Decided] = list(singles)
    found = omnibus(f"omnibus of {reference}'s family", [c for c, _ in complete], [row for _, row in complete])
    if found is not None:
        checks.append(
            dataclasses.replace(found, level=run_level(profile) / 2, failed=found.p <= run_level(profile) / 2)
        )
    return Reproduction(reference, tuple(checks), run_level(profile), tuple(known))


def _first_step(statistics: Sequence[StudyStatistic], profile: Profile) -> tuple[float, set[str]]:
    """The level of the first step of the family's Holm procedure (half the reference's share of the run's level,
    over its testable single checks), and the labels of the checks untestable at it
    (:attr:`~.live_check.Check.testable`), which are listed and not counted."""
    half = run_level(profile) / 2
    candidates = [c for s in statistics if (c := single_check(s, 0.0)) is not None]
    strictest = half / max(1, len(candidates))
    untestable = {c.what for c in candidates if not dataclasses.replace(c, level=strictest).testable}
    return half / max(1, len(candidates) - len(untestable)), untestable


def claim_checks(claim: str, model: str, families: Mapping[str, Sequence[StudyStatistic]],
                 live: Mapping[str, float], profile: Profile) -> tuple[Check, ...]:  # fmt: skip
    """The checks of the statistics that ``claim``'s verdicts on reference ``model`` read, from the ``families``
    (reference -> :func:`~.family.family`) that hold them, each at the first step of its family's Holm procedure
    (an untestable one never fails)."""
    found = []
    for statistics in families.values():
        level, untestable = _first_step(statistics, profile)
        for s in statistics:
            if any(r[:2] == (claim, model) for r in s.readers) and (c := single_check(s, live[s.label])) is not None:
                found.append(dataclasses.replace(c, level=level, failed=c.what not in untestable and c.p <= level))
    return tuple(found)


def held_out(study: SeedStudy, profile: Profile, reference: str, seed_index: int, snapshot: Snapshot | None = None,
             live: Callable[[str], bool] | None = None, kinds: Callable[[str], bool] | None = None) -> Reproduction:  # fmt: skip
    """The reproduction rule applied to one of the study's own seeds, predicted from the others: how often it fails
    a draw that reproduces the recipe by construction (its false-alarm rate, with k - 1 seeds); ``live`` and
    ``kinds`` as :func:`~.family.family`'s."""
    rest, values = [], {}
    for s in family(study, profile, reference, snapshot, live, kinds=kinds):
        value = s.values[seed_index]
        rest.append(dataclasses.replace(s, values=s.values[:seed_index] + s.values[seed_index + 1 :]))
        values[s.label] = math.nan if value is None else value
    return reproduce(reference, rest, values, profile)
