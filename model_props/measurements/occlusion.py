"""The occlusion report: correctness on clean and randomly occluded test images (Naseer et al. 2021, Sec. 3.1;
docs/design.md#decision-rules, ``naseer2021.occlusion-robust``); the masks are :mod:`model_props.measures.occlusion`'s.

The images are a seeded sample of ``corruption_images`` test images (occlusion is read as one more corruption
of the inputs), the masks are seeded by the measurement seed alone and the fill is the per-channel mean of the
sampled images, so every model measured on one dataset sees the same occluded images: comparisons are paired.
The relative drop ``(clean - occluded) / (clean - chance)`` does not favour a model near the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..measures.occlusion import occlude, occlusion_masks
from .fit import batch_predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["OcclusionReport", "occlusion_report", "occlusion_kind_report"]


@dataclass
class OcclusionReport:
    """Per image, correctness on the clean and on the occluded image; ``num_classes`` sets chance."""

    clean_correct: np.ndarray  # (N,) bool
    occluded_correct: np.ndarray  # (N,) bool
    num_classes: int

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.clean_correct)}[sampling]

    def relative_drop(self, idx: np.ndarray | None = None) -> Any:
        """(clean accuracy - occluded accuracy) / (clean accuracy - chance); NaN at or below chance. Over every
        image, the images ``idx`` (n,), or each row of an index matrix (rows, n) -> (rows,)."""
        rows = slice(None) if idx is None else idx
        clean, occluded = self.clean_correct[rows].mean(axis=-1), self.occluded_correct[rows].mean(axis=-1)
        headroom = clean - 1.0 / self.num_classes
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(headroom > 0, (clean - occluded) / np.where(headroom > 0, headroom, 1.0), np.nan)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"clean_correct": self.clean_correct, "occluded_correct": self.occluded_correct,
                "num_classes": np.array(self.num_classes)}  # fmt: skip

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> OcclusionReport:
        return cls(arrays["clean_correct"], arrays["occluded_correct"], int(arrays["num_classes"]))


@torch.no_grad()
def occlusion_report(
    model: torch.nn.Module, test: Split, *, n_images: int, seed: int = 0, batch_size: int = 500, device: str = "cpu"
) -> OcclusionReport:  # fmt: skip
    """Correctness of ``model`` on ``n_images`` seeded test images, clean and with half of the 8x8 cells occluded;
    chance is one over the model's number of outputs."""
    index = torch.randperm(len(test), generator=torch.Generator().manual_seed(seed))[: min(n_images, len(test))]
    images = test.images[index]
    fill = images.float().div(255.0).mean(dim=(0, 2, 3))
    masks = occlusion_masks(len(index), images.shape[-1], generator=torch.Generator().manual_seed(seed + 1))
    clean, occluded = [], []
    for start in range(0, len(index), batch_size):
        x, y = test.batch(index[start : start + batch_size])
        clean.append(batch_predictions(model, x, y, device)[0])
        occluded.append(batch_predictions(model, occlude(x, masks[start : start + batch_size], fill), y, device)[0])
    num_classes = int(model(test.batch(index[:1])[0].to(device)).shape[-1])
    return OcclusionReport(torch.cat(clean).numpy(), torch.cat(occluded).numpy(), num_classes)


def occlusion_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> OcclusionReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return occlusion_report(inp.model, inp.test, n_images=m.corruption_images, seed=seed, device=device)
