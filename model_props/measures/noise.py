"""Band-limited noise (Park & Kim 2022, Fig. 2b; PAPER.md Sec. 3.5; design Sec. 6).

A Gaussian perturbation per image is filtered in the 2-D Fourier domain to a square ring around frequency
``f``: the frequencies whose L-infinity radius ``max(|w_x|, |w_y|)`` (with ``w = 2 pi k / size`` after
centring, so that pi is Nyquist) lies in ``(f - w, f + w]`` for a half-width ``w = 0.1 pi``. The filtered
perturbation is rescaled to the same L2 norm per image in every band, as is the unfiltered reference
noise, and added to the [0, 1] input (not clipped, so that the norm is exact).

We use an RMS of 0.05 per pixel on the [0, 1] scale (L2 = 0.05 sqrt(3 H W), 2.77 at 32 px), between the
Gaussian-noise severities 1 and 2 of CIFAR-10-C (sigma 0.04 and 0.06): a mild corruption, in the range
corruption benchmarks measure. The authors' own snippet uses sign noise of 0.7 on normalised ImageNet
inputs without rescaling per band (PAPER.md Sec. 3.5), which at 32 px would drown the image.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..data import Split
from ..errors import MeasurementError, NotApplicable
from .fit import batch_predictions, predictions

__all__ = ["FREQUENCIES", "HALF_WIDTH", "NOISE_RMS", "band_mask", "band_noise", "NoiseReport", "noise_report"]

FREQUENCIES = tuple(round(0.1 * i, 1) for i in range(1, 10))  # in units of pi
HALF_WIDTH = 0.1  # in units of pi
NOISE_RMS = 0.05  # per pixel and channel, [0, 1] scale


def band_mask(size: int, frequency: float, half_width: float = HALF_WIDTH) -> torch.Tensor:
    """Boolean (size, size) mask, unshifted FFT layout, of the square ring ``frequency - half_width < r <=
    frequency + half_width`` with ``r`` the L-infinity radius in units of pi. ``frequency`` must be in (0, 1]."""
    if not 0.0 < frequency <= 1.0:
        raise MeasurementError(f"noise band frequency={frequency}π must be in (0, π]")
    k = torch.fft.fftfreq(size) * 2.0  # cycles per pixel * 2: in units of pi, in [-1, 1)
    radius = torch.maximum(k.abs()[:, None], k.abs()[None, :])
    return (radius > frequency - half_width + 1e-9) & (radius <= frequency + half_width + 1e-9)


def band_noise(shape: tuple[int, ...], frequency: float | None, *, rms: float = NOISE_RMS, generator: torch.Generator,
               half_width: float = HALF_WIDTH) -> torch.Tensor:
    """(B, C, H, W) noise with per-image L2 norm ``rms * sqrt(C H W)``: Gaussian, band-filtered around
    ``frequency`` (units of pi), or white when ``frequency`` is None."""
    b, c, h, w = shape
    if h != w:
        raise MeasurementError(f"band-limited noise needs square images, got {h}x{w}")
    noise = torch.randn(shape, generator=generator, dtype=torch.float64)
    if frequency is not None:
        mask = band_mask(h, frequency, half_width)
        if not mask.any():
            raise MeasurementError(f"no frequency of a {h}x{h} image lies in the band {frequency}π ± {half_width}π")
        noise = torch.fft.ifft2(torch.fft.fft2(noise) * mask).real
    norm = noise.flatten(1).norm(dim=1).clamp_min(1e-12).view(b, 1, 1, 1)
    return (noise / norm * rms * math.sqrt(c * h * w)).float()


@dataclass
class NoiseReport:
    """Per image, correctness on the clean image, under white noise and under noise in each band."""

    correct: np.ndarray  # (N, 2 + len(frequencies)) bool: clean, white, bands
    frequencies: np.ndarray  # (F,) units of pi

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.correct)}[sampling]

    def drop(self, column: int, idx: np.ndarray | None = None) -> float:
        """Accuracy drop (points of accuracy, 0-1 scale) of a condition: clean - noisy."""
        c = self.correct if idx is None else self.correct[idx]
        return float(c[:, 0].mean() - c[:, column].mean())

    def band_drop(self, frequency: float, idx: np.ndarray | None = None) -> float:
        hits = np.flatnonzero(np.isclose(self.frequencies, frequency))
        if not hits.size:
            raise NotApplicable(f"no noise band at {frequency}π in this profile (measured: {self.frequencies.tolist()})")
        return self.drop(2 + int(hits[0]), idx)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"correct": self.correct, "frequencies": self.frequencies}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> NoiseReport:
        return cls(arrays["correct"], arrays["frequencies"])


@torch.no_grad()
def noise_report(model: torch.nn.Module, test: Split, *, n_images: int, seed: int = 0, rms: float = NOISE_RMS,
                 frequencies: tuple[float, ...] = FREQUENCIES, batch_size: int = 500, device: str = "cpu") -> NoiseReport:
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
