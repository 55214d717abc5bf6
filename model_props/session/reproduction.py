"""Does this machine's training reproduce the seed study? The live run's own weights of a reference (its seed,
trained here) are one more draw from the recipe: each of their per-part estimates, and their test accuracy at
every checkpoint the study records, should fall inside the study's 95 % prediction interval for a new seed
(mean +- t s sqrt(1 + 1/k)). Holm's procedure over all of a reference's estimates keeps the family-wise error at
5 %, so a reference fails only when some estimate is out of line with the study beyond chance. This replaces the
accuracy floors: a model that trained worse than the recipe does fails on its accuracy, one that trained
differently fails on the statistics the claims read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..claims import list_claims
from ..claims.evaluation import point_value
from ..claims.expectations import regenerate
from ..claims.stats import holm, prediction_interval, prediction_p
from ..errors import NotApplicable, StudyError
from .store import ModelStore

__all__ = ["Check", "Reproduction", "reproduce", "FAMILY_LEVEL"]

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

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    def message(self) -> str:
        head = (f"{self.model}: {len(self.failed)} of {len(self.checks)} estimates outside the seed study's prediction "
                f"intervals after Holm's correction (family-wise {FAMILY_LEVEL:.0%})")  # fmt: skip
        return "\n".join([head, *(c.describe() for c in sorted(self.checks, key=lambda c: c.p))])


def _check(what: str, values: list[float | None], value: float) -> Check | None:
    """None where there is nothing to predict from: fewer than two defined study values, a statistic that is
    the same on every seed (its prediction interval is a point, which says nothing about a new draw's spread),
    or an undefined live value."""
    defined = [v for v in values if v is not None and not math.isnan(v)]
    if len(defined) < 2 or len(set(defined)) == 1 or math.isnan(value):
        return None
    return Check(what, value, prediction_interval(defined), prediction_p(defined, value))


def reproduce(store: ModelStore, name: str) -> Reproduction:
    """Every estimate of reference ``name``'s live weights against the seed study (module docstring)."""
    study = store.study
    if study is None:
        raise StudyError(
            f"profile {store.profile.name!r} has no seed study to reproduce; run {regenerate(store.profile.name)}"
        )
    checks = []
    for checkpoint, metrics in study.recipes[name]["checkpoints"].items():
        live = store.get(name, "warmup" if checkpoint == "warmup" else "final").metrics["test_accuracy"]
        found = _check(f"test accuracy ({checkpoint})", list(metrics["test_accuracy"]), live)
        checks += [found] if found else []
    for claim in list_claims():
        if claim.id not in study.claims:
            continue
        study.check(claim, store.profile)
        for part in claim.parts:
            if name not in study.claims[claim.id]["parts"].get(part.name, {}).get("values", {}):
                continue
            try:
                values = study.values(claim, part, name)
                live = point_value(part, store.report(name, part.report, part.checkpoint))
            except NotApplicable:
                continue
            found = _check(f"{claim.id} [{part.name}] {part.statistic_name}", values, live)
            checks += [found] if found else []
    rejected = holm([c.p for c in checks], FAMILY_LEVEL)
    return Reproduction(name, tuple(Check(c.what, c.value, c.interval, c.p, r) for c, r in zip(checks, rejected)))
