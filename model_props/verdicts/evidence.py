"""The evidence a claim is judged on: per part, what it reads at its scope, or why it cannot be read.

The session gathers it (the models and reports a part reads, the study's per-seed estimates, the skip rules) and
the judge (:func:`~.judge.judge`) is a function of it: plain data, nothing here calls back into the session. A part
judged sequentially is measured look by look by the gatherer, on the prefixes the judge's rule asks for
(:func:`~.checkpoint.gather_looks`), and its evidence is the reports at the look that stopped it.

- :class:`OnReports` (checkpoint scope): the report of the model a part reads (and of the model it compares
  with), each with the identity of the samples it was measured on; equal identities pair the comparison.
- :class:`OnLooks` (checkpoint scope, a part judged sequentially, :mod:`.sequential`): the reports at the look
  that decided the part (or the last), so that measuring stopped there.
- :class:`AgainstSeeds` (checkpoint scope, a part comparing the weights with a recipe this session does not
  train): the weights' report, and the recipe's per-seed estimates from the seed study (:mod:`.against_seeds`).
- :class:`PerSeed` (architecture scope): one estimate per training seed of each model a part reads; two series of
  one study share their seed indices (a paired design), a user's checkpoints against a study's seeds do not.
- :class:`Skipped`: why the part cannot be measured (it does not apply, a model it reads is below twice chance,
  the study records nothing to read, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..claims.base import Claim, Part
from .outcome import Expected
from .stats import Scope

__all__ = [
    "Measured", "OnReports", "OnLooks", "AgainstSeeds", "PerSeed", "Skipped", "PartEvidence", "Evidence",
    "point_value",
]  # fmt: skip


@dataclass(frozen=True)
class Measured:
    """A report a part reads, the model it is of, and the identity of the samples it was measured on (for the
    part's sampling unit: the same test images and draws, or the same Hessian batches, have equal identities)."""

    name: str
    report: Any
    samples: str


@dataclass(frozen=True)
class OnReports:
    subject: Measured
    versus: Measured | None = None


@dataclass(frozen=True)
class OnLooks:
    """A checkpoint-scope part judged sequentially (:mod:`.sequential`): its reports at look ``look`` (0-based) of
    the design over ``size`` sampling units, the first look that decided it or the last."""

    reports: OnReports
    look: int
    size: int


@dataclass(frozen=True)
class AgainstSeeds:
    """The weights' report (``weights``) against recipe ``recipe``'s committed per-seed estimates (``seeds``): the
    weights are the part's subject where ``weights_first``, else its ``versus``."""

    weights: Measured
    recipe: str
    seeds: tuple[float | None, ...]
    weights_first: bool


@dataclass(frozen=True)
class PerSeed:
    subject_name: str
    subject: tuple[float | None, ...]
    versus_name: str | None = None
    versus: tuple[float | None, ...] | None = None
    paired: bool = True  # the two series share their seed indices (one data order and measurement sample per index)


@dataclass(frozen=True)
class Skipped:
    reason: str


PartEvidence = OnReports | OnLooks | AgainstSeeds | PerSeed | Skipped


@dataclass(frozen=True)
class Evidence:
    """Everything a claim's verdict on ``model`` rests on: per part (by name, in the claim's order) its evidence,
    the scope, the training seeds at architecture scope, and the snapshot's expectation where there is one."""

    claim: Claim
    model: str
    scope: Scope
    parts: Mapping[str, PartEvidence]
    seeds: tuple[int, ...] | None = None
    expected: Expected | None = None


def point_value(part: Part, report: Any) -> float:
    """The part's statistic on the report's whole sample (NaN where it is undefined): the statistic of the one
    resample that is every sampling unit once."""
    return float(part.statistic(report, np.arange(report.size(part.sampling))[None, :])[0])
