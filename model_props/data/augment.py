"""Training-time augmentation of batches (recipes' ``augment``), every draw from a seeded ``torch.Generator`` on the CPU."""

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


def randaugment(images: torch.Tensor, generator: torch.Generator, num_ops: int = 2, magnitude: int = 9) -> torch.Tensor:
    """RandAugment (Cubuk et al. 2020), m9 n2 with torchvision's operations and magnitudes, on a batch of uint8
    images on any device: each image draws its own ``num_ops`` operations, and a sign for each, from ``generator``
    (on the CPU: the same draws on every device), as torchvision's ``v2.RandAugment`` draws them per image; then at
    each step the images that drew the same operation and sign go through it together, one call for each (at most
    22 per step: 9 signed operations with two signs, 4 unsigned, Identity none; a loop over the images made one per
    image and operation). The groups' indices go to the device in one copy for the batch, not one for each group: a
    copy from pageable host memory waits for the device's queue, so each would stall the operations launched before
    it."""
    from torchvision.transforms import v2

    # torchvision keeps its table of operations and their dispatcher private; calling them (rather than copying the
    # fourteen operations and magnitudes) keeps exactly what v2.RandAugment applies to one image
    op = v2.RandAugment(num_ops=num_ops, magnitude=magnitude)
    b, height, width = len(images), images.shape[-2], images.shape[-1]
    table = []  # (name, value, signed) of each operation, in torchvision's order
    for name, (magnitudes_of, signed) in op._AUGMENTATION_SPACE.items():
        magnitudes = magnitudes_of(op.num_magnitude_bins, height, width)
        table.append(
            (name, 0.0 if magnitudes is None else float(magnitudes[magnitude]), signed and magnitudes is not None)
        )
    groups: list[tuple[str, float, torch.Tensor]] = []  # every step's (operation, signed value, images), in order
    for _ in range(num_ops):
        which = torch.randint(len(table), (b,), generator=generator)
        negative = torch.rand(b, generator=generator) <= 0.5
        for k, (name, value, signed) in enumerate(table):
            for sign in (1.0, -1.0) if signed else (1.0,):
                chosen = (which == k) & (negative == (sign < 0)) if signed else which == k
                if name != "Identity" and bool(chosen.any()):
                    groups.append((name, sign * value, chosen.nonzero().flatten()))
    out = images.clone()
    if not groups:
        return out
    indices = torch.cat([idx for *_, idx in groups])
    if images.device.type == "cuda":
        indices = indices.pin_memory()
    on_device = indices.to(images.device, non_blocking=True).split([len(idx) for *_, idx in groups])
    for (name, value, _), idx in zip(groups, on_device):
        out[idx] = op._apply_image_or_video_transform(out[idx], name, value, interpolation=op.interpolation,
                                                      fill=op._fill)  # fmt: skip
    return out
