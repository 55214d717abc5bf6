"""The tiny ResNet the library's tests build: one basic block per stage, 8 to 64 channels (the tiny profile's
``resnet`` recipe, ``tiny.toml``). Its blocks end in zero-initialised BatchNorm weights, so untrained, every
residual branch outputs zero."""

from __future__ import annotations

from torch import nn

from model_props.zoo import build_model

__all__ = ["TINY_RESNET_ARCH", "tiny_resnet"]

TINY_RESNET_ARCH = {"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]}  # a recipe's ``arch``: read, never mutated


def tiny_resnet(num_classes: int = 10) -> nn.Module:
    """The tiny ResNet, initialised from torch's current seed (untrained)."""
    return build_model("resnet", num_classes=num_classes, arch_kwargs=TINY_RESNET_ARCH)
