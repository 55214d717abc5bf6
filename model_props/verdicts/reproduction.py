"""Does this machine's training reproduce the seed study? A live run trains every recipe with the profile's live
seed, which no study contains: one fresh draw from each recipe. Each statistic the study holds of a reference's
family (the reference and the variants that extend it), and each one's test accuracy at every checkpoint the study
records, should fall inside the study's 95 % prediction interval for a new seed over all its seeds
(mean +- t s sqrt(1 + 1/k)). A statistic read by several claims (ViT's APE) is checked once.

A run checks every reference, so the 5 % family-wise error is the whole run's: each of the n references gets
5 % / n (Bonferroni), and Holm's procedure over its family keeps it there; a reference fails only when some
estimate is out of line with the study beyond chance. A live value that is undefined where every study seed's is
defined fails outright (p = 0): the live model does not have what the study measured. The rule is calibrated by
:func:`held_out`: each study seed in turn predicted from the others, the same procedure as the live one.

A **known discrepancy** (``<profile>-discrepancies.json``, written by hand and reviewed like the expectation
snapshot) records one estimate of one set of live weights (the recipe and its weights' sha256) that is known to
lie outside its interval, with the evidence. It applies only to those very weights: another machine's training
gives other weights, which are checked as usual. A reproduction whose estimates outside are exactly the known
discrepancies raises :class:`ReproductionDiscrepancy`, which its test expects as a strict ``xfail(raises=...)``;
one more estimate outside, or a known one back inside, fails the test.

Pure: the session computes the live values (:func:`family` says which) and hands them to :func:`reproduce`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..claims import list_claims
from ..claims.base import Part
from ..training.profiles import Profile
from .prediction import prediction_interval, prediction_p
from .stats import holm
from .study import SeedStudy, read_fixture

__all__ = ["FAMILY_LEVEL", "StudyStatistic", "Check", "KnownDiscrepancy", "ReproductionDiscrepancy", "Reproduction",
           "family", "run_level", "reproduce", "held_out", "discrepancies_name", "load_discrepancies"]  # fmt: skip

FAMILY_LEVEL = 0.05
DISCREPANCY_SCHEMA = 1


class ReproductionDiscrepancy(AssertionError):
    """A reproduction whose only estimates outside the study's prediction intervals are the known discrepancies of
    these very weights: the one failure its test's strict ``xfail(raises=...)`` expects."""


@dataclass(frozen=True)
class KnownDiscrepancy:
    """A reviewed record that estimate ``statistic`` (a :class:`Check`'s ``what``) of the live weights of recipe
    ``model`` whose sha256 is ``weights_sha256`` lies outside the study's prediction interval, and ``why``."""

    model: str
    weights_sha256: str
    statistic: str
    why: str


def discrepancies_name(profile: str) -> str:
    return f"{profile}-discrepancies.json"


def load_discrepancies(profile: str, user_dir: Path | None = None) -> tuple[KnownDiscrepancy, ...]:
    """The profile's known discrepancies (none where it has no file), the user's recipes folder first."""
    name = discrepancies_name(profile)
    read = read_fixture(name, user_dir, DISCREPANCY_SCHEMA, f"rewrite {name} in schema {DISCREPANCY_SCHEMA}")
    if read is None:
        return ()
    return tuple(KnownDiscrepancy(d["model"], d["weights_sha256"], d["statistic"], d["why"]) for d in read[0]["known"])


@dataclass(frozen=True)
class StudyStatistic:
    """One statistic the study holds of recipe ``name``: a claim part's (``part``) or its test accuracy (``part``
    None) at ``checkpoint``, with its per-seed values."""

    label: str
    name: str
    checkpoint: str
    values: tuple[float | None, ...]
    part: Part | None = None


@dataclass(frozen=True)
class Check:
    what: str
    value: float
    interval: tuple[float, float]  # the study's 95 % prediction interval
    p: float
    failed: bool = False

    def describe(self) -> str:
        low, high = self.interval
        if math.isnan(self.value):
            return f"{self.what}: UNDEFINED where every study seed's is defined ([{low:.4g}, {high:.4g}])"
        mark = "OUTSIDE" if self.failed else "inside"
        return f"{self.what}: {self.value:.4g} {mark} [{low:.4g}, {high:.4g}] (p = {self.p:.3g})"


@dataclass(frozen=True)
class Reproduction:
    model: str
    checks: tuple[Check, ...]
    level: float  # this reference's share of the run's family-wise level
    known: tuple[KnownDiscrepancy, ...] = ()  # those recorded for the weights checked here

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    def assert_reproduced(self) -> None:
        """Pass when no estimate is outside; raise :class:`ReproductionDiscrepancy` when exactly the known ones are,
        else AssertionError naming what is outside unexpectedly and what known discrepancy is back inside."""
        outside = {c.what for c in self.failed}
        known = {k.statistic for k in self.known}
        if outside == known == set():
            return
        lines = [self.message()]
        lines += [f"NOT a known discrepancy: {what}" for what in sorted(outside - known)]
        lines += [f"a known discrepancy is no longer outside, remove it from the discrepancies file: {what}"
                  for what in sorted(known - outside)]  # fmt: skip
        if outside != known:
            raise AssertionError("\n".join(lines))
        lines += [f"known discrepancy of {k.model} (weights {k.weights_sha256[:16]}): {k.why}" for k in self.known]
        raise ReproductionDiscrepancy("\n".join(lines))

    def message(self) -> str:
        head = (f"{self.model}: {len(self.failed)} of {len(self.checks)} estimates outside the seed study's prediction "
                f"intervals after Holm's correction (family-wise {self.level:.2%}: {FAMILY_LEVEL:.0%} for the "
                "run's references together)")  # fmt: skip
        return "\n".join([head, *(c.describe() for c in sorted(self.checks, key=lambda c: c.p))])


def family(study: SeedStudy, profile: Profile, reference: str) -> list[StudyStatistic]:
    """Every distinct statistic the study holds of ``reference``'s family (module docstring), each once. A stale
    entry raises :class:`~model_props.errors.StudyError` with the fix."""
    members = [n for n in study.recipes if profile.bases.get(n, n) == reference]
    found = [
        StudyStatistic(f"test accuracy of {name} ({checkpoint})", name, checkpoint, tuple(metrics["test_accuracy"]))
        for name in members
        for checkpoint, metrics in study.recipes[name]["checkpoints"].items()
    ]
    seen: set[tuple[str, str, str, tuple[float | None, ...]]] = set()
    for claim in list_claims():
        if claim.id not in study.claims:
            continue
        study.check(claim, profile)
        for part in claim.parts:
            for name, values in study.claims[claim.id]["parts"].get(part.name, {}).get("values", {}).items():
                key = (name, part.reads, part.checkpoint, tuple(values))
                if name in members and key not in seen:
                    seen.add(key)
                    label = f"{claim.id} [{part.name}] {part.statistic_name} of {name}"
                    found.append(StudyStatistic(label, name, part.checkpoint, tuple(values), part))
    return found


def _check(what: str, values: Sequence[float | None], value: float) -> Check | None:
    """None where there is nothing to predict from: fewer than two defined study values, or a statistic that is the
    same on every seed (its prediction interval is a point, which says nothing about a new draw's spread). An
    undefined live value fails where every study value is defined (p = 0), and is no check where some are not."""
    defined = [v for v in values if v is not None and not math.isnan(v)]
    if len(defined) < 2 or len(set(defined)) == 1:
        return None
    if math.isnan(value):
        return Check(what, value, prediction_interval(defined), 0.0) if len(defined) == len(values) else None
    return Check(what, value, prediction_interval(defined), prediction_p(defined, value))


def _holm(name: str, checks: list[Check], level: float, known: Sequence[KnownDiscrepancy] = ()) -> Reproduction:
    rejected = holm([c.p for c in checks], level)
    return Reproduction(
        name, tuple(Check(c.what, c.value, c.interval, c.p, r) for c, r in zip(checks, rejected)), level, tuple(known)
    )


def run_level(profile: Profile) -> float:
    """One reference's share of the run's family-wise level (module docstring)."""
    return FAMILY_LEVEL / len(profile.references)


def reproduce(reference: str, statistics: Sequence[StudyStatistic], live: Mapping[str, float],
              profile: Profile, known: Sequence[KnownDiscrepancy] = ()) -> Reproduction:  # fmt: skip
    """The reproduction of ``reference``: each statistic of its family (by label) against its ``live`` value (NaN
    where the live model's is undefined), Holm at the reference's share of the run's level; ``known``: the known
    discrepancies of the live weights checked (module docstring)."""
    checks = [c for s in statistics if (c := _check(s.label, s.values, live[s.label])) is not None]
    return _holm(reference, checks, run_level(profile), known)


def held_out(study: SeedStudy, profile: Profile, reference: str, seed_index: int) -> Reproduction:
    """The reproduction rule applied to one of the study's own seeds, predicted from the others: how often it fails
    a draw that reproduces the recipe by construction (its false-alarm rate, with k - 1 seeds)."""
    checks = []
    for s in family(study, profile, reference):
        rest = s.values[:seed_index] + s.values[seed_index + 1 :]
        value = s.values[seed_index]
        found = _check(s.label, rest, math.nan if value is None else value)
        checks += [found] if found else []
    return _holm(reference, checks, run_level(profile))
