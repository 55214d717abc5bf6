"""The occlusion report: correctness on clean and randomly occluded test images (Naseer et al. 2021, Sec. 3.1;
docs/design.md#decision-rules, ``naseer2021.occlusion-robust``); the masks are :mod:`.functional.occlusion`'s.

The images are a seeded sample of ``corruption_images`` test images (occlusion is read as one more corruption
of the inputs), measured in chunks of an eighth of the sample (:func:`~.chunks.chunk_size`) in its order, each
chunk's masks seeded by the measurement seed and the chunk alone, and the fill is the per-channel mean of the whole
sample, so every model measured on one dataset sees the same occluded images (comparisons are paired) and the report
on the first n images is a prefix of the whole one: the looks of a sequential verdict, each chunk its own cache entry
(:mod:`.chunks`).
The relative drop ``(clean - occluded) / (clean - chance)`` does not favour a model near the ceiling.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from .chunks import Chunks, chunk_size, computed, in_chunks
from .fit import batch_predictions
from .functional.occlusion import occlude, occlusion_masks
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
def _occlusion_chunk(model: torch.nn.Module, test: Split, seed: int, fill: torch.Tensor, device: str, chunk: int,
                     index: torch.Tensor) -> np.ndarray:  # fmt: skip
    """(n, 2) bool: correct on the clean images ``test[index]`` and on them occluded by the chunk's masks."""
    x, y = test.batch(index)
    draws = int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])
    masks = occlusion_masks(len(index), x.shape[-1], generator=torch.Generator().manual_seed(draws))
    clean = batch_predictions(model, x, y, device)[0]
    return torch.stack([clean, batch_predictions(model, occlude(x, masks, fill), y, device)[0]], 1).numpy()


def occlusion_report(model: torch.nn.Module, test: Split, *, n_images: int, sample: int | None = None, seed: int = 0,
                     device: str = "cpu", chunks: Chunks = computed) -> OcclusionReport:  # fmt: skip
    """Correctness of ``model`` on the first ``n_images`` test images of a seeded order, clean and with half of the
    8x8 cells occluded, chunk by chunk; the fill is the mean colour of the whole ``sample`` (default ``n_images``)
    images, so that a shorter report is a prefix of the whole one. Chance is one over the model's outputs."""
    order = torch.randperm(len(test), generator=torch.Generator().manual_seed(seed))
    n = min(n_images, len(test))
    whole = min(sample or n, len(test))
    fill = test.images[order[:whole]].float().div(255.0).mean(dim=(0, 2, 3))
    model.eval()
    rows = in_chunks(order, n, chunk_size(whole), {"fill_images": whole},
                     functools.partial(_occlusion_chunk, model, test, seed, fill, device), chunks)  # fmt: skip
    num_classes = int(model(test.batch(order[:1])[0].to(device)).shape[-1])
    return OcclusionReport(rows[:, 0], rows[:, 1], num_classes)


def occlusion_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                          upto: int, chunks: Chunks = computed) -> OcclusionReport:  # fmt: skip
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` on its first ``upto``
    images (the registry's look at the whole sample of ``corruption_images``, whose mean colour is the fill)."""
    return occlusion_report(inp.model, inp.test, n_images=upto, sample=m.corruption_images, seed=seed, device=device,
                            chunks=chunks)  # fmt: skip
