"""Running a seed study: every recipe of a profile trained with several seeds, every claim part measured on each.

Trains every reference and variant with each seed (as far as the catalogue reads it, several at once), then
per seed computes each claim part's statistic on each model it reads, on the seed's whole sample
(:func:`~model_props.verdicts.evidence.point_value`), and writes ``<profile>-seeds.json`` (read by
:mod:`model_props.verdicts.study`) and a readable ``.md``. It stores per-seed estimates and the
fingerprints of what produced them, never a verdict: verdicts are computed from them at test time.

The study is a two-stage sample: each training seed draws its own measurement sample (test images, noise, attack
starts, corruption draws, probe splits, Hessian batches; :attr:`~model_props.store.model_store.ModelStore.sample_seed`), shared by every
recipe of that seed, so comparisons are paired by seed index. It never holds the profile's live seed (the seed a
session trains with) nor the independent runs' seeds beside it: the live run must be a draw the study predicts.
Before writing, the held-out seeds must confirm the setting seeds: at least 90 % of their estimates inside the
setting seeds' prediction intervals, else nothing is written and the estimates outside are named. After the study,
``model-props seed-study`` records its canaries with the same code (:mod:`.canaries`), by which later code is judged.

A killed or timed-out study continues where it stopped when run again: every trained model and every measured
report is in the shared cache, and only what is missing is computed.

``add`` (``model-props seed-study --add CLAIM``) measures only the named claims, with the study's own seeds,
and merges their entries into the existing study: every other entry is kept as it is, and only the recipes
these claims read are trained. Which references a claim applies to is read from each recipe's architecture
(an untrained build), so no other reference is trained to find out. An added entry records the machine and
date it was measured on; a recipe the study already holds must still match its fingerprint.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

from ..claims import Claim, Part, get_claim, list_claims
from ..config.settings import Settings
from ..errors import NotApplicable, StudyError
from ..execution import executor
from ..provenance import provenance
from ..store.lost import killed, report_task, training_task
from ..store.model_store import ModelStore, sample_seed
from ..store.tasks import Request, measure_report, seed_store
from ..training.parallel import train_until
from ..training.schedule import longest_first
from ..verdicts.evidence import point_value
from ..verdicts.study import (
    SCHEMA_VERSION,
    SET_SEEDS,
    STUDY_SEEDS,
    claim_fingerprint,
    recipe_fingerprint,
)  # fmt: skip
from .checks import check_seeds, claim_ids, confirm, study_to_extend

__all__ = ["PartRead", "part_reads", "reports_read", "run_study", "seed_estimates", "study_estimates", "study_data",
           "write_study", "merge_seeds"]  # fmt: skip


def _value(value: float) -> float | None:
    return None if math.isnan(value) else value  # JSON has no NaN: an undefined estimate is null


class PartRead(NamedTuple):
    """What a study reads of one claim on one reference: ``part`` None where the claim does not apply to the
    model (``why`` says why); else one part, ``why`` why it does not apply (None: it does) and ``names`` the
    models whose report it reads."""

    claim: Claim
    model: str
    part: Part | None
    why: str | None
    names: tuple[str, ...] = ()


def _claims(only: Sequence[str] | None) -> list[Claim]:
    return list_claims() if only is None else [get_claim(c) for c in only]


def part_reads(store: ModelStore, only: Sequence[str] | None = None) -> Iterator[PartRead]:
    """Every claim part the store's references are measured on, in catalogue order (one walk for planning the
    measuring tasks, :func:`reports_read`, and for the estimates, :func:`seed_estimates`); ``only`` these claims
    (by id), whose applicability is then read from untrained builds of the references."""
    for claim in _claims(only):
        for model in store.profile.references:
            anat = store.get(model).anatomy if only is None else store.architecture(model)
            reason = claim.skip_reason(anat, model, store.profile.recipes)
            if reason is not None:
                yield PartRead(claim, model, None, reason)
                continue
            for part in claim.parts:
                why = part.applies(anat)
                names = (
                    ()
                    if why is not None
                    else tuple(dict.fromkeys(n for n in (part.subject or model, part.versus) if n))
                )
                yield PartRead(claim, model, part, why, names)


def reports_read(settings: Settings, seed: int, only: Sequence[str] | None = None) -> list[Request]:
    """Every (seed, model, report kind, checkpoint) that :func:`seed_estimates` reads for ``seed``."""
    wanted = {
        (seed, name, read.part.reads, read.part.checkpoint): None
        for read in part_reads(seed_store(settings, seed), only)
        if read.part is not None
        for name in read.names
    }
    return list(wanted)


def seed_estimates(settings: Settings, seed: int, only: Sequence[str] | None = None) -> dict[str, Any]:
    """Per claim and part, the statistic of every model the part reads, trained with ``seed`` (one worker's job)."""
    store = seed_store(settings, seed)
    profile = store.profile
    claims: dict[str, Any] = {c.id: {"evaluated_on": [], "not_applicable": {}, "parts": {}} for c in _claims(only)}
    read: set[str] = set()
    for claim, model, part, why, names in part_reads(store, only):
        read.update(names)
        entry = claims[claim.id]
        if part is None:
            entry["not_applicable"][model] = why
            continue
        if model not in entry["evaluated_on"]:
            entry["evaluated_on"].append(model)
        record = entry["parts"].setdefault(part.name, {"not_applicable": {}, "values": {}, "unreadable": {}})
        if why is not None:
            record["not_applicable"][model] = why  # the part does not apply to this model under test
            continue
        for name in names:
            if name in record["values"] or name in record["unreadable"]:
                continue
            try:
                report = store.report(name, part.reads, part.checkpoint)
                record["values"][name] = _value(point_value(part, report))
            except NotApplicable as exc:  # the statistic finds nothing to read in this model's report
                record["unreadable"][name] = str(exc)
    recipes = {}
    for name in profile.references + profile.variants if only is None else sorted(read):
        needed = sorted(store.checkpoints_needed.get(name, {"final"}))
        recipes[name] = {c: store.get(name, c).metrics for c in needed}
    return {"claims": claims, "recipes": recipes, "num_classes": store.dataset().num_classes}


def merge_seeds(
    per_seed: list[dict[str, Any]], settings: Settings, only: Sequence[str] | None = None
) -> dict[str, Any]:
    """One study from the seeds' estimates: lists per seed, in seed order, with the fingerprints."""
    profile = settings.profile_data
    first = per_seed[0]
    claims = {}
    for claim in _claims(only):
        entries = [s["claims"][claim.id] for s in per_seed]
        parts = {}
        for part, record in first["claims"][claim.id]["parts"].items():
            values = {n: [e["parts"][part]["values"].get(n) for e in entries] for n in record["values"]}
            parts[part] = {
                "not_applicable": record["not_applicable"],
                "values": values,
                "unreadable": record["unreadable"],
            }
        claims[claim.id] = {
            "fingerprint": claim_fingerprint(claim, profile),
            "evaluated_on": first["claims"][claim.id]["evaluated_on"],
            "not_applicable": first["claims"][claim.id]["not_applicable"],
            "parts": parts,
        }
    recipes = {}
    for name, checkpoints in first["recipes"].items():
        recipes[name] = {
            "fingerprint": recipe_fingerprint(profile, name),
            "num_classes": first["num_classes"],
            "checkpoints": {
                c: {
                    k: [s["recipes"][name][c][k] for s in per_seed]
                    for k in ("step", "test_accuracy", "test_nll", "val_accuracy")
                }
                for c in checkpoints
            },  # fmt: skip
        }
    return {"recipes": recipes, "claims": claims}


def _stops(task: Callable[[Any], str]) -> Callable[[Any, BaseException], None]:
    """What a study does with a task that killed every worker that ran it (Dask's ``KilledWorker``: a native abort,
    or memory): it stops, in one line naming the task (``task(item)``), since a seed would lack what it computes."""

    def stop(item: Any, error: BaseException) -> None:
        raise StudyError(
            f"{killed(task(item))} ({type(error).__name__}): the study stops, since its seeds would lack it; run it "
            "alone on one worker (--workers 1) to see the failure"
        )

    return stop


def study_estimates(settings: Settings, seeds: Sequence[int], names: Sequence[str], only: Sequence[str] | None = None,
                    threads: int | None = None) -> dict[int, dict[str, Any]]:  # fmt: skip
    """Per seed, :func:`seed_estimates`: recipes ``names`` trained with each seed and every report the claims read
    (``only``: these claims) measured, on the settings' executor (:func:`run_study`)."""
    profile, store = settings.profile_data, ModelStore(settings)
    until = {n: store.last_checkpoint_needed(n) for n in names}
    runs = [dataclasses.replace(profile.recipes[n], seed=s) for s in seeds for n in names]
    train = functools.partial(train_until, settings.cache_dir, settings.data_root, until, settings.device)
    for recipe in runs:  # generate each dataset once, here, before the workers read it from the cache
        store.dataset(recipe.dataset)
    runs = longest_first(runs, until, store.dataset)  # no worker left training a long run alone at the end
    estimates = {}
    with executor(
        workers=settings.workers or 1,
        scheduler=settings.scheduler,
        threads=threads,
        device=settings.device,
        cache_dir=settings.cache_dir,
    ) as runner:
        for recipe, result in runner.map(train, runs, _stops(training_task)):
            print(f"trained {recipe.name} seed {recipe.seed}: test accuracy {result['test_accuracy']:.4f}"
                  f"{' (cache)' if result['from_cache'] else ''}", flush=True)  # fmt: skip
        requests = [r for seed in seeds for r in reports_read(settings, seed, only)]
        measure = functools.partial(measure_report, settings)
        for done, _ in enumerate(runner.map(measure, requests, _stops(report_task)), start=1):
            if done % 10 == 0 or done == len(requests):
                print(f"measured {done} of {len(requests)} reports", flush=True)
        estimate = functools.partial(seed_estimates, settings, only=only)
        for seed, result in runner.map(estimate, seeds, _stops(lambda seed: f"estimating seed {seed}")):
            estimates[seed] = result
            print(f"measured seed {seed}", flush=True)
    return estimates


def run_study(
    settings: Settings, *, seeds: list[int] | None = None, out: Path | None = None, threads: int | None = None,
    add: Sequence[str] | None = None,
) -> Path:  # fmt: skip
    """Train every reference and variant of the profile with each seed, measure every claim part on each, and
    write ``<profile>-seeds.json`` and ``.md`` to ``out`` (default: the user's recipes folder, else ./fixtures).
    Runs on the settings' executor: in this process, a local cluster of ``workers`` or the ``scheduler``'s,
    ``threads`` torch threads per task (default: the cores divided among the workers). ``add``: only the claims
    these globs match, merged into the existing study (module docstring). ``seeds`` default: with ``add`` the
    existing study's, else :data:`~model_props.verdicts.study.STUDY_SEEDS`."""
    profile = settings.profile_data
    out = out or settings.recipes.user_dir or Path.cwd() / "fixtures"
    path = out / f"{profile.name}-seeds.json"
    if seeds is None:  # an added claim is measured on the study's own seeds (study_to_extend checks the rest)
        seeds = list(json.loads(path.read_text())["seeds"]) if add and path.is_file() else list(STUDY_SEEDS)
    check_seeds(settings, seeds)
    if len(seeds) <= SET_SEEDS:
        print(f"note: seeds {seeds[:SET_SEEDS]} predict the others; give more seeds to confirm them", flush=True)
    only = claim_ids(add) if add else None
    if only is None:
        names = profile.references + profile.variants
    else:  # the models the added claims read (the same for every seed)
        read = {name for _, name, _, _ in reports_read(settings, seeds[0], only)}
        partners = {p.partner for c in _claims(only) for p in c.parts if p.partner}  # read inside a pair report
        names = sorted(read | partners)
    base = study_to_extend(path, seeds, settings, names) if only is not None else None
    estimates = study_estimates(settings, seeds, names, only, threads)
    merged = merge_seeds([estimates[s] for s in seeds], settings, only)
    if base is None:
        data = study_data(settings, seeds, merged)
    else:
        data = base
        for name, entry in merged["recipes"].items():
            data["recipes"].setdefault(name, entry)  # a recipe the study holds keeps the accuracies it was set with
        added = {"date": date.today().isoformat(), "provenance": provenance(settings.device)}
        claims = {**data["claims"], **{cid: {**entry, "added": added} for cid, entry in merged["claims"].items()}}
        data["claims"] = {c.id: claims[c.id] for c in list_claims() if c.id in claims}
    return write_study(settings, data, path)


def study_data(settings: Settings, seeds: Sequence[int], merged: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A whole study's JSON: the seeds' merged estimates (:func:`merge_seeds`) with what they are of, and ``more``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "profile": settings.profile,
        "seeds": list(seeds),
        "set_seeds": list(seeds[:SET_SEEDS]),
        "confirm_seeds": list(seeds[SET_SEEDS:]),
        "measurement_seed": settings.seed,
        "sample_seeds": {str(s): sample_seed(settings.seed, s) for s in seeds},
        "date": date.today().isoformat(),
        "provenance": provenance(settings.device),
        **more,
        **merged,
    }


def write_study(settings: Settings, data: dict[str, Any], path: Path) -> Path:
    """Write the study ``data`` to ``path`` and its page beside it, if its held-out seeds confirm it (:func:`confirm`)."""
    from .report import study_markdown

    study = confirm(data, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    path.with_suffix(".md").write_text(study_markdown(study, settings.profile_data))
    return path
