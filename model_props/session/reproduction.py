"""Does this machine's training reproduce the seed study? The live run's own weights of a reference (its seed,
trained here) are one more draw from the recipe: each of their per-part estimates, and their test accuracy at
every checkpoint the study records, should fall inside the study's 95 % prediction interval for a new seed
(mean +- t s sqrt(1 + 1/k)). A run checks every reference, so the 5 % family-wise error is the whole run's: each
of the n references gets 5 % / n (Bonferroni), and Holm's procedure over that reference's estimates keeps it
there; a reference fails only when some estimate is out of line with the study beyond chance. This replaces the
accuracy floors: a model that trained worse than the recipe does fails on its accuracy, one that trained
differently fails on the statistics the claims read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..claims import list_claims
from ..claims.base import Part
from ..claims.evaluation import point_value
from ..claims.expectations import SeedStudy, regenerate
from ..claims.stats import holm, prediction_interval, prediction_p
from ..errors import NotApplicable, StudyError
from ..training.profiles import Profile
from .store import ModelStore

__all__ = ["Check", "Reproduction", "reproduce", "held_out", "FAMILY_LEVEL"]

FAMILY_LEVEL = 0.05


@dataclass(frozen=True)
class Check:
    what: str  # e.g. "park2022.msa-lowpass [msa-later-half]" or "test accuracy (final)"
    value: float
    interval: tuple[float, float]  # the study's 95 % prediction interval
    p: float
    failed: bool = False

    def describe(self) -> str:
        low, high = self.interval
        mark = "OUTSIDE" if self.failed else "inside"
        return f"{self.what}: {self.value:.4g} {mark} [{low:.4g}, {high:.4g}] (p = {self.p:.3g})"


@dataclass(frozen=True)
class Reproduction:
    model: str
    checks: tuple[Check, ...]
    level: float  # this reference's share of the run's family-wise level

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    def message(self) -> str:
        head = (f"{self.model}: {len(self.failed)} of {len(self.checks)} estimates outside the seed study's prediction "
                f"intervals after Holm's correction (family-wise {self.level:.2%}: {FAMILY_LEVEL:.0%} for the "
                "run's references together)")  # fmt: skip
        return "\n".join([head, *(c.describe() for c in sorted(self.checks, key=lambda c: c.p))])


def _check(what: str, values: list[float | None], value: float) -> Check | None:
    """None where there is nothing to predict from: fewer than two defined study values, a statistic that is
    the same on every seed (its prediction interval is a point, which says nothing about a new draw's spread),
    or an undefined live value."""
    defined = [v for v in values if v is not None and not math.isnan(v)]
    if len(defined) < 2 or len(set(defined)) == 1 or math.isnan(value):
        return None
    return Check(what, value, prediction_interval(defined), prediction_p(defined, value))


def study_estimates(study: SeedStudy, profile: Profile, name: str) -> list[tuple[str, list[float | None], Part | str]]:
    """What a reproduction of reference ``name`` checks: (label, the study's per-seed values, the claim part or the
    checkpoint whose test accuracy it is). A stale study entry raises :class:`StudyError` with the fix."""
    out: list[tuple[str, list[float | None], Part | str]] = [
        (f"test accuracy ({checkpoint})", list(metrics["test_accuracy"]), checkpoint)
        for checkpoint, metrics in study.recipes[name]["checkpoints"].items()
    ]
    for claim in list_claims():
        if claim.id not in study.claims:
            continue
        study.check(claim, profile)
        for part in claim.parts:
            if name in study.claims[claim.id]["parts"].get(part.name, {}).get("values", {}):
                try:
                    out.append(
                        (f"{claim.id} [{part.name}] {part.statistic_name}", study.values(claim, part, name), part)
                    )
                except NotApplicable:
                    continue
    return out


def _holm(name: str, checks: list[Check], level: float) -> Reproduction:
    """Holm's procedure at ``level`` over one reference's checks."""
    rejected = holm([c.p for c in checks], level)
    return Reproduction(
        name, tuple(Check(c.what, c.value, c.interval, c.p, r) for c, r in zip(checks, rejected)), level
    )


def run_level(profile: Profile) -> float:
    """One reference's share of the run's family-wise level (module docstring)."""
    return FAMILY_LEVEL / len(profile.references)


def reproduce(store: ModelStore, name: str) -> Reproduction:
    """Every estimate of reference ``name``'s live weights against the seed study (module docstring)."""
    study = store.study
    if study is None:
        raise StudyError(
            f"profile {store.profile.name!r} has no seed study to reproduce; run {regenerate(store.profile.name)}"
        )
    checks = []
    for what, values, source in study_estimates(study, store.profile, name):
        try:
            if isinstance(source, str):
                live = store.get(name, "warmup" if source == "warmup" else "final").metrics["test_accuracy"]
            else:
                live = point_value(source, store.report(name, source.reads, source.checkpoint))
        except NotApplicable:
            continue
        found = _check(what, values, live)
        checks += [found] if found else []
    return _holm(name, checks, run_level(store.profile))


def held_out(study: SeedStudy, profile: Profile, name: str, seed_index: int) -> Reproduction:
    """The reproduction test applied to one of the study's own seeds, predicted from the others: how often the
    rule fails a draw that reproduces the recipe by construction (its false-alarm rate, k - 1 seeds)."""
    checks = []
    for what, values, _ in study_estimates(study, profile, name):
        rest = values[:seed_index] + values[seed_index + 1 :]
        value = values[seed_index]
        found = _check(what, rest, math.nan if value is None else value)
        checks += [found] if found else []
    return _holm(name, checks, run_level(profile))
