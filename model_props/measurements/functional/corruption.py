"""Common corruptions generated in torch at 5 severities (CIFAR-10-C style; Hendrycks & Dietterich 2019;
Park & Kim 2022, Fig. 12c; docs/papers.md#corruptions).

Severities follow the CIFAR-10-C parameters where the corruption is the same; images stay in [0, 1].

============== ==================================================== ===========================
corruption     operation                                            severity 1 ... 5
============== ==================================================== ===========================
gaussian_noise x + N(0, s^2), clipped                               s = .04 .06 .08 .09 .10
shot_noise     Poisson(x c) / c, clipped                            c = 500 250 100 75 50
gaussian_blur  torchvision gaussian_blur, kernel 2 ceil(3 s) + 1    s = .4 .6 .7 .8 1.0
box_blur       k x k mean filter (reflect padding)                  k = 2 3 4 5 6
contrast       (x - m) c + m, m the per-channel image mean          c = .75 .5 .4 .3 .15
brightness     x + c, clipped (additive, in RGB)                    c = .05 .1 .15 .2 .3
pixelate       area down-sampling by c, nearest up-sampling         c = .95 .9 .85 .75 .65
jpeg           torchvision JPEG round trip                          quality = 80 65 58 50 40
============== ==================================================== ===========================
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ...errors import MeasurementError, choices

__all__ = ["CORRUPTIONS", "SEVERITIES", "corrupt"]

SEVERITIES = 5


def _gaussian_noise(x: torch.Tensor, s: float, gen: torch.Generator) -> torch.Tensor:
    return (x + s * torch.randn(x.shape, generator=gen)).clamp(0, 1)


def _shot_noise(x: torch.Tensor, c: float, gen: torch.Generator) -> torch.Tensor:
    return (torch.poisson(x * c, generator=gen) / c).clamp(0, 1)


def _gaussian_blur(x: torch.Tensor, s: float, gen: torch.Generator) -> torch.Tensor:
    from torchvision.transforms.v2 import functional as TF

    k = 2 * math.ceil(3 * s) + 1
    return TF.gaussian_blur(x, [k, k], [s, s])


def _box_blur(x: torch.Tensor, k: float, gen: torch.Generator) -> torch.Tensor:
    k = int(k)
    left, right = (k - 1) // 2, k // 2
    padded = F.pad(x, (left, right, left, right), mode="reflect")
    return F.avg_pool2d(padded, k, stride=1)


def _contrast(x: torch.Tensor, c: float, gen: torch.Generator) -> torch.Tensor:
    mean = x.mean(dim=(2, 3), keepdim=True)
    return ((x - mean) * c + mean).clamp(0, 1)


def _brightness(x: torch.Tensor, c: float, gen: torch.Generator) -> torch.Tensor:
    return (x + c).clamp(0, 1)


def _pixelate(x: torch.Tensor, c: float, gen: torch.Generator) -> torch.Tensor:
    size = x.shape[-1]
    small = F.interpolate(x, size=max(1, round(size * c)), mode="area")
    return F.interpolate(small, size=size, mode="nearest")


def _jpeg(x: torch.Tensor, quality: float, gen: torch.Generator) -> torch.Tensor:
    import warnings

    from torchvision.transforms.v2 import functional as TF

    with warnings.catch_warnings():  # torchvision 0.29 deprecates its codecs in favour of torchcodec
        warnings.simplefilter("ignore", DeprecationWarning)
        encoded = TF.jpeg((x * 255).round().to(torch.uint8), int(quality))
    return encoded.float() / 255


CORRUPTIONS: dict[str, tuple[Callable[[torch.Tensor, float, torch.Generator], torch.Tensor], tuple[float, ...]]] = {
    "gaussian_noise": (_gaussian_noise, (0.04, 0.06, 0.08, 0.09, 0.10)),
    "shot_noise": (_shot_noise, (500, 250, 100, 75, 50)),
    "gaussian_blur": (_gaussian_blur, (0.4, 0.6, 0.7, 0.8, 1.0)),
    "box_blur": (_box_blur, (2, 3, 4, 5, 6)),
    "contrast": (_contrast, (0.75, 0.5, 0.4, 0.3, 0.15)),
    "brightness": (_brightness, (0.05, 0.1, 0.15, 0.2, 0.3)),
    "pixelate": (_pixelate, (0.95, 0.9, 0.85, 0.75, 0.65)),
    "jpeg": (_jpeg, (80, 65, 58, 50, 40)),
}


def corrupt(x: torch.Tensor, name: str, severity: int, generator: torch.Generator) -> torch.Tensor:
    """``x`` (B, 3, H, W) in [0, 1] under corruption ``name`` at ``severity`` 1..5."""
    if name not in CORRUPTIONS:
        raise MeasurementError(f"unknown corruption {name!r}; valid: {choices(CORRUPTIONS)}")
    if not 1 <= severity <= SEVERITIES:
        raise MeasurementError(f"corruption severity={severity}; valid: 1..{SEVERITIES}")
    fn, levels = CORRUPTIONS[name]
    return fn(x, levels[severity - 1], generator)
