"""Unit lesions (Park & Kim 2022, App. D, Fig. 10 / poster Fig. 7; docs/papers.md#lesion-study; docs/measurements.md#definitions).

Lesioning a residual unit removes its branch: the branch output ``f(x)`` is replaced by zeros through a
forward hook on the unit's branch tap, so the unit computes ``x + 0``, the identity (for ResNet's
post-activation blocks ``relu(x + 0) = x`` since ``x`` is itself a ReLU output). Embedding, subsampling and
head units are never lesioned, nor is a unit without a branch tap. The measure is the accuracy drop
``acc(intact) - acc(lesioned)`` per unit, one unit at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..anatomy.model import Anatomy, Unit
from ..anatomy.taps import resolve_module
from ..data import Split
from ..errors import MeasurementError, choices
from .fit import predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["removable_units", "key_units", "lesioned", "LesionReport", "lesion_report", "lesion_kind_report"]


def removable_units(anat: Anatomy) -> tuple[Unit, ...]:
    """The units a lesion may remove: residual msa/mlp/conv units that do not subsample."""
    return tuple(
        u
        for u in anat.units
        if u.kind in ("msa", "mlp", "conv") and not u.subsamples and u.branch is not None and u.branch.where == "output"
    )


def key_units(kinds: tuple[str, ...], stages: Sequence[int] | np.ndarray) -> np.ndarray:
    """Mask over removable units (in order): the units whose lesion Park & Kim (2022, Fig. 10) find to cost the
    most (claim 13; the ``dead-key-units`` mutant). Per stage: the first removable conv unit of every stage that
    starts with a subsampling (the block after the stage's subsampling block when that one cannot be lesioned;
    the first stage starts at the stem, so its first block is not a stage start), and the last MSA unit."""
    key = np.zeros(len(kinds), dtype=bool)
    stage_of, kind_of = np.asarray(stages), np.asarray(kinds)
    first = stage_of.min() if len(stage_of) else 0
    for stage in np.unique(stage_of):
        for kind, pick in (("conv", 0), ("msa", -1)):
            hits = np.flatnonzero((stage_of == stage) & (kind_of == kind))
            if hits.size and not (kind == "conv" and stage == first):
                key[hits[pick]] = True
    return key


@contextmanager
def lesioned(model: torch.nn.Module, anat: Anatomy, unit_name: str) -> Iterator[None]:
    """Inside the block, ``unit_name``'s residual branch outputs zeros."""
    branches = {u.name: u.branch for u in removable_units(anat) if u.branch is not None}  # (every one has a branch)
    if unit_name not in branches:
        raise MeasurementError(f"no removable unit {unit_name!r}; valid: {choices(branches)}")
    module = resolve_module(model, branches[unit_name].module)
    handle = module.register_forward_hook(lambda _m, _args, out: torch.zeros_like(out))
    try:
        yield
    finally:
        handle.remove()


@dataclass
class LesionReport:
    """Per image, correctness of the intact model and of the model with each removable unit lesioned."""

    correct: np.ndarray  # (N, 1 + L) bool
    units: tuple[str, ...]  # (L,) the lesioned units, in anatomy order
    kinds: tuple[str, ...]  # (L,) their kinds (msa, mlp, conv)
    stages: np.ndarray  # (L,) their stages
    depths: np.ndarray  # (L,) their normalised depths

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.correct)}[sampling]

    def drops(self, idx: np.ndarray | None = None) -> np.ndarray:
        """(L,) accuracy drop per lesioned unit (0-1 scale), over every image or the images ``idx`` (n,); (rows, L)
        for an index matrix (rows, n)."""
        c = (self.correct if idx is None else self.correct[idx]).astype(np.float64)
        return c[..., :1].mean(axis=-2) - c[..., 1:].mean(axis=-2)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "correct": self.correct,
            "units": np.array(self.units),
            "kinds": np.array(self.kinds),
            "stages": self.stages,
            "depths": self.depths,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> LesionReport:
        return cls(
            arrays["correct"],
            tuple(str(u) for u in arrays["units"]),
            tuple(str(k) for k in arrays["kinds"]),
            arrays["stages"],
            arrays["depths"],
        )


@torch.no_grad()
def lesion_report(
    model: torch.nn.Module,
    anat: Anatomy,
    test: Split,
    *,
    n_images: int,
    seed: int = 0,
    batch_size: int = 500,
    device: str = "cpu",
) -> LesionReport:
    """Correctness on ``n_images`` test images (seeded), intact and with each removable unit lesioned."""
    gen = torch.Generator().manual_seed(seed)
    index = torch.randperm(len(test), generator=gen)[: min(n_images, len(test))]
    units = removable_units(anat)
    columns = [predictions(model, test, index, batch_size=batch_size, device=device)[0]]
    for unit in units:
        with lesioned(model, anat, unit.name):
            columns.append(predictions(model, test, index, batch_size=batch_size, device=device)[0])
    return LesionReport(
        np.stack(columns, 1),
        tuple(u.name for u in units),
        tuple(u.kind for u in units),
        np.array([u.stage for u in units]),
        np.array([u.depth for u in units]),
    )


def lesion_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> LesionReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return lesion_report(inp.model, inp.anatomy, inp.test, n_images=m.lesion_images, seed=seed, device=device)
