"""A seed study built in shards: a generation is planned once, then built one seed per command, each seed committed.

A study takes about one to one and a half hours a seed on two cores (each shard records its time). Built as one run it can land nothing before its last seed, and
it resumes only from the machine's cache. So a study *generation* lives in the repository, in
``studies/<profile>/<generation>/`` beside the profile's study (the recipes folder, or ./fixtures):

- ``model-props seed-study --plan NAME --seeds 0 1 ... 9`` writes ``generation.json``: its seeds, the data it is of
  (each recipe's :func:`~model_props.verdicts.canaries.recipe_data`, each claim's rules and measurement settings,
  the measurement seed) and, where the active study is of that same data, the seeds it takes from it (``base``);
- ``model-props seed-study --seed K`` trains and measures seed K alone and writes ``seed-K.json``: its estimates
  (:func:`~.run.seed_estimates`), the first canary seed as the code that built it computes it
  (:func:`~.canaries.run_canaries`), that code's :func:`~model_props.verdicts.canaries.code_digest` per claim, the
  machine and the commit. A shard that exists is never rebuilt: a build resumes from the committed shards;
- ``model-props seed-study --assemble`` checks every shard against the plan and against the study's canary record
  (a shard's canaries must reproduce the record, or move only where :meth:`~model_props.verdicts.canaries.
  CanaryRecord.machine_excused` takes the move as its machine's), merges the shards with the base seeds into
  ``<profile>-seeds.json`` (the held-out seeds must confirm the setting seeds), moves the canary record over to the
  new study, and rewrites the expectation snapshot, printing its diff for review.

A generation is of the code its canaries say it is, not of a commit: code that reproduces the canaries may build
any of its shards, on any machine, and every shard records where it was built (the study's page lists them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..cache import atomic_write
from ..claims import get_claim, list_claims
from ..config.settings import Settings
from ..errors import StudyError
from ..provenance import commit, provenance
from ..verdicts.canaries import ALL, CanaryRecord, code_digest, machine_kind, recipe_data
from ..verdicts.study import SET_SEEDS, claim_fingerprint, load_study
from .canaries import CANARY, load_canaries, run_canaries
from .checks import check_seeds
from .run import merge_seeds, study_data, study_estimates, write_study

__all__ = ["GENERATION_SCHEMA", "Generation", "generations", "plan_generation", "build_shard", "assemble"]

GENERATION_SCHEMA = 1
_PLAN = "generation.json"


def _folder(settings: Settings, root: Path | None = None) -> Path:
    """Where the profile's generations are: ``studies/<profile>/`` in ``root`` (default: the recipes folder, or
    ./fixtures)."""
    return (root or settings.recipes.user_dir or Path.cwd() / "fixtures") / "studies" / settings.profile


def generation_data(settings: Settings) -> dict[str, Any]:
    """What a generation is of, apart from code: the recipes, each claim's rules and settings, the measurement seed."""
    profile = settings.profile_data
    claims = {c.id: claim_fingerprint(c, profile) for c in list_claims()}
    return {
        "measurement_seed": settings.seed,
        "recipes": {n: recipe_data(profile.recipes[n]) for n in profile.references + profile.variants},
        "claims": {cid: {"rules": f["rules"], "settings": f["settings"]} for cid, f in claims.items()},
    }


def _changes(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between two :func:`generation_data`, by name."""
    found = [] if then["measurement_seed"] == now["measurement_seed"] else ["the measurement seed"]
    found += [f"recipe {n}" for n in sorted(set(then["recipes"]) | set(now["recipes"]))
              if then["recipes"].get(n) != now["recipes"].get(n)]  # fmt: skip
    return found + [f"the rules or settings of {c}" for c in sorted(set(then["claims"]) | set(now["claims"]))
                    if then["claims"].get(c) != now["claims"].get(c)]  # fmt: skip


def _write(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON atomically (:func:`~model_props.cache.atomic_write`: a killed build leaves no half shard)."""
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(data, indent=1) + "\n"))


@dataclass(frozen=True)
class Generation:
    """A planned study generation and the shards built of it so far (``generation.json`` and ``seed-K.json``)."""

    path: Path
    plan: Mapping[str, Any]
    shards: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Generation:
        plan = json.loads((path / _PLAN).read_text())
        if plan.get("schema_version") != GENERATION_SCHEMA:
            raise StudyError(f"{path / _PLAN} has schema {plan.get('schema_version')}, this model-props reads "
                             f"{GENERATION_SCHEMA}; plan the generation again (model-props seed-study --plan)")  # fmt: skip
        shards = {s: json.loads((path / f"seed-{s}.json").read_text()) for s in plan["seeds"]
                  if (path / f"seed-{s}.json").is_file()}  # fmt: skip
        return cls(path, plan, shards)

    @property
    def name(self) -> str:
        return str(self.plan["generation"])

    @property
    def base_seeds(self) -> list[int]:
        return list(self.plan["base"]["seeds"]) if self.plan.get("base") else []

    @property
    def missing(self) -> list[int]:
        return [s for s in self.plan["seeds"] if s not in self.base_seeds and s not in self.shards]

    def superseded(self, active: str | None) -> bool:
        """Whether the committed seed study's generation ``active`` was planned after this one (generations are
        named by the date they were planned), so that this one is never built on or assembled again."""
        return active is not None and self.name < active

    def pending(self, active: str | None) -> bool:
        """Whether it is still to be built or assembled: neither the committed seed study's generation ``active``
        nor :meth:`superseded` by it."""
        return self.name != active and not self.superseded(active)

    def status(self, active: str | None = None) -> str:
        """One line: how far the generation is built; ``active``: the generation of the committed seed study (one
        built and assembled, or superseded, says so)."""
        built = len(self.base_seeds) + len(self.shards)
        base = f" ({len(self.base_seeds)} from the study of {self.plan['base']['date']})" if self.base_seeds else ""
        if self.superseded(active):
            todo = f"; superseded by generation {active!r}, the committed seed study's"
        elif self.missing:
            todo = f"; to build: seeds {', '.join(map(str, self.missing))}"
        else:
            todo = "; assembled, the committed seed study" if self.name == active else "; ready to assemble"
        return f"study generation {self.name!r} of {self.plan['profile']}: {built} of {len(self.plan['seeds'])} seeds{base}{todo}"

    def problems(self, settings: Settings) -> list[str]:
        """Why the generation cannot be built on or assembled with these settings: its data, or a shard's, differ."""
        now = generation_data(settings)
        found = [f"it was planned with other {', '.join(c)}" for c in [_changes(self.plan["data"], now)] if c]
        for seed, shard in self.shards.items():
            if shard["profile"] != self.plan["profile"] or shard["generation"] != self.name or shard["seed"] != seed:
                found.append(f"seed-{seed}.json is a shard of another generation or seed")
            elif changed := _changes(shard["data"], self.plan["data"]):
                found.append(f"seed-{seed}.json was built with other {', '.join(changed)}")
        return found


def generations(settings: Settings, root: Path | None = None) -> list[Generation]:
    """Every generation planned for the settings' profile (in ``root``, default as :func:`_folder`), in name order."""
    folder = _folder(settings, root)
    return [Generation.load(p) for p in sorted(folder.iterdir()) if (p / _PLAN).is_file()] if folder.is_dir() else []


def _generation(settings: Settings, name: str | None) -> Generation:
    """The generation ``name``, or the only one not yet assembled."""
    found = generations(settings)
    study = load_study(settings.profile, settings.recipes.user_dir)
    active = study.generation if study is not None else None
    if name is None:
        found = [g for g in found if g.pending(active)]
        if len(found) != 1:
            raise StudyError(f"{len(found)} unassembled study generations in {_folder(settings)}"
                             f"{': ' + ', '.join(g.name for g in found) if found else ''}; name one with --generation, "
                             f"or plan one: model-props seed-study --plan NAME --seeds 0 1 ... 9")  # fmt: skip
        return found[0]
    if not any(g.name == name for g in found):
        raise StudyError(f"no study generation {name!r} in {_folder(settings)}; plan it: model-props seed-study "
                         f"--plan {name} --seeds 0 1 ... 9")  # fmt: skip
    return next(g for g in found if g.name == name)


def plan_generation(settings: Settings, name: str, seeds: Sequence[int]) -> Generation:
    """Write ``generation.json`` of a new generation with ``seeds``; its base: the active study's seeds, where the
    active study holds no other seed and is of the same data (recipes, rules, settings)."""
    check_seeds(settings, seeds)
    path = _folder(settings) / name
    if (path / _PLAN).exists():
        raise StudyError(f"{path / _PLAN} exists: a generation is planned once")
    if len(seeds) < SET_SEEDS + 2:
        raise StudyError(f"a generation needs at least {SET_SEEDS + 2} seeds ({SET_SEEDS} set, 2 held out)")
    data, base = generation_data(settings), None
    study = load_study(settings.profile, settings.recipes.user_dir)
    record = load_canaries(settings.profile, settings.recipes.user_dir)
    if (
        study is not None
        and record is not None
        and set(study.seeds) <= set(seeds)
        and record.recipes == data["recipes"]
        and not any(study.stale(c, settings.profile_data) for c in list_claims())
    ):
        base = study.identity
    plan = {"schema_version": GENERATION_SCHEMA, "profile": settings.profile, "generation": name,
            "seeds": list(seeds), "base": base, "planned": date.today().isoformat(), "data": data}  # fmt: skip
    _write(path / _PLAN, plan)
    return Generation.load(path)


def build_shard(settings: Settings, seed: int, name: str | None = None, threads: int | None = None) -> Path:
    """Train and measure ``seed`` of the generation and write its shard (module docstring); an existing shard is
    kept as it is."""
    generation = _generation(settings, name)
    path = generation.path / f"seed-{seed}.json"
    if seed not in generation.plan["seeds"] or seed in generation.base_seeds:
        raise StudyError(f"seed {seed} is not one to build of {generation.status()}")
    if path.is_file():
        print(f"{path} is built already (delete it to rebuild it)", flush=True)
        return path
    if problems := generation.problems(settings):
        raise StudyError(f"cannot build {generation.name}: {'; '.join(problems)}; plan a new generation")
    profile, start = settings.profile_data, time.perf_counter()
    estimates = study_estimates(settings, [seed], profile.references + profile.variants, threads=threads)[seed]
    seconds = {"estimates": round(time.perf_counter() - start, 1)}  # the cost of a seed: training and measuring
    record = load_canaries(settings.profile, settings.recipes.user_dir)
    canaries = run_canaries(settings, record.seeds[0] if record else 0)
    seconds["canaries"] = round(time.perf_counter() - start - seconds["estimates"], 1)
    shard = {"schema_version": GENERATION_SCHEMA, "profile": settings.profile, "generation": generation.name,
             "seed": seed, "built": date.today().isoformat(), "commit": commit(Path(__file__).parent),
             "seconds": {**seconds, "workers": settings.workers or 1},
             "provenance": provenance(settings.device), "data": generation_data(settings), "estimates": estimates,
             "canaries": canaries, "canary_overlay": CANARY,
             "code": {c: code_digest(get_claim(c), profile) for c in estimates["claims"]}}  # fmt: skip
    _write(path, shard)
    return path


def _shard_moved(settings: Settings, record: CanaryRecord | None, shard: Mapping[str, Any]) -> dict[str, list[str]]:
    """Where a shard's canaries leave the study's canary ``record`` (as a session judges code; on another machine
    kind only where the shard's code also differs from the recording code's)."""
    if record is None:
        return {ALL: ["the study has no canary record to judge shards by"]}
    machine = machine_kind(shard["provenance"]["machine"])
    moved = record.moved(shard["canaries"], settings.profile_data, record.study, shard["canary_overlay"], machine)
    return record.machine_excused(moved, settings.profile_data, machine, shard["code"])[0]


def _seed_of(study: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One seed's estimates out of a study's JSON, as :func:`~.run.seed_estimates` gives them."""
    i = list(study["seeds"]).index(seed)
    claims = {cid: {**{k: e[k] for k in ("evaluated_on", "not_applicable")},
                    "parts": {p: {"not_applicable": r["not_applicable"], "unreadable": r["unreadable"],
                                  "values": {m: v[i] for m, v in r["values"].items()}}
                              for p, r in e["parts"].items()}}
              for cid, e in study["claims"].items()}  # fmt: skip
    recipes = {n: {c: {k: v[i] for k, v in per.items()} for c, per in r["checkpoints"].items()}
               for n, r in study["recipes"].items()}  # fmt: skip
    return {"claims": claims, "recipes": recipes, "num_classes": next(iter(study["recipes"].values()))["num_classes"]}


def assemble(settings: Settings, name: str | None = None) -> Path:
    """Merge the generation's shards and base seeds into the profile's study (module docstring); the canary record
    and the expectation snapshot follow it. Nothing is written where a check fails."""
    from .expectations import compare_snapshot

    generation = _generation(settings, name)
    if generation.missing:
        raise StudyError(f"{generation.status()}: build them first (model-props seed-study --seed K)")
    study = load_study(settings.profile, settings.recipes.user_dir)
    problems = generation.problems(settings)
    if generation.base_seeds and (study is None or study.identity != generation.plan["base"]):
        problems.append(f"the study it takes seeds {generation.base_seeds} from is no longer the active one")
    record = load_canaries(settings.profile, settings.recipes.user_dir)
    for seed, shard in generation.shards.items():
        moved = _shard_moved(settings, record, shard)
        problems += [f"seed-{seed}.json's canaries moved for {cid}: {'; '.join(r)}" for cid, r in moved.items()]
    if problems:
        raise StudyError(f"cannot assemble {generation.name}: {'; '.join(problems)}")
    base = json.loads(Path(study.source).read_text()) if study is not None and generation.base_seeds else {}
    seeds = list(generation.plan["seeds"])
    per_seed = [_seed_of(base, s) if s in generation.base_seeds else generation.shards[s]["estimates"] for s in seeds]
    built = {str(s): base["provenance"] if s in generation.base_seeds else generation.shards[s]["provenance"]
             for s in seeds}  # fmt: skip
    made = {**provenance(settings.device), "seeds": {s: {k: p.get(k) for k in ("versions", "machine")}
                                                     for s, p in built.items()}}  # fmt: skip
    data = study_data(settings, seeds, merge_seeds(per_seed, settings), generation=generation.name, provenance=made)
    path = write_study(settings, data, _folder(settings).parents[1] / f"{settings.profile}-seeds.json")
    record_path = path.parent / f"{settings.profile}-canaries.json"
    moved_over = json.loads(record_path.read_text())
    moved_over["study"] = {"date": data["date"], "seeds": seeds}
    for shard in generation.shards.values():  # a shard built on a machine kind the record lacks is its reference
        kind = machine_kind(shard["provenance"]["machine"])
        if record is not None and kind != record.machine and kind not in moved_over.setdefault("machines", {}):
            moved_over["machines"][kind] = {**record.reference(kind, shard["canaries"], shard["code"]),
                                            "provenance": shard["provenance"]}  # fmt: skip
    _write(record_path, moved_over)
    compare_snapshot(settings, update=True)
    return path
