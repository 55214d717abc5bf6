"""Training-time augmentation on [0, 1] batches, seeded by a ``torch.Generator`` (recipes' ``augment``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["crop_flip", "randaugment"]


def crop_flip(x: torch.Tensor, augment: tuple[str, ...], gen: torch.Generator) -> torch.Tensor:
    """Per-sample random crop (zero padding 4) and horizontal flip, as far as ``augment`` names them."""
    b, _, h, w = x.shape
    if "crop" in augment:
        pad = 4
        padded = F.pad(x, (pad, pad, pad, pad))
        dy = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
        dx = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
        rows = (dy[:, None] + torch.arange(h)).to(x.device)
        cols = (dx[:, None] + torch.arange(w)).to(x.device)
        bidx = torch.arange(b, device=x.device)[:, None, None]
        x = padded.permute(0, 2, 3, 1)[bidx, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
    if "flip" in augment:
        flip = (torch.rand(b, generator=gen) < 0.5).to(x.device).view(b, 1, 1, 1)
        x = torch.where(flip, x.flip(3), x)
    return x


def randaugment(images: torch.Tensor) -> torch.Tensor:
    """RandAugment m9 n2 (torchvision) per sample on uint8 images (the paper recipe; slow on CPU)."""
    from torchvision.transforms import v2

    op = v2.RandAugment(num_ops=2, magnitude=9)
    return torch.stack([op(img) for img in images])
