"""A toy report for the verdict tests: one number per sampling unit (an image, a Hessian batch), read by a part's
statistic as ``report.values[indices]``; and a sequential part's evidence gathered look by look on such values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model_props.claims.base import Claim
from model_props.verdicts import Measured, OnLooks, OnReports, gather_looks


@dataclass
class Scores:
    """A report of one number per sampling unit."""

    values: np.ndarray

    def size(self, sampling: str) -> int:
        return len(self.values)


@dataclass
class Looked:
    """Hand-made values of one model a sequential part reads; ``asked`` records each prefix read (how far the
    gatherer read)."""

    name: str
    values: np.ndarray
    asked: list[int] = field(default_factory=list)

    def at(self, n: int) -> Measured:
        self.asked.append(n)
        return Measured(self.name, Scores(self.values[:n]), "test")


def looks(claim: Claim, *models: Looked, n_boot: int, name: str | None = None) -> OnLooks:
    """The evidence of part ``name`` (the first part by default) of ``claim``, gathered as the session's gatherer
    gathers it (:func:`~model_props.verdicts.gather_looks`): each model's prefix at each look of the design, read on
    while the judge's rule asks for the next look."""
    part = next(p for p in claim.parts if name in (None, p.name))

    def reports_at(n: int) -> OnReports:
        first, *other = (m.at(n) for m in models)
        return OnReports(first, other[0] if other else None)

    return gather_looks(claim, part, min(len(m.values) for m in models), reports_at, n_boot=n_boot)
