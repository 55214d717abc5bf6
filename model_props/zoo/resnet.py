"""ResNet at 32 px from timm with a CIFAR stem: 3x3 stride-1 conv, BN, ReLU, no max-pool; optionally with
spatial smoothing at the end of every stage (Park & Kim, "Blurs Behave like Ensembles", ICML 2022)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from timm.models.resnet import BasicBlock, Bottleneck, ResNet
from torch import nn

__all__ = ["build_resnet", "SpatialSmoothing"]


class SpatialSmoothing(nn.Module):
    """The Blurs smoothing block: ``x -> relu(t tanh(x / t))`` (t = 10), then a 2x2 box blur.

    The authors pad by 1 on every side, so each map grows by a pixel (32 -> 33); we pad only the right and
    bottom edges with zeros, which keeps the map size and blurs the same 2x2 neighbourhoods.
    """

    def __init__(self, temperature: float = 10.0):
        super().__init__()
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.temperature * torch.tanh(x / self.temperature))
        return F.avg_pool2d(F.pad(x, (0, 1, 0, 1)), 2, stride=1)


def build_resnet(
    num_classes: int,
    img_size: int = 32,
    layers: Sequence[int] = (2, 2, 2, 2),
    channels: Sequence[int] = (16, 32, 64, 128),
    block: str = "basic",
    zero_init_last: bool = True,
    drop_path_rate: float = 0.0,
    smoothing: bool = False,
) -> ResNet:
    """ResNet-18 layout by default. ``img_size`` is accepted for a uniform signature; any size works.
    ``smoothing`` appends a :class:`SpatialSmoothing` block to every stage (before each subsampling).

    timm fixes the first stage's input width at ``stem_width * 2`` for a 'deep' stem, so we build with
    ``stem_width = channels[0] // 2`` and then swap the stem for the CIFAR one (see CPU notes).
    """
    blocks = {"basic": BasicBlock, "bottleneck": Bottleneck}
    if block not in blocks:
        raise ValueError(f"block={block!r}; valid: 'basic', 'bottleneck'")
    c0 = channels[0]
    net = ResNet(
        blocks[block],  # type: ignore[arg-type]  # timm annotates the block class as an instance (BasicBlock | Bottleneck)
        tuple(layers),
        num_classes=num_classes,
        channels=tuple(channels),
        stem_type="deep",
        stem_width=c0 // 2,
        zero_init_last=zero_init_last,
        drop_path_rate=drop_path_rate,
    )
    stem: nn.Module = net  # timm types conv1 and maxpool as its own stem's Sequential; any module fits
    stem.conv1 = nn.Conv2d(3, c0, 3, 1, 1, bias=False)
    stem.bn1 = nn.BatchNorm2d(c0)
    stem.maxpool = nn.Identity()
    if smoothing:
        for s in range(1, 5):
            getattr(net, f"layer{s}").append(SpatialSmoothing())
    return net
