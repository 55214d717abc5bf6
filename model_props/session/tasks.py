"""The measuring task that an executor (:mod:`model_props.execution`) runs: one report of one stored model.

A seed study submits one task per (seed, model, report kind, checkpoint) that its claims read, so that the
workers share the measuring evenly; each report lands in the shared measurement cache, where the per-seed
estimates (:func:`~model_props.session.study.seed_estimates`) then read it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..claims import list_claims
from ..training.loop import Checkpoint
from .settings import Settings
from .store import ModelStore

__all__ = ["Request", "measure_report", "reports_read"]

Request = tuple[int, str, str, Checkpoint]  # (training seed, model name, report kind, checkpoint)


def reports_read(settings: Settings, seed: int) -> list[Request]:
    """Every (seed, model, kind, checkpoint) that :func:`~model_props.session.study.seed_estimates` reads: per
    claim and reference it applies to, the report of each part that applies, of the models the part reads."""
    store = ModelStore(dataclasses.replace(settings, train_seed=seed, progress=False))
    wanted: dict[Request, None] = {}
    for claim in list_claims():
        for model in store.profile.references:
            tested = store.get(model)
            if claim.skip_reason(tested.anatomy, model, store.profile.recipes) is not None:
                continue
            for part in claim.parts:
                if part.applies(tested.anatomy) is None:
                    for name in dict.fromkeys(n for n in (part.subject or model, part.versus) if n):
                        wanted[(seed, name, part.report, part.checkpoint)] = None
    return list(wanted)


def measure_report(settings: Settings, request: Request) -> dict[str, np.ndarray]:
    """Measure (or read from the cache) one report of a stored model trained with the request's seed; its arrays."""
    seed, name, kind, checkpoint = request
    store = ModelStore(dataclasses.replace(settings, train_seed=seed, progress=False))
    report: Any = store.report(name, kind, checkpoint)
    return report.to_arrays()
