"""The uniform model interface: [0, 1] images in, logits (B, num_classes) out, normalisation inside."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["Classifier", "unwrap"]


class Classifier(nn.Module):
    """Wraps a network so that it takes images in [0, 1] (as torchattacks and the measurements expect).

    ``forward(x) = net((x - mean) / std)``. ``mean``/``std`` are non-persistent buffers, so
    ``classifier.net.state_dict()`` is exactly the wrapped network's own checkpoint format.
    """

    mean: torch.Tensor  # buffers, registered in __init__
    std: torch.Tensor

    def __init__(
        self,
        net: nn.Module,
        *,
        name: str,
        num_classes: int,
        img_size: int,
        mean: Sequence[float] = (0.5, 0.5, 0.5),
        std: Sequence[float] = (0.25, 0.25, 0.25),
    ):
        super().__init__()
        self.net = net
        self.name = name
        self.num_classes = num_classes
        self.img_size = img_size
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)


def unwrap(model: nn.Module) -> nn.Module:
    """The network inside a :class:`Classifier` (or the model itself)."""
    return model.net if isinstance(model, Classifier) else model
