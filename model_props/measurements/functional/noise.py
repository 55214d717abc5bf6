"""Band-limited noise (Park & Kim 2022, Fig. 2b; docs/papers.md#frequency-band-noise; docs/measurements.md#definitions).

A Gaussian perturbation per image is filtered in the 2-D Fourier domain to a square ring around frequency
``f``: the frequencies whose L-infinity radius ``max(|w_x|, |w_y|)`` (with ``w = 2 pi k / size`` after
centring, so that pi is Nyquist) lies in ``(f - w, f + w]`` for a half-width ``w = 0.1 pi``. The filtered
perturbation is rescaled to the same L2 norm per image in every band, as is the unfiltered reference
noise, and added to the [0, 1] input (not clipped, so that the norm is exact).

We use an RMS of 0.05 per pixel on the [0, 1] scale (L2 = 0.05 sqrt(3 H W), 2.77 at 32 px), between the
Gaussian-noise severities 1 and 2 of CIFAR-10-C (sigma 0.04 and 0.06): a mild corruption, in the range
corruption benchmarks measure. The authors' own snippet uses sign noise of 0.7 on normalised ImageNet
inputs without rescaling per band (docs/papers.md#frequency-band-noise), which at 32 px would drown the image.
"""

from __future__ import annotations

import math

import torch

from ...errors import MeasurementError

__all__ = ["FREQUENCIES", "HALF_WIDTH", "NOISE_RMS", "band_mask", "band_noise"]

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


def band_noise(
    shape: tuple[int, ...],
    frequency: float | None,
    *,
    rms: float = NOISE_RMS,
    generator: torch.Generator,
    half_width: float = HALF_WIDTH,
) -> torch.Tensor:
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
