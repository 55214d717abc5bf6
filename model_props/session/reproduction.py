"""The live values of the live checks: this session's own weights of every statistic the seed study holds of a
reference's family (:func:`~model_props.verdicts.reproduction.family`, restricted to the recipes this session trains
live), measured here and judged by :func:`~model_props.verdicts.reproduction.reproduce` (the reproduction test) and
:func:`~model_props.verdicts.reproduction.claim_checks` (a reference's claim test, its own parts)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..claims.base import Claim
from ..errors import NotApplicable, StudyError
from ..store.model_store import ModelStore
from ..study.canaries import judged_study
from ..verdicts.evidence import point_value
from ..verdicts.family import StudyStatistic, family
from ..verdicts.fingerprint import recipe_fingerprint
from ..verdicts.live_check import Check
from ..verdicts.reproduction import Reproduction, claim_checks, load_discrepancies, reproduce
from ..verdicts.study import SeedStudy, regenerate
from .live import measured_live, not_live_report

__all__ = ["reproduction", "live_checks", "live_family"]


def _study(store: ModelStore) -> SeedStudy:
    study = judged_study(store)
    if study is None:
        raise StudyError(
            f"profile {store.profile.name!r} has no seed study to reproduce; run {regenerate(store.profile.name)}"
        )
    if store.train_seed in study.seeds:
        raise StudyError(f"this session trains with seed {store.train_seed}, one of the seed study's own seeds "
                         f"{list(study.seeds)}: a reproduction needs a draw the study does not hold (the profile's "
                         f"live seed is {store.profile.live_seed})")  # fmt: skip
    return study


def live_family(store: ModelStore, reference: str, *, skip_stale: bool = False) -> list[StudyStatistic]:
    """The statistics of ``reference``'s family among the recipes this session trains live, with the sides the
    expectation snapshot's verdicts ask for; a statistic whose report reads a run this session does not train (a
    pair report's independent runs, :func:`~.live.not_live_report`) or that it does not measure on the live weights
    (:func:`~.live.measured_live`) is left out."""
    settings = store.settings
    found = family(_study(store), store.profile, reference, store.snapshot, settings.trains_live,
                   skip_stale=skip_stale, kinds=lambda kind: measured_live(settings, kind))  # fmt: skip
    return [s for s in found if s.part is None or not not_live_report(settings, s.name, s.part.reads)]


def _live_value(store: ModelStore, s: StudyStatistic, name: str) -> float:
    """Model ``name``'s value of statistic ``s`` on this session's live weights (NaN where it has nothing to read)."""
    model = store.get(name, "warmup" if s.checkpoint == "warmup" else "final")
    if s.part is None:
        return float(model.metrics["test_accuracy"])
    try:
        return point_value(s.part, store.report_for(model, s.part.reads))
    except NotApplicable:  # the live model has nothing to read where the study's seeds had
        return math.nan


def _live_values(store: ModelStore, statistics: Sequence[StudyStatistic]) -> dict[str, float]:
    """Each statistic on this session's live weights: a comparison's paired difference of its two models."""
    live: dict[str, float] = {}
    for s in statistics:
        value = _live_value(store, s, s.name)
        if s.versus is not None:
            value = math.nan if math.isnan(value) else s.paired(value, _live_value(store, s, s.versus))
        live[s.label] = value
    return live


def reproduction(store: ModelStore, reference: str) -> Reproduction:
    """Every statistic of ``reference``'s live family, measured on this session's live weights (the profile's live
    seed, which the study does not hold), against the study; with the known discrepancies of this very draw (the
    recipe's fingerprint and the training seed)."""
    statistics = live_family(store, reference)
    known = [k for k in load_discrepancies(store.profile, store.settings.recipes.user_dir)
             if k.seed == store.train_seed and any(s.name == k.model for s in statistics)
             and k.recipe == recipe_fingerprint(store.profile, k.model)]  # fmt: skip
    return reproduce(reference, statistics, _live_values(store, statistics), store.profile, known)


def live_checks(store: ModelStore, claim: Claim, model: str) -> tuple[Check, ...]:
    """The live checks of ``claim``'s parts on reference ``model``: each model a part reads that this session trains
    live, in the family of its own reference (another claim's stale study entry leaves that claim out here; the
    reproduction test reports it)."""
    owners = {store.profile.bases.get(n, n) for p in claim.parts for n in (p.subject or model, p.versus) if n}
    families = {o: live_family(store, o, skip_stale=True) for o in sorted(owners) if o in store.profile.references}
    read = [s for f in families.values() for s in f if any(r[:2] == (claim.id, model) for r in s.readers)]
    live = {s.label: math.nan for f in families.values() for s in f} | _live_values(store, read)
    return claim_checks(claim.id, model, families, live, store.profile)
