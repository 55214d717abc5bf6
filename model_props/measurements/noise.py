"""The noise report: accuracy under band-limited noise (Park & Kim 2022, Fig. 2b); the noise itself is
:mod:`model_props.measurements.functional.noise`.

The test images are taken in one seeded order and measured in chunks of an eighth of the whole sample (250 of the
2,000 noise images: :func:`~.chunks.chunk_size`, a look's worth), each with its own Gaussian draws (seeded by the
sample and the chunk, the same draws filtered per band), so that the report on the first n images is a prefix of the
whole one: the looks of a sequential verdict, each chunk its own cache entry (:mod:`.chunks`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..errors import NotApplicable
from .chunks import Chunks, chunk_size, computed, in_chunks
from .fit import batch_predictions
from .functional.noise import FREQUENCIES, NOISE_RMS, band_noise
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
def _noise_chunk(model: torch.nn.Module, test: Split, seed: int, rms: float, frequencies: tuple[float, ...],
                 device: str, chunk: int, index: torch.Tensor) -> np.ndarray:  # fmt: skip
    """(n, 2 + F) bool: correct on the clean images ``test[index]``, under white noise and in each band."""
    x, y = test.batch(index)
    columns = [batch_predictions(model, x, y, device)[0]]
    for frequency in (None, *frequencies):
        draws = int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])  # the same draws, filtered per band
        noise_gen = torch.Generator().manual_seed(draws)
        noisy = x + band_noise(tuple(x.shape), frequency, rms=rms, generator=noise_gen)
        columns.append(batch_predictions(model, noisy, y, device)[0])
    return torch.stack(columns, 1).numpy()


def noise_report(
    model: torch.nn.Module,
    test: Split,
    *,
    n_images: int,
    sample: int | None = None,
    seed: int = 0,
    rms: float = NOISE_RMS,
    frequencies: tuple[float, ...] = FREQUENCIES,
    device: str = "cpu",
    chunks: Chunks = computed,
) -> NoiseReport:
    """Correctness of ``model`` on the first ``n_images`` of a seeded order of a ``sample`` of test images (default
    ``n_images``), clean and perturbed, chunk by chunk (module docstring); ``chunks`` keeps or recalls each chunk (by
    default none is kept)."""
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(test), generator=gen)
    n = min(n_images, len(test))
    size = chunk_size(min(sample or n, len(test)))
    model.eval()
    compute = functools.partial(_noise_chunk, model, test, seed, rms, frequencies, device)
    correct = in_chunks(order, n, size, {"rms": rms, "frequencies": list(frequencies)}, compute, chunks)
    return NoiseReport(correct, np.array(frequencies, dtype=np.float64))


def noise_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                      upto: int, chunks: Chunks = computed) -> NoiseReport:  # fmt: skip
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` on its first ``upto``
    images (the registry's look at the whole sample of ``noise_images``)."""
    return noise_report(inp.model, inp.test, n_images=upto, sample=m.noise_images, seed=seed, device=device,
                        chunks=chunks)  # fmt: skip
