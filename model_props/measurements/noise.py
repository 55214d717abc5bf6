"""The noise report: accuracy under band-limited noise (Park & Kim 2022, Fig. 2b); the noise itself is
:mod:`model_props.measures.noise`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..errors import NotApplicable
from ..measures.noise import FREQUENCIES, NOISE_RMS, band_noise
from .fit import batch_predictions, predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["NoiseReport", "noise_report", "noise_kind_report"]


@dataclass
class NoiseReport:
    """Per image, correctness on the clean image, under white noise and under noise in each band."""

    correct: np.ndarray  # (N, 2 + len(frequencies)) bool: clean, white, bands
    frequencies: np.ndarray  # (F,) units of pi

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.correct)}[sampling]

    def drop(self, column: int, idx: np.ndarray | None = None) -> Any:
        """Accuracy drop (points of accuracy, 0-1 scale) of a condition: clean - noisy, over every image, the images
        ``idx`` (n,), or each row of an index matrix (rows, n) -> (rows,)."""
        c = self.correct if idx is None else self.correct[idx]
        return c[..., 0].mean(axis=-1) - c[..., column].mean(axis=-1)

    def band_drop(self, frequency: float, idx: np.ndarray | None = None) -> Any:
        hits = np.flatnonzero(np.isclose(self.frequencies, frequency))
        if not hits.size:
            raise NotApplicable(
                f"no noise band at {frequency}π in this profile (measured: {self.frequencies.tolist()})"
            )
        return self.drop(2 + int(hits[0]), idx)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"correct": self.correct, "frequencies": self.frequencies}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> NoiseReport:
        return cls(arrays["correct"], arrays["frequencies"])


@torch.no_grad()
def noise_report(
    model: torch.nn.Module,
    test: Split,
    *,
    n_images: int,
    seed: int = 0,
    rms: float = NOISE_RMS,
    frequencies: tuple[float, ...] = FREQUENCIES,
    batch_size: int = 500,
    device: str = "cpu",
) -> NoiseReport:
    """Correctness of ``model`` on ``n_images`` test images (a seeded permutation), clean and perturbed."""
    gen = torch.Generator().manual_seed(seed)
    index = torch.randperm(len(test), generator=gen)[: min(n_images, len(test))]
    columns = [predictions(model, test, index, batch_size=batch_size, device=device)[0]]
    for frequency in (None, *frequencies):
        noise_gen = torch.Generator().manual_seed(seed + 1)  # the same Gaussian draws, filtered per band
        correct = []
        for start in range(0, len(index), batch_size):
            x, y = test.batch(index[start : start + batch_size])
            x = x + band_noise(tuple(x.shape), frequency, rms=rms, generator=noise_gen)
            correct.append(batch_predictions(model, x, y, device)[0])
        columns.append(torch.cat(correct).numpy())
    return NoiseReport(np.stack(columns, axis=1), np.array(frequencies, dtype=np.float64))


def noise_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> NoiseReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return noise_report(inp.model, inp.test, n_images=m.noise_images, seed=seed, device=device)
