"""A toy report for the verdict tests: one number per sampling unit (an image, a Hessian batch), read by a part's
statistic as ``report.values[indices]``; and a sequential part's evidence gathered look by look on such values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model_props.claims.base import Claim
from model_props.verdicts import Measured, OnLooks, OnReports, look_sizes, next_look


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
    gathers it: each model's prefix at each look of the design, read on while the judge's rule
    (:func:`~model_props.verdicts.next_look`) asks for the next look."""
    part = next(p for p in claim.parts if name in (None, p.name))
    sizes, k = look_sizes(claim, min(len(m.values) for m in models)), 0
    while True:
        first, *other = (m.at(sizes[k]) for m in models)
        found = OnLooks(OnReports(first, other[0] if other else None), k, sizes[-1])
        if next_look(claim, part, found, n_boot=n_boot) is None:
            return found
        k += 1
