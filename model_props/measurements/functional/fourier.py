"""Fourier Δlog-amplitude of feature maps (Park & Kim 2022, Fig. 2a and Fig. 8; docs/measurements.md#definitions).

For a map (B, C, h, w): 2-D FFT over (h, w) per sample and channel, ``log(|F| + 1e-6)``, DC shifted to the
centre (index h // 2), mean over channels, the diagonal from the centre to the corner, minus its DC value:

    ΔlogA_b(k) = mean_c logA_{b,c}(h//2 + k, w//2 + k) - mean_c logA_{b,c}(h//2, w//2),   k = 0 .. ceil(h/2) - 1

The paper then averages over the batch; a mean of logs is linear, so the batch mean of these per-image
curves *is* the paper's curve, and keeping images apart lets us bootstrap over them. The last point is the
paper's "1.0π" (really (1 - 2/h)π for even h: Nyquist wraps to index 0 after the shift).
"""

from __future__ import annotations

import torch

__all__ = ["EPS", "log_amplitude", "delta_log_amplitude", "high_frequency"]

EPS = 1e-6


def log_amplitude(fmap: torch.Tensor) -> torch.Tensor:
    """``log(|FFT2(fmap)| + 1e-6)`` with DC shifted to (h // 2, w // 2): (B, C, h, w) -> (B, C, h, w), float64."""
    return torch.fft.fftshift(torch.log(torch.fft.fft2(fmap.double()).abs() + EPS), dim=(-2, -1))


def delta_log_amplitude(fmap: torch.Tensor) -> torch.Tensor:
    """Per-image Δlog-amplitude curve along the diagonal: (B, C, h, w) -> (B, ceil(h / 2)).

    >>> delta_log_amplitude(torch.ones(2, 3, 8, 8))[0, -1] < -10  # a constant map has no high frequencies
    tensor(True)
    """
    b, c, h, w = fmap.shape
    if h != w:
        raise ValueError(f"feature map must be square, got {h}x{w}")
    amp = log_amplitude(fmap).mean(dim=1)  # (B, h, w), DC at (h//2, w//2)
    diag = amp.diagonal(dim1=-2, dim2=-1)[:, h // 2 :]
    return (diag - diag[:, :1]).float()


def high_frequency(fmap: torch.Tensor) -> torch.Tensor:
    """The last point of the Δlog-amplitude curve, per image: (B, C, h, w) -> (B,)."""
    return delta_log_amplitude(fmap)[:, -1]
