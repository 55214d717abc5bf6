"""The measuring task that an executor (:mod:`model_props.execution`) runs: one report of one stored model.

A seed study submits one task per (seed, model, report kind, checkpoint) that its claims read, so that the
workers share the measuring evenly; each report lands in the shared measurement cache, where the per-seed
estimates (:func:`~model_props.study.run.seed_estimates`) then read it; which reports a study reads is
:func:`~model_props.study.run.reports_read`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..config.settings import Settings
from ..training.loop import Checkpoint
from .model_store import ModelStore

__all__ = ["Request", "measure_report", "seed_store"]

Request = tuple[int, str, str, Checkpoint]  # (training seed, model name, report kind, checkpoint)


def seed_store(settings: Settings, seed: int) -> ModelStore:
    """A store whose references are the profile's recipes trained with ``seed`` (quiet: it runs in a worker)."""
    return ModelStore(dataclasses.replace(settings, train_seed=seed, progress=False))


def measure_report(settings: Settings, request: Request) -> dict[str, np.ndarray]:
    """Measure (or read from the cache) one report of a stored model trained with the request's seed; its arrays."""
    seed, name, kind, checkpoint = request
    report: Any = seed_store(settings, seed).report(name, kind, checkpoint)
    return report.to_arrays()
