"""The seed study: every claim part's per-seed estimates on every recipe, and the expectations they set (design Sec. 3).

A study trains every recipe of a profile with several seeds and computes, per seed, each claim part's
statistic on each model the part reads (:func:`~.evaluation.point_value` on the seed's whole sample). It
stores those per-seed estimates, never a verdict, in ``<profile>-seeds.json`` with the fingerprints of what
produced them: the recipes and the training code, the measurement code and settings, each claim's rules and
statistic code (not the statistics of :mod:`.stats`, which run at test time). From them the current code
computes:

- a claim's *architecture* verdict on a reference over every seed (:meth:`SeedStudy.evaluate`);
- each part's *expectation*: its verdict over the first seeds only (``set_seeds``, 0-2);
- its *confirmation* by the held-out seeds (``confirm_seeds``): each held-out estimate of each model a part
  reads must fall inside the 95 % prediction interval of the setting seeds (:meth:`SeedStudy.confirmation`);
- the prediction p-value of a live run's own seed (:meth:`SeedStudy.prediction_p`).

An entry whose fingerprint no longer matches the code and the profile is stale, and so is a study of another
profile or an older schema: reading it raises :class:`~model_props.errors.StudyError` naming the command that
regenerates the study. It is never used silently.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources, util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotApplicable, StudyError
from ..measurements.registry import code_hash
from ..training.checkpoints import code_hash as training_code_hash
from ..training.profiles import BUILTIN_PACKAGE, Profile
from .base import Claim, Part, below_chance
from .evaluation import SkipPart, evaluate_architecture
from .outcome import ClaimOutcome, PartVerdict
from .stats import prediction_interval, prediction_p

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["SCHEMA_VERSION", "SET_SEEDS", "Expectation", "SeedStudy", "load_study", "study_files", "regenerate",
           "claim_fingerprint", "recipe_fingerprint"]  # fmt: skip

SCHEMA_VERSION = 2
SET_SEEDS = 3  # the first seeds of a study set the expectations; the others confirm them


def regenerate(profile: str) -> str:
    return f"model-props seed-study --profile {profile} --seeds 0 1 2 3 4 --workers 2"


def _module_sha(module: str) -> str:
    spec = util.find_spec(module)
    if spec is None or spec.origin is None:
        raise StudyError(f"cannot find the source of module {module!r}")
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()[:12]


def claim_fingerprint(claim: Claim, profile: Profile) -> dict[str, Any]:
    """What a study entry's per-seed estimates were computed from, beside the recipes: the claim's rules, the
    source of its statistics (its catalogue module and :mod:`.unit_statistics`; the measures they call belong to
    the measurement code), and per report kind it reads the measurement code's source hash and the profile's
    measurement settings."""
    from ..measurements.registry import REPORT_KINDS
    from . import SOURCES

    kinds = sorted({p.report for p in claim.parts})
    fingerprint = {
        "rules": claim.fingerprint(),
        "statistics": _module_sha(SOURCES[claim.id]) + _module_sha(f"{__package__}.unit_statistics"),
        "measurement": {k: code_hash(k) for k in kinds},
        "settings": {k: profile.measurement.select(*REPORT_KINDS[k].settings) for k in kinds},
    }
    return json.loads(json.dumps(fingerprint))  # as the study stores it (tuples become lists)


def recipe_fingerprint(profile: Profile, name: str) -> str:
    return f"{profile.recipe(name).fingerprint()}/{training_code_hash()}"


@dataclass(frozen=True)
class Expectation:
    """A claim's expected outcome on a reference, per part, from the study's setting seeds."""

    parts: Mapping[str, PartVerdict]
    set_seeds: tuple[int, ...]
    confirm_seeds: tuple[int, ...]
    confirmed: Mapping[str, tuple[int, int]]  # part -> (held-out estimates inside the prediction interval, total)
    evidence: str

    @property
    def contradicted(self) -> list[str]:
        return [name for name, verdict in self.parts.items() if verdict == "contradicted"]

    def reason(self) -> str:
        """The reason of a known failure's xfail mark: the paper's evidence and what the setting seeds showed."""
        parts = ", ".join(f"[{n}] {v}" for n, v in self.parts.items() if v != "skipped")
        return (f"{self.evidence}. Not reproduced at this scale: contradicted over the study's seeds "
                f"{list(self.set_seeds)} ({parts}).")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {"parts": dict(self.parts), "set_seeds": list(self.set_seeds), "confirm_seeds": list(self.confirm_seeds),
                "confirmed": {k: list(v) for k, v in self.confirmed.items()}}  # fmt: skip


@dataclass(frozen=True)
class SeedStudy:
    """A profile's seed study as loaded from ``<profile>-seeds.json`` (see the module docstring)."""

    profile: str
    seeds: tuple[int, ...]
    recipes: Mapping[str, Mapping[str, Any]]
    claims: Mapping[str, Mapping[str, Any]]
    provenance: Mapping[str, Any]
    source: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> SeedStudy:
        return cls(data["profile"], tuple(data["seeds"]), data["recipes"], data["claims"], data.get("provenance", {}),
                   source)  # fmt: skip

    @property
    def set_seeds(self) -> tuple[int, ...]:
        return self.seeds[:SET_SEEDS]

    @property
    def confirm_seeds(self) -> tuple[int, ...]:
        return self.seeds[SET_SEEDS:]

    def stale(self, claim: Claim, profile: Profile) -> list[str]:
        """Why the study's entry for ``claim`` no longer speaks for the code and the profile (empty: it does)."""
        entry = self.claims.get(claim.id)
        if entry is None:
            return [f"it has no entry for {claim.id}"]
        now, then = claim_fingerprint(claim, profile), entry.get("fingerprint", {})
        reasons = [f"the claim's {what} changed" for what in ("rules", "statistics") if now[what] != then.get(what)]
        reasons += [f"the {k} measurement {what} changed" for what, by_kind in (("code", "measurement"), ("settings", "settings"))
                    for k, v in now[by_kind].items() if then.get(by_kind, {}).get(k) != v]  # fmt: skip
        read = {m for record in entry["parts"].values() for m in record["values"]}
        for name in sorted(read | {p.partner for p in claim.parts if p.partner and read}):  # a pair's other model
            recipe = self.recipes.get(name, {})
            if name not in profile.recipes or recipe.get("fingerprint") != recipe_fingerprint(profile, name):
                reasons.append(f"recipe {name!r} or the training code changed")
        return reasons

    def check(self, claim: Claim, profile: Profile) -> None:
        if profile.name != self.profile:
            raise StudyError(f"the seed study {self.source} is of profile {self.profile!r}, not {profile.name!r}; "
                             f"regenerate it: {regenerate(profile.name)}")  # fmt: skip
        reasons = self.stale(claim, profile)
        if reasons:
            raise StudyError(f"the seed study's entry for {claim.id} is stale ({'; '.join(reasons)}); regenerate "
                             f"{self.source or 'it'}: {regenerate(self.profile)}")  # fmt: skip

    def evaluated_on(self, claim: Claim) -> list[str]:
        return list(self.claims.get(claim.id, {}).get("evaluated_on", []))

    def values(self, claim: Claim, part: Part, name: str, seeds: Sequence[int] | None = None,
               model: str | None = None) -> list[float | None]:  # fmt: skip
        """Per-seed estimates of ``part`` on model ``name`` (read for the model under test ``model``), or
        NotApplicable with the reason the study recorded (the part does not apply, or finds nothing to read)."""
        record = self.claims[claim.id]["parts"].get(part.name, {})
        for where, key in (("not_applicable", model), ("unreadable", name)):
            if key is not None and key in record.get(where, {}):
                raise NotApplicable(record[where][key])
        if name not in record.get("values", {}):
            raise NotApplicable(f"the {self.profile} seed study has no estimates of {name} for this part")
        return [record["values"][name][self.seeds.index(s)] for s in (seeds or self.seeds)]

    def accuracy(self, name: str, checkpoint: str, seeds: Sequence[int] | None = None) -> list[float]:
        per_seed = self.recipes[name]["checkpoints"][checkpoint]["test_accuracy"]
        return [per_seed[self.seeds.index(s)] for s in (seeds or self.seeds)]

    def recipe_below_chance(self, name: str, checkpoint: str, seeds: Sequence[int] | None = None) -> str | None:
        """Why recipe ``name`` cannot be read at ``checkpoint``: it is below twice chance on a seed; or None."""
        entry = self.recipes.get(name)
        if entry is None or checkpoint not in entry["checkpoints"]:
            return None
        labels = {f"seed {s}": a for s, a in zip(seeds or self.seeds, self.accuracy(name, checkpoint, seeds))}
        return below_chance(name, checkpoint, labels, entry["num_classes"])

    def below_chance(self, part: Part, model: str, seeds: Sequence[int] | None = None) -> str | None:
        """Why ``part`` cannot read the models it reads for ``model``: one is below twice chance on a seed."""
        names = dict.fromkeys(n for n in (part.subject or model, part.versus) if n)
        return next((r for n in names if (r := self.recipe_below_chance(n, part.checkpoint, seeds))), None)

    def evaluate(self, claim: Claim, model: str, *, seeds: Sequence[int] | None = None,
                 skip_part: SkipPart = lambda part: None) -> ClaimOutcome:  # fmt: skip
        """The claim's architecture-scope outcome on reference ``model`` over ``seeds`` (default: all); a part is
        skipped where it reads a model below twice chance on one of these seeds."""
        seeds = tuple(seeds or self.seeds)

        def per_seed(part: Part, name: str | None) -> list[float | None]:
            return self.values(claim, part, name or model, seeds, model=model)

        def skip(part: Part) -> str | None:
            return skip_part(part) or self.below_chance(part, model, seeds)

        return evaluate_architecture(claim, model, None, per_seed, seeds=seeds, skip_part=skip)

    def expectation(self, claim: Claim, model: str, *, skip_part: SkipPart = lambda part: None) -> Expectation:
        """Each part's verdict over the setting seeds, and how the held-out seeds confirm it."""
        outcome = self.evaluate(claim, model, seeds=self.set_seeds, skip_part=skip_part)
        confirmed = {
            p.part.name: self._confirmed(claim, p.part, model) for p in outcome.parts if p.verdict != "skipped"
        }
        return Expectation({p.part.name: p.verdict for p in outcome.parts}, self.set_seeds, self.confirm_seeds,
                           confirmed, claim.evidence)  # fmt: skip

    def _confirmed(self, claim: Claim, part: Part, model: str) -> tuple[int, int]:
        names = dict.fromkeys((part.subject or model, part.versus))
        counts = [self._confirmed_one(claim, part, n) for n in names if n]
        return sum(i for i, _ in counts), sum(t for _, t in counts)

    def confirmation(self, claims: Sequence[Claim]) -> tuple[int, int]:
        """(held-out estimates inside their prediction interval, all held-out estimates) over every claim part and
        model the study measured, each counted once."""
        seen: dict[tuple[str, str, str], tuple[int, int]] = {}
        for claim in claims:
            for model in self.evaluated_on(claim):
                for part in claim.parts:
                    if model in self.claims[claim.id]["parts"].get(part.name, {}).get("not_applicable", {}):
                        continue
                    for name in dict.fromkeys(n for n in (part.subject or model, part.versus) if n):
                        try:
                            seen.setdefault((claim.id, part.name, name), self._confirmed_one(claim, part, name))
                        except (NotApplicable, ValueError):  # unreadable, or undefined on too many seeds
                            continue
        return sum(i for i, _ in seen.values()), sum(t for _, t in seen.values())

    def _confirmed_one(self, claim: Claim, part: Part, name: str) -> tuple[int, int]:
        low, high = prediction_interval(self.values(claim, part, name, self.set_seeds))
        held = [v for v in self.values(claim, part, name, self.confirm_seeds) if v is not None and not math.isnan(v)]
        return sum(low <= v <= high for v in held), len(held)

    def prediction_p(self, claim: Claim, part: Part, name: str, value: float) -> float:
        """Two-sided p-value of a new seed's estimate ``value`` under the study's predictive distribution."""
        return prediction_p(self.values(claim, part, name), value)


def study_files(profile: str, user_dir: Path | None = None) -> list[Any]:
    """Where ``<profile>-seeds.json`` may live: the user's recipes folder first, then the built-in data."""
    name = f"{profile}-seeds.json"
    candidates: list[Traversable] = [user_dir / name] if user_dir is not None else []
    candidates.append(resources.files(BUILTIN_PACKAGE).joinpath(name))
    return [c for c in candidates if c.is_file()]


def load_study(profile: str, user_dir: Path | None = None) -> SeedStudy | None:
    """The profile's seed study, or None where there is none. A study of another schema is an error naming the
    command that regenerates it."""
    files = study_files(profile, user_dir)
    if not files:
        return None
    data = json.loads(files[0].read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        raise StudyError(f"{files[0]} has schema version {data.get('schema_version')}, this model-props reads "
                         f"{SCHEMA_VERSION}; regenerate it: {regenerate(profile)}")  # fmt: skip
    return SeedStudy.from_json(data, str(files[0]))
