"""The modules mutations put in place of a model's own (see :mod:`.mutants`): attention with fixed weights, a
constant gain, random Fourier features, a token-grid blur, a sharpening smoothing block and an input band-stop."""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from ..zoo.resnet import SpatialSmoothing

__all__ = ["FixedAttention", "Scale", "RandomFeatures", "TokenBlur", "Sharpen", "BandStop"]


class FixedAttention(nn.Module):
    """Attention with fixed weights over all tokens: ``identity`` (A = I), ``uniform`` (A = 1/N) or
    ``highpass`` (A = I - 1/N). Weights pass through ``attn_drop`` so that capture can read them."""

    def __init__(self, num_heads: int, mode: Literal["identity", "uniform", "highpass"]):
        super().__init__()
        self.num_heads = num_heads
        self.mode = mode
        self.attn_drop = nn.Identity()

    def forward(self, x: torch.Tensor, **_: object) -> torch.Tensor:
        b, n, c = x.shape
        # both weight matrices come out of a softmax, as real attention weights do, so that the anatomy's
        # tracer sees attention (softmax(.) V) and the mutant keeps its base model's msa units
        eye = torch.eye(n, dtype=torch.bool, device=x.device)
        identity = torch.zeros(n, n, dtype=x.dtype, device=x.device).masked_fill(~eye, float("-inf")).softmax(-1)
        uniform = torch.zeros(n, n, dtype=x.dtype, device=x.device).softmax(-1)  # exactly 1/N
        weights = {"identity": identity, "uniform": uniform, "highpass": identity - uniform}[self.mode]
        weights = self.attn_drop(weights.expand(b, self.num_heads, n, n))
        v = x.reshape(b, n, self.num_heads, c // self.num_heads).transpose(1, 2)
        return (weights @ v).transpose(1, 2).reshape(b, n, c)


class Scale(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


class RandomFeatures(nn.Module):
    """x -> gain * sin(freq * x W), W ~ N(0, 1/C), fixed by a seed (random Fourier features of small bandwidth)."""

    weight: torch.Tensor  # a buffer, registered in __init__

    def __init__(self, dim: int, gain: float, freq: float, seed: int):
        super().__init__()
        w = torch.randn(dim, dim, generator=torch.Generator().manual_seed(seed)) / dim**0.5
        self.register_buffer("weight", w)
        self.gain, self.freq = gain, freq

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gain * torch.sin(self.freq * (x @ self.weight))


class TokenBlur(nn.Module):
    """``blur(x) - x`` over the spatial token grid (3x3 box blur), prefix tokens left at zero change."""

    def __init__(self, prefix_tokens: int):
        super().__init__()
        self.prefix = prefix_tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        side = math.isqrt(n - self.prefix)
        grid = x[:, self.prefix :].transpose(1, 2).reshape(b, c, side, side)
        blurred = F.avg_pool2d(grid, 3, 1, 1, count_include_pad=False).reshape(b, c, -1).transpose(1, 2)
        return torch.cat([x[:, : self.prefix] * 0.0, blurred - x[:, self.prefix :]], dim=1)


class Sharpen(SpatialSmoothing):
    """The smoothing block turned around: ``x + 3 (x - blur(x))`` amplifies what the blur would remove."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 3.0 * (x - super().forward(x))


class BandStop(nn.Module):
    """An exact Fourier band-stop on the input: frequencies of L-infinity radius in (low, high] (units of pi) go."""

    def __init__(self, net: nn.Module, low: float, high: float):
        super().__init__()
        self.net, self.low, self.high = net, low, high

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = torch.fft.fftfreq(x.shape[-1], device=x.device) * 2.0
        radius = torch.maximum(k.abs()[:, None], k.abs()[None, :])
        keep = ~((radius > self.low + 1e-9) & (radius <= self.high + 1e-9))
        return self.net(torch.fft.ifft2(torch.fft.fft2(x) * keep).real)
