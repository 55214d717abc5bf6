"""AlterNet: ResNet-style stages whose last blocks alternate Conv and MSA (Park & Kim 2022, Sec. 4).

Layout rule (authors' ``models/alternet.py``): inside a stage the leading blocks are conv blocks, then the
pair (conv, msa) repeats ``msas[s]`` times, so every MSA follows a conv block and ends its stage. The
paper's CIFAR-100 layout puts (0, 1, 1, 2) MSAs in the four stages.

Blocks are pre-activation. The MSA block is BN -> ReLU -> 1x1 conv -> BN -> local window attention ->
1x1 conv, added to the residual stream; it has no MLP. Window attention is timm's Swin ``WindowAttention``
(relative position bias per head; the authors share one table across heads, a detail we do not copy).

Each block exposes two identity taps, ``skip_out`` and ``branch_out``, so the capture API reads x and f(x)
without reaching into the arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from timm.models.swin_transformer import WindowAttention, window_partition, window_reverse
from torch import nn

__all__ = ["AlterNet", "block_layout"]


def block_layout(depths: Sequence[int], msas: Sequence[int]) -> list[list[str]]:
    """Per stage, the block kinds: ``'C'`` for conv, ``'A'`` for MSA.

    >>> block_layout((1, 2, 2, 4), (0, 1, 1, 2))
    [['C'], ['C', 'A'], ['C', 'A'], ['C', 'A', 'C', 'A']]
    """
    if len(depths) != len(msas):
        raise ValueError(f"depths={tuple(depths)} and msas={tuple(msas)} must have one entry per stage")
    layout = []
    for s, (d, n2) in enumerate(zip(depths, msas)):
        if 2 * n2 > d:
            raise ValueError(f"stage {s}: msas={n2} needs at least {2 * n2} blocks, depths[{s}]={d}")
        layout.append(["C"] * (d - 2 * n2) + ["C", "A"] * n2)
    return layout


class ConvBlock(nn.Module):
    """Pre-activation basic block: x + conv(relu(bn(conv(relu(bn(x))))))."""

    def __init__(self, dim_in: int, dim_out: int, stride: int = 1):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(dim_in)
        self.conv1 = nn.Conv2d(dim_in, dim_out, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim_out)
        self.conv2 = nn.Conv2d(dim_out, dim_out, 3, 1, 1, bias=False)
        self.shortcut = nn.Conv2d(dim_in, dim_out, 1, stride, bias=False) if stride != 1 or dim_in != dim_out else None
        self.skip_out = nn.Identity()
        self.branch_out = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(x))
        skip = self.skip_out(x if self.shortcut is None else self.shortcut(out))
        branch = self.conv2(F.relu(self.bn2(self.conv1(out))))
        return skip + self.branch_out(branch)


class AttentionBlock(nn.Module):
    """Pre-activation local-MSA block: x + up(attn_w(bn(down(relu(bn(x))))))."""

    def __init__(self, dim: int, num_heads: int, window_size: int):
        super().__init__()
        self.window_size = window_size
        self.bn1 = nn.BatchNorm2d(dim)
        self.down = nn.Conv2d(dim, dim, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim)
        self.attn = WindowAttention(dim, num_heads=num_heads, window_size=window_size, qkv_bias=True)
        self.up = nn.Conv2d(dim, dim, 1)
        self.skip_out = nn.Identity()
        self.branch_out = nn.Identity()

    def _window_attention(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        ws = self.window_size
        if h % ws or w % ws:
            raise ValueError(f"feature map {h}x{w} is not divisible by window_size={ws}")
        tokens = x.permute(0, 2, 3, 1)  # NHWC
        windows = window_partition(tokens, (ws, ws)).reshape(-1, ws * ws, c)
        windows = self.attn(windows).reshape(-1, ws, ws, c)
        return window_reverse(windows, (ws, ws), h, w).permute(0, 3, 1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branch = self.bn2(self.down(F.relu(self.bn1(x))))
        branch = self.up(self._window_attention(branch))
        return self.skip_out(x) + self.branch_out(branch)


class AlterNet(nn.Module):
    """AlterNet for small images: 3x3 stride-1 stem, four stages, BN-ReLU-GAP-linear head."""

    def __init__(
        self,
        num_classes: int = 10,
        widths: Sequence[int] = (16, 32, 64, 128),
        depths: Sequence[int] = (1, 2, 2, 4),
        msas: Sequence[int] = (0, 1, 1, 2),
        head_dim: int = 16,
        window_size: int = 4,
        in_chans: int = 3,
    ):
        super().__init__()
        if len(widths) != len(depths):
            raise ValueError(f"widths={tuple(widths)} and depths={tuple(depths)} must have one entry per stage")
        self.num_classes = num_classes
        self.stem = nn.Conv2d(in_chans, widths[0], 3, 1, 1, bias=False)
        stages = []
        dim_in = widths[0]
        for s, (kinds, dim) in enumerate(zip(block_layout(depths, msas), widths)):
            blocks: list[nn.Module] = []
            for b, kind in enumerate(kinds):
                stride = 2 if (s > 0 and b == 0) else 1
                if kind == "C":
                    blocks.append(ConvBlock(dim_in, dim, stride))
                else:
                    blocks.append(AttentionBlock(dim, max(1, dim // head_dim), window_size))
                dim_in = dim
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.norm = nn.BatchNorm2d(dim_in)
        self.head = nn.Linear(dim_in, num_classes)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.norm(self.stages(self.stem(x))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x).mean(dim=(2, 3)))
