"""Expectations from the seed study: what holds across training seeds (design Sec. 3).

Training is deterministic on one machine but not across machines, so no test may rest on one seed's
weights. The study trains every recipe of a profile with several seeds, runs the claim suite on each seed
and keeps, per recipe, the test accuracy and NLL of every seed, and per claim x model, every part's verdict
and value of every seed. It ships as ``<profile>-seeds.json`` (with a readable ``.md``) beside the profile.

From it, per claim x model (:meth:`SeedStudy.expectation`):

- supported on every seed -> **pass** (the test must pass);
- contradicted on every seed -> **known failure**, a strict xfail (an XPASS breaks the build);
- anything else (supported on some seeds, or inconclusive on any) -> **seed-dependent**, a non-strict xfail
  whose reason gives the per-seed tally. An inconclusive seed sits on the threshold, where another seed or
  machine may land on either side, so it never backs a strict mark.

and per recipe an accuracy floor (:meth:`SeedStudy.floor`): the worst seed's test accuracy less
:data:`FLOOR_MARGIN`. Entries whose recipe or claim changed since the study (their fingerprints differ)
are ignored; a library test fails until the study is rerun.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..training.profiles import BUILTIN_PACKAGE

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "FLOOR_MARGIN",
    "SCHEMA_VERSION",
    "Expectation",
    "SeedStudy",
    "load_study",
    "study_files",
    "decisive_part",
    "format_part",
]

FLOOR_MARGIN = 0.05  # accuracy floors sit 5 points below the worst seed
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Expectation:
    kind: Literal["pass", "known-failure", "seed-dependent"]
    reason: str = ""
    tally: tuple[int, int] = (0, 0)  # (seeds supported, seeds studied)


def format_part(part: Mapping[str, Any]) -> str:
    if part.get("value") is None:
        return f"[{part['part']}] {part['verdict']}"
    low, high = part["interval"]
    return f"[{part['part']}] {part['verdict']} {part['value']:+.3g} [{low:+.3g}, {high:+.3g}]"


def decisive_part(parts: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    order = {"contradicted": 0, "inconclusive": 1, "supported": 2}
    decided = [p for p in parts if p["verdict"] in order]
    return min(decided, key=lambda p: order[p["verdict"]]) if decided else None


@dataclass(frozen=True)
class SeedStudy:
    """A profile's seed study as loaded from ``<profile>-seeds.json``."""

    profile: str
    seeds: tuple[int, ...]
    recipes: Mapping[str, Mapping[str, Any]]  # name -> {fingerprint, test_accuracy: [per seed], ...}
    claims: Mapping[str, Mapping[str, Any]]  # id -> {fingerprint, models: {model: [per-seed record]}}
    provenance: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> SeedStudy:
        return cls(
            data["profile"], tuple(data["seeds"]), data["recipes"], data["claims"], data.get("provenance", {}), source
        )

    def floor(self, recipe: Any) -> float | None:
        """The accuracy floor of a recipe (worst seed - margin), or None if the study does not cover it."""
        entry = self.recipes.get(recipe.name)
        if entry is None or entry.get("fingerprint") != recipe.fingerprint():
            return None
        return min(entry["test_accuracy"]) - FLOOR_MARGIN

    def never_replicates(self, claim: Any) -> bool:
        """The claim is a known failure on every model the study measured it on."""
        models = self.claims.get(claim.id, {}).get("models", {})
        kinds = [e.kind for m in models if (e := self.expectation(claim, m)) is not None]
        return bool(kinds) and all(k == "known-failure" for k in kinds)

    def expectation(self, claim: Any, model: str) -> Expectation | None:
        """What the study says of ``claim`` on ``model``; None if it did not study that pair (or it changed)."""
        entry = self.claims.get(claim.id)
        if entry is None or entry.get("fingerprint") != claim.fingerprint():
            return None
        records = entry["models"].get(model)
        if not records or all(r["verdict"] == "skipped" for r in records):
            return None
        verdicts = [r["verdict"] for r in records]
        n, k = len(verdicts), verdicts.count("supported")
        if k == n:
            return Expectation("pass", tally=(k, n))
        per_seed = "; ".join(
            f"seed {r['seed']} {r['verdict']}" + (f", {format_part(d)}" if (d := decisive_part(r["parts"])) else "")
            for r in records
        )
        study = f"{self.profile} seed study, {n} training seeds"
        if k == 0 and all(v == "contradicted" for v in verdicts):
            return Expectation(
                "known-failure",
                f"{claim.evidence}. Not reproduced at this scale: contradicted on every seed ({study}: {per_seed})",
                (k, n),
            )
        return Expectation(
            "seed-dependent",
            f"{claim.evidence}. Seed-dependent at this scale: supported on {k} of {n} seeds ({study}: {per_seed})",
            (k, n),
        )


def study_files(profile: str, user_dir: Path | None = None) -> list[Any]:
    """Where ``<profile>-seeds.json`` may live: the user's recipes folder first, then the built-in data."""
    name = f"{profile}-seeds.json"
    candidates: list[Traversable] = [user_dir / name] if user_dir is not None else []
    candidates.append(resources.files(BUILTIN_PACKAGE).joinpath(name))
    return [c for c in candidates if c.is_file()]


def load_study(profile: str, user_dir: Path | None = None) -> SeedStudy | None:
    """The profile's seed study, or None where there is none (then nothing is marked and no floor is set)."""
    files = study_files(profile, user_dir)
    if not files:
        return None
    data = json.loads(files[0].read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        return None
    return SeedStudy.from_json(data, str(files[0]))
