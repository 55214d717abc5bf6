"""The seed study: every claim part's per-seed estimates on every recipe, read back as evidence.

A study trains every recipe of a profile with several seeds and computes, per seed, each claim part's statistic
on each model the part reads (:func:`~.evidence.point_value` on the seed's whole sample). It stores those per-seed
estimates, never a verdict, in ``<profile>-seeds.json`` with the fingerprints of what produced them: the recipes
and the training code, the measurement code and settings, each claim's rules and statistics code (its catalogue
module and every catalogue module it takes helpers from, transitively; not :mod:`.stats`, which runs at test
time). From them the current code computes:

- a claim's *architecture* verdict on a reference over every seed (:meth:`SeedStudy.evaluate`), each comparison
  paired by seed index: what the reviewed expectation snapshot (:mod:`.snapshot`) records and the claim tests
  assert;
- how the study *replicates* itself (:meth:`SeedStudy.replication`, :meth:`SeedStudy.confirmation`): the first
  seeds (``set_seeds``, 0-2) predict the held-out ones (``confirm_seeds``); each held-out estimate of each model a
  part reads should fall inside the 95 % prediction interval of the setting seeds. ``seed-study`` refuses to write
  a study where less than 90 % do. A part whose verdict over the setting seeds was inconclusive and that all the
  seeds decide, with every held-out estimate inside its interval, was *decided with more seeds*; one with a
  held-out estimate outside *did not replicate*.

An entry is stale where its data changed (the claim's rules, the measurement settings of a report kind it reads)
or where the code no longer computes what built it: its canaries moved (:mod:`.canaries`, judged by the session
that runs the claims and attached as :attr:`SeedStudy.moved`). The code hashes an entry records say which code
built it; they are not compared, so a rename, a docstring or another torch stales nothing by itself. A stale entry,
and a study of another profile or an older schema, raises :class:`~model_props.errors.StudyError` naming the
command that regenerates the study. It is never used silently.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..claims.base import Claim, Part, below_chance
from ..errors import NotApplicable, StudyError
from ..training.profiles import BUILTIN_PACKAGE, Profile
from .canaries import ALL
from .evidence import Evidence, PartEvidence, PerSeed, Skipped
from .fingerprint import claim_fingerprint, recipe_fingerprint
from .judge import judge
from .outcome import ClaimOutcome, Expected, PartVerdict
from .prediction import prediction_interval

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["SCHEMA_VERSION", "SET_SEEDS", "STUDY_SEEDS", "CONFIRMATION_TARGET", "IN_SHARDS", "Replication", "Confirmation", "SeedStudy",
           "load_study", "read_fixture", "regenerate", "claim_fingerprint", "recipe_fingerprint"]  # fmt: skip

SCHEMA_VERSION = 3  # 3: the two-stage design (each training seed its own measurement sample)
SET_SEEDS = 3  # the first seeds of a study predict the others (held out)
CONFIRMATION_TARGET = 0.90  # the least share of held-out estimates inside their prediction interval a study needs


STUDY_SEEDS = tuple(range(10))  # a study's seeds unless told otherwise: the first three set, the rest confirm


def regenerate(profile: str, seeds: Sequence[int] = STUDY_SEEDS) -> str:
    """The command that rebuilds a profile's study of ``seeds`` in one run (:data:`IN_SHARDS`: seed by seed)."""
    return f"model-props seed-study --profile {profile} --seeds {' '.join(map(str, seeds))} --workers 2"


IN_SHARDS = ("or in shards that land one seed at a time: model-props seed-study --plan NAME --seeds ..., then --seed K "
             "for each seed, then --assemble")  # fmt: skip


Category = Literal["confirmed", "decided with more seeds", "undecided with more seeds", "did not replicate"]


@dataclass(frozen=True)
class Replication:
    """How a part's study replicates itself: its verdict over the setting seeds and over every seed, and the
    held-out estimates inside the setting seeds' 95 % prediction interval (of every model the part reads)."""

    set_verdict: PartVerdict
    verdict: PartVerdict
    inside: int
    total: int

    @property
    def category(self) -> Category:
        if self.inside < self.total or (
            self.set_verdict != self.verdict and "inconclusive" not in (self.set_verdict, self.verdict)
        ):
            return "did not replicate"
        if self.set_verdict == self.verdict:
            return "confirmed"
        return "decided with more seeds" if self.set_verdict == "inconclusive" else "undecided with more seeds"


@dataclass(frozen=True)
class Confirmation:
    """Held-out estimates inside their prediction interval, of all, over every part and model a study measured
    (each counted once); ``outside`` names each estimate that is not."""

    inside: int
    total: int
    outside: tuple[str, ...]

    @property
    def share(self) -> float:
        return self.inside / self.total if self.total else 1.0

    @property
    def enough(self) -> bool:
        return self.share >= CONFIRMATION_TARGET


@dataclass(frozen=True)
class SeedStudy:
    """A profile's seed study as loaded from ``<profile>-seeds.json`` (see the module docstring)."""

    profile: str
    seeds: tuple[int, ...]
    recipes: Mapping[str, Mapping[str, Any]]
    claims: Mapping[str, Mapping[str, Any]]
    provenance: Mapping[str, Any]
    source: str = ""
    date: str = ""
    moved: Mapping[str, Sequence[str]] | None = None  # canary reasons by claim id (ALL: every claim); None: unjudged
    generation: str = ""  # the study generation it was assembled from (:mod:`model_props.study.generation`)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> SeedStudy:
        return cls(data["profile"], tuple(data["seeds"]), data["recipes"], data["claims"], data.get("provenance", {}),
                   source, data.get("date", ""), generation=data.get("generation", ""))  # fmt: skip

    @property
    def identity(self) -> dict[str, Any]:
        """What names this study generation: its date and seeds (what its canary record speaks for)."""
        return {"date": self.date, "seeds": list(self.seeds)}

    @property
    def set_seeds(self) -> tuple[int, ...]:
        return self.seeds[:SET_SEEDS]

    @property
    def confirm_seeds(self) -> tuple[int, ...]:
        return self.seeds[SET_SEEDS:]

    def stale(self, claim: Claim, profile: Profile) -> list[str]:
        """Why the study's entry for ``claim`` no longer speaks for the code and the profile (empty: it does): its
        data changed, or its canaries moved (:attr:`moved`, where the session judged them)."""
        entry = self.claims.get(claim.id)
        if entry is None:
            return [f"it has no entry for {claim.id}"]
        now, then = claim_fingerprint(claim, profile), entry.get("fingerprint", {})
        reasons = ["the claim's rules changed"] if now["rules"] != then.get("rules") else []
        reasons += [f"the {k} measurement settings changed" for k, v in now["settings"].items()
                    if then.get("settings", {}).get(k) != v]  # fmt: skip
        moved = self.moved or {}
        return reasons + [*moved.get(ALL, ()), *moved.get(claim.id, ())]

    def check(self, claim: Claim, profile: Profile) -> None:
        if profile.name != self.profile:
            raise StudyError(f"the seed study {self.source} is of profile {self.profile!r}, not {profile.name!r}; "
                             f"regenerate it: {regenerate(profile.name)}")  # fmt: skip
        reasons = self.stale(claim, profile)
        if reasons:
            raise StudyError(f"the seed study's entry for {claim.id} is stale ({'; '.join(reasons)}); regenerate "
                             f"{self.source or 'it'}: {regenerate(self.profile, self.seeds)} ({IN_SHARDS})")  # fmt: skip

    def judged(self, moved: Mapping[str, Sequence[str]]) -> SeedStudy:
        """This study with its canaries judged (:attr:`moved`)."""
        return dataclasses.replace(self, moved=moved)

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

    def part_evidence(self, claim: Claim, part: Part, model: str, seeds: Sequence[int]) -> PartEvidence:
        """What the study holds of ``part`` for reference ``model`` over ``seeds``: the per-seed estimates of the
        models it reads (paired by seed index), or why it cannot be read."""
        if model in self.claims[claim.id]["parts"].get(part.name, {}).get("not_applicable", {}):
            return Skipped(self.claims[claim.id]["parts"][part.name]["not_applicable"][model])
        if (reason := self.below_chance(part, model, seeds)) is not None:
            return Skipped(reason)
        try:
            subject = tuple(self.values(claim, part, part.subject or model, seeds, model=model))
            versus = tuple(self.values(claim, part, part.versus, seeds, model=model)) if part.versus else None
        except NotApplicable as exc:
            return Skipped(str(exc))
        return PerSeed(part.subject or model, subject, part.versus, versus, paired=True)

    def evidence(self, claim: Claim, model: str, *, seeds: Sequence[int] | None = None,
                 expected: Expected | None = None) -> Evidence:  # fmt: skip
        """The claim's evidence on reference ``model`` over ``seeds`` (default: all) at architecture scope."""
        seeds = tuple(seeds or self.seeds)
        parts = {p.name: self.part_evidence(claim, p, model, seeds) for p in claim.parts}
        return Evidence(claim, model, "architecture", parts, seeds, expected)

    def evaluate(self, claim: Claim, model: str, *, seeds: Sequence[int] | None = None,
                 expected: Expected | None = None) -> ClaimOutcome:  # fmt: skip
        """The claim's architecture-scope outcome on reference ``model`` over ``seeds`` (default: all)."""
        return judge(self.evidence(claim, model, seeds=seeds, expected=expected))

    def _held_out(self, claim: Claim, part: Part, name: str) -> tuple[int, int, list[str]]:
        """(held-out estimates of ``name`` inside the setting seeds' prediction interval, all of them, a label of
        each outside)."""
        setting = [v for v in self.values(claim, part, name, self.set_seeds) if v is not None and not math.isnan(v)]
        if len(setting) < 2 or len(set(setting)) == 1:  # nothing to predict a spread from (as in the reproduction)
            return 0, 0, []
        low, high = prediction_interval(setting)
        held = [(s, v) for s, v in zip(self.confirm_seeds, self.values(claim, part, name, self.confirm_seeds))
                if v is not None and not math.isnan(v)]  # fmt: skip
        outside = [f"{claim.id} [{part.name}] {name} seed {s}: {v:.4g} outside [{low:.4g}, {high:.4g}]"
                   for s, v in held if not low <= v <= high]  # fmt: skip
        return len(held) - len(outside), len(held), outside

    def _reads(self, claim: Claim, part: Part, model: str) -> list[str]:
        return list(dict.fromkeys(n for n in (part.subject or model, part.versus) if n))

    def replication(self, claim: Claim, model: str) -> dict[str, Replication]:
        """Per measured part of ``claim`` on reference ``model``: how the held-out seeds replicate the setting
        seeds (:class:`Replication`)."""
        early = {p.part.name: p.verdict for p in self.evaluate(claim, model, seeds=self.set_seeds).parts}
        found = {}
        for outcome in self.evaluate(claim, model).parts:
            if outcome.verdict == "skipped":
                continue
            counts = [self._held_out(claim, outcome.part, n) for n in self._reads(claim, outcome.part, model)]
            found[outcome.part.name] = Replication(early[outcome.part.name], outcome.verdict,
                                                   sum(c[0] for c in counts), sum(c[1] for c in counts))  # fmt: skip
        return found

    def confirmation(self, claims: Sequence[Claim]) -> Confirmation:
        """Held-out estimates inside their prediction interval over every claim part and model the study measured,
        each counted once (:class:`Confirmation`)."""
        seen: dict[tuple[str, str, str], tuple[int, int, list[str]]] = {}
        for claim in claims:
            for model in self.evaluated_on(claim):
                for part in claim.parts:
                    if model in self.claims[claim.id]["parts"].get(part.name, {}).get("not_applicable", {}):
                        continue
                    for name in self._reads(claim, part, model):
                        try:
                            seen.setdefault((claim.id, part.name, name), self._held_out(claim, part, name))
                        except NotApplicable:  # the study records nothing to read
                            continue
        outside = tuple(label for _, _, labels in seen.values() for label in labels)
        return Confirmation(sum(i for i, _, _ in seen.values()), sum(t for _, t, _ in seen.values()), outside)


def read_fixture(name: str, user_dir: Path | None, schema_version: int, remedy: str) -> tuple[dict, str] | None:
    """The JSON of fixture ``name`` from the user's recipes folder first, then the built-in data, with the path it
    was read from; None where neither has it. Another schema is an error naming ``remedy`` (the command to run)."""
    candidates: list[Traversable] = [user_dir / name] if user_dir is not None else []
    candidates.append(resources.files(BUILTIN_PACKAGE).joinpath(name))
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        return None
    data = json.loads(found.read_text())
    if data.get("schema_version") != schema_version:
        raise StudyError(f"{found} has schema version {data.get('schema_version')}, this model-props reads "
                         f"{schema_version}; {remedy}")  # fmt: skip
    return data, str(found)


def load_study(profile: str, user_dir: Path | None = None) -> SeedStudy | None:
    """The profile's seed study (``<profile>-seeds.json``), or None where there is none. A study of another schema
    is an error naming the command that regenerates it."""
    read = read_fixture(f"{profile}-seeds.json", user_dir, SCHEMA_VERSION, f"regenerate it: {regenerate(profile)}")
    return None if read is None else SeedStudy.from_json(*read)
