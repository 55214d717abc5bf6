"""Cross-model similarity of two models' units on the same images (Raghu et al. 2021, Fig. 1-2; docs/measurements.md#definitions).

:func:`measure_cross_cka` runs the same seeded sample of test images through both models, batch by batch, and
accumulates minibatch CKA between every unit of one and every unit of the other
(:class:`~model_props.measurements.functional.cross.CrossMinibatchCKA`). The images are drawn exactly as
:func:`~.units.measure_units` draws them (a seeded permutation of the split), so model A against itself gives
its own units report's CKA matrix. Mini-batches are the sampling unit. The two models must read images of the
same size; their maps may differ in size and channels (CKA compares Gram matrices over images).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..anatomy.capture import capture
from ..anatomy.model import Anatomy
from ..data import Split
from ..errors import NotApplicable
from .functional.cross import CrossMinibatchCKA
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["CrossReport", "PairReports", "measure_cross_cka", "cross_report"]


@dataclass
class CrossReport:
    """Per-batch terms of CKA between the spatial units of model A (rows) and model B (columns)."""

    depth_a: np.ndarray  # (Ua,) normalised depth of A's units
    depth_b: np.ndarray  # (Ub,)
    cka: CrossMinibatchCKA

    def size(self, sampling: str) -> int:
        """Sampling unit: ``batches``."""
        return {"batches": len(self.cka.cross)}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "depth_a": self.depth_a,
            "depth_b": self.depth_b,
            "cross": torch.stack(self.cka.cross).numpy(),
            "own_a": torch.stack(self.cka.own_a).numpy(),
            "own_b": torch.stack(self.cka.own_b).numpy(),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> CrossReport:
        cka = CrossMinibatchCKA()
        cka.cross, cka.own_a, cka.own_b = (list(torch.from_numpy(arrays[k])) for k in ("cross", "own_a", "own_b"))
        return cls(arrays["depth_a"], arrays["depth_b"], cka)


@dataclass
class PairReports:
    """A model against another (``against``), against a second training seed of itself (``control``: what
    "similar" means between two runs of one recipe) and against a randomly initialised copy of the other model
    (``null``), all on the same images and batches, so a statistic over them is paired by batch."""

    against: CrossReport
    control: CrossReport
    null: CrossReport

    def size(self, sampling: str) -> int:
        """Sampling unit: ``batches`` (the same batches in all three)."""
        return self.against.size(sampling)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {f"{which}.{k}": v for which in ("against", "control", "null")
                for k, v in getattr(self, which).to_arrays().items()}  # fmt: skip


@torch.no_grad()
def measure_cross_cka(
    model_a: torch.nn.Module, anat_a: Anatomy, model_b: torch.nn.Module, anat_b: Anatomy, split: Split, *,
    n_images: int = 1024, batch_size: int = 64, seed: int = 0, device: str = "cpu",
) -> CrossReport:  # fmt: skip
    """CKA between every spatial unit of ``model_a`` and of ``model_b`` on ``n_images`` seeded test images."""
    size_a, size_b = (getattr(m, "img_size", None) for m in (model_a, model_b))
    if size_a and size_b and size_a != size_b:
        raise NotApplicable(f"the two models read images of {size_a} and {size_b} px; their units cannot be compared on the same images")  # fmt: skip
    if n_images > len(split):
        raise ValueError(f"n_images={n_images} exceeds the split's {len(split)} images")
    order = torch.randperm(len(split), generator=torch.Generator().manual_seed(seed))[:n_images]
    units_a, units_b = anat_a.spatial_units, anat_b.spatial_units
    model_a.eval()
    model_b.eval()
    cka = CrossMinibatchCKA()
    for start in range(0, n_images, batch_size):
        x = split.batch(order[start : start + batch_size])[0].to(device)
        states_a = capture(model_a, anat_a, x, branches=False).states
        states_b = capture(model_b, anat_b, x, branches=False).states
        cka.update([states_a[u.name] for u in units_a], [states_b[u.name] for u in units_b])  # HSIC to the host
    return CrossReport(np.array([u.depth for u in units_a]), np.array([u.depth for u in units_b]), cka)


def cross_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, other: MeasureInput) -> CrossReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return measure_cross_cka(inp.model, inp.anatomy, other.model, other.anatomy, inp.test, n_images=m.n_images,
                             batch_size=m.batch_size, seed=seed, device=device)  # fmt: skip
