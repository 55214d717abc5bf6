"""Running a seed study's canaries: the study itself, shrunk, so that later code is judged by what it computes.

A canary run is :func:`~.run.seed_estimates` on the profile with :data:`CANARY` laid over it: every recipe trained
for 2 optimizer steps of 32 images (warm-up checkpoint at step 1), every report kind measured on a few images
(2 Hessian batches of 8, 2 PGD steps, ...), and every claim part's statistic computed on the result. So it runs the
code paths the study ran (training, data, models, anatomy, every measurement kind, every claim's statistics) at
about 7 minutes a seed on two cores, on the CPU whatever the session's device, on one torch thread (so that a machine
reproduces its own record bit for bit), with the study's measurement seed.

:func:`record_canaries` runs :data:`CANARY_SEEDS` with the code that built a study and writes
``<profile>-canaries.json`` beside it; :func:`judged_study` runs the first seed with the current code (trained
models and reports come from the local cache, keyed by the code's source hash) for the claims whose outcome running
could change (none where code, recipes and versions are the record's on its machine kind) and attaches to the study
what moved (:class:`~model_props.verdicts.canaries.CanaryRecord`). What a canary cannot see is listed in
``docs/verdicts.md``: a change that matters only after more steps or on more images than a canary's, and code that
only a GPU runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..cache import atomic_write
from ..claims import get_claim, list_claims
from ..config.settings import Settings
from ..errors import StudyError
from ..provenance import provenance
from ..store.model_store import ModelStore
from ..verdicts.canaries import ALL, CANARY_SCHEMA, CanaryRecord, code_digest, libraries, machine_kind, recipe_data
from ..verdicts.study import SeedStudy, load_study, read_fixture, regenerate
from .run import seed_estimates

__all__ = [
    "CANARY",
    "CANARY_SEEDS",
    "canary_settings",
    "run_canaries",
    "record_canaries",
    "load_canaries",
    "canary_moved",
    "judged_study",
    "record_machine",
    "confirm_code",
]

CANARY: dict[str, dict[str, Any]] = {  # laid over the profile's tables; recorded with the canaries it sized
    "defaults": {"steps": 2, "warmup_steps": 1, "batch_size": 32},  # few: training amplifies float differences
    "measurement": {
        "n_images": 128, "batch_size": 64, "n_boot": 200, "hessian_batches": 2, "hessian_batch_size": 8,
        "fit_images": 128, "noise_images": 64, "corruption_images": 32, "attack_images": 16, "pgd_steps": 2,
        "lesion_images": 32,
    },
}  # fmt: skip
CANARY_SEEDS = (0, 1, 2)  # the first is reproduced by later code, all three give each statistic's seed-to-seed SD
_judged: dict[str, SeedStudy] = {}  # per process: the canaries run once


def canary_settings(settings: Settings) -> Settings:
    """The settings of a canary run: the profile (and the user's recipes folder) with :data:`CANARY` laid over it,
    on the CPU, with measurement seed 0 (the study's) and the session's cache."""
    recipes = dataclasses.replace(settings.recipes, overlay=CANARY)
    return Settings(profile=settings.profile, recipes=recipes, cache_dir=settings.cache_dir, progress=False)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def run_canaries(settings: Settings, seed: int, only: Sequence[str] | None = None) -> dict[str, Any]:
    """One canary seed (:func:`~.run.seed_estimates` on :func:`canary_settings`), on one torch thread."""
    with _one_thread():
        return seed_estimates(canary_settings(settings), seed, only)


def record_canaries(settings: Settings, study: SeedStudy, out: Path) -> Path:
    """Run the canaries with :data:`CANARY_SEEDS` and write ``<profile>-canaries.json`` to ``out``: run it with
    the code that built ``study``, right after it."""
    per_seed = []
    for seed in CANARY_SEEDS:
        per_seed.append(run_canaries(settings, seed))
        print(f"ran the canaries of seed {seed}", flush=True)
    profile = settings.profile_data
    recipes = {name: recipe_data(profile.recipes[name]) for name in per_seed[0]["recipes"]}
    code = {c.id: code_digest(c, profile) for c in list_claims() if c.id in per_seed[0]["claims"]}
    with _one_thread():
        made = provenance("cpu")
    data = CanaryRecord.to_json(profile.name, study.identity, CANARY_SEEDS, CANARY, recipes, per_seed, code, made)
    path = out / f"{profile.name}-canaries.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def load_canaries(profile: str, user_dir: Path | None = None) -> CanaryRecord | None:
    remedy = f"record them with the code that built the study: {regenerate(profile)}"
    read = read_fixture(f"{profile}-canaries.json", user_dir, CANARY_SCHEMA, remedy)
    return None if read is None else CanaryRecord.from_json(*read)


def canary_moved(settings: Settings, study: SeedStudy, only: Sequence[str] | None = None) -> dict[str, list[str]]:
    """What moved of ``study``'s canaries (:meth:`~model_props.verdicts.canaries.CanaryRecord.moved`, and a claim the
    record lacks): the first canary seed run by this code, against the generation's record, for the claims whose
    outcome is not fixed without running (:meth:`~model_props.verdicts.canaries.CanaryRecord.to_run`: none where the
    code, the recipes and the versions are those of the record or of this machine kind's reference); ``only``: of
    these claims (and the recipes they read) alone."""
    record = load_canaries(settings.profile, settings.recipes.user_dir)
    if record is None:
        return {ALL: [f"it has no canary record ({settings.profile}-canaries.json) to judge the code by"]}
    made = provenance("cpu")
    machine = machine_kind(made["machine"])
    asked = list(only) if only is not None else list(study.claims)
    run = record.to_run(asked, settings.profile_data, machine, made["versions"])
    now = run_canaries(settings, record.seeds[0], run) if run else {"claims": {}, "recipes": {}}
    moved, excused = record.machine_excused(record.moved(now, settings.profile_data, study.identity, CANARY, machine),
                                            settings.profile_data, machine)  # fmt: skip
    if excused:
        print(f"model-props: on {machine}, not the canary record's {record.machine}, the canaries of {len(excused)} "
              f"claims moved while their code is the recording code's: taken as the machine's ({', '.join(excused)})",
              file=sys.stderr)  # fmt: skip
    unrecorded = sorted(set(only or study.claims) - set(record.claims))
    return moved | {cid: [f"its canary record {record.source} has no canary of it"] for cid in unrecorded}


def record_machine(settings: Settings) -> Path:
    """Add this machine kind's reference to the study's canary record (``model-props seed-study --canaries-here``):
    the first canary seed run here, kept for the claims whose code is the recording code's. Runs on this kind then
    compare with it, so that code which changed since is judged here too (not taken as the machine's)."""
    record = load_canaries(settings.profile, settings.recipes.user_dir)
    if record is None:
        raise StudyError(f"profile {settings.profile!r} has no canary record to add this machine to")
    machine = machine_kind(provenance("cpu")["machine"])
    if machine == record.machine:
        raise StudyError(f"{record.source} was recorded on this machine kind ({machine}): it needs no reference")
    profile = settings.profile_data
    reference = record.reference(machine, run_canaries(settings, record.seeds[0]),
                                 {c: code_digest(get_claim(c), profile) for c in record.claims})  # fmt: skip
    with _one_thread():
        reference["provenance"] = provenance("cpu")
    data = json.loads(Path(record.source).read_text())
    data["machines"] = {**data.get("machines", {}), machine: reference}
    atomic_write(Path(record.source), lambda tmp: tmp.write_text(json.dumps(data, indent=1) + "\n"))
    print(f"{machine}: the canaries of {len(reference['claims'])} of {len(record.claims)} claims kept as this kind's "
          f"reference (the others' code is not the recording code's)", flush=True)  # fmt: skip
    return Path(record.source)


def confirm_code(settings: Settings, only: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Confirm that this code computes what built the study (``model-props seed-study --canaries-confirm``): run,
    on this machine kind, the canaries of the claims whose outcome is not fixed without running
    (:meth:`~model_props.verdicts.canaries.CanaryRecord.to_run`: changed code or versions), judge them against the
    generation's record or this kind's reference, and add to the record, for the claims whose canaries did not move,
    this code's digests with this kind and these versions. Later runs of this code on this kind then run no canary for
    them. Returns what moved (those claims stay stale for this code). Refused on a kind without a reference, where
    the code's moves cannot be told from the machine's."""
    user_dir = settings.recipes.user_dir
    record, study = load_canaries(settings.profile, user_dir), load_study(settings.profile, user_dir)
    if record is None or study is None:
        raise StudyError(f"profile {settings.profile!r} has no seed study with a canary record to confirm code for")
    made = provenance("cpu")
    machine = machine_kind(made["machine"])
    if machine != record.machine and machine not in record.machines:
        raise StudyError(f"{record.source} has no reference of this machine kind ({machine}), so a canary that moves "
                         f"here may be the machine's: confirm on {' or '.join([record.machine, *record.machines])}, or "
                         f"add this kind's reference first, with the recording code (--canaries-here)")  # fmt: skip
    profile = settings.profile_data
    run = record.to_run(list(only) if only is not None else list(record.claims), profile, machine, made["versions"])
    if not run:
        print(f"nothing to confirm on {machine}: the code of every claim asked is the recording code's or confirmed")
        return {}
    moved = record.moved(run_canaries(settings, record.seeds[0], run), profile, study.identity, CANARY, machine)
    if ALL in moved:
        raise StudyError(f"nothing confirmed: {'; '.join(moved[ALL])}")
    kept = [c for c in run if c not in moved]
    if kept:
        confirmation = {"machine": machine, "versions": libraries(made["versions"]),
                        "code": {c: code_digest(get_claim(c), profile) for c in kept}, "provenance": made}  # fmt: skip
        data = json.loads(Path(record.source).read_text())
        data["confirmed"] = [*data.get("confirmed", []), confirmation]
        atomic_write(Path(record.source), lambda tmp: tmp.write_text(json.dumps(data, indent=1) + "\n"))
    print(f"{machine}: the code of {len(kept)} of {len(run)} claims run confirmed in {record.source}", flush=True)
    return moved


def judged_study(store: ModelStore) -> SeedStudy | None:
    """The store's study with what its canaries say attached (:meth:`~model_props.verdicts.study.SeedStudy.judged`),
    judged once per process and study; None where the profile has no study."""
    settings, study = store.settings, store.study
    if study is None:
        return None
    key = json.dumps([settings.profile, str(settings.recipes.user_dir), settings.recipes.overrides,
                      str(settings.cache_dir), study.source, study.date], default=str)  # fmt: skip
    if key not in _judged:
        _judged[key] = study.judged(canary_moved(settings, study))
    return _judged[key]
