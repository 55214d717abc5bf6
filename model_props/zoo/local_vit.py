"""ViT with local attention: each spatial token attends to a k x k neighbourhood of the token grid (Park & Kim 2022,
Sec. 3.4 and Fig. 5: "local MSA" with 3x3 and 5x5 kernels against global MSA).

The parameters are the global ViT's (:func:`.vit.build_vit`), and so is its initialisation: only the attention
mask differs. Spatial token (r, c) attends to the spatial tokens (r', c') with max(|r - r'|, |c - c'|) <= k // 2;
the CLS token attends to every token (it reads the whole image out, as in the global ViT), while no spatial
token attends to it, so that every spatial representation stays local. The mask goes through timm's own
``attn_mask`` argument, so fused attention (training) and timm's explicit path (the anatomy's captures, the
Hessian's double backward) apply the same mask.

This module is a ``package.module:factory`` model of recipes (``model = "model_props.zoo.local_vit:build_local_vit"``):
the registry does not import it, so the cache keys of the other models do not cover it; the recipes' own keys do
(:meth:`~model_props.training.recipes.Recipe.key`).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from timm.models.vision_transformer import Attention, VisionTransformer

from .vit import build_vit

__all__ = ["LocalAttention", "neighbourhood_mask", "build_local_vit"]


def neighbourhood_mask(tokens: int, prefix: int, kernel: int, device: torch.device | None = None) -> torch.Tensor:
    """(tokens, tokens) bool mask, True where a query (row) may attend to a key (column): the ``prefix`` tokens
    attend to all; a spatial token to the spatial tokens within Chebyshev distance ``kernel // 2`` on the grid.

    >>> neighbourhood_mask(5, 1, 3).int().tolist()[0], neighbourhood_mask(10, 1, 3)[1, 1:].view(3, 3).int().tolist()
    ([1, 1, 1, 1, 1], [[1, 1, 0], [1, 1, 0], [0, 0, 0]])
    """
    side = math.isqrt(tokens - prefix)
    if side * side != tokens - prefix or kernel < 1 or kernel % 2 == 0:
        raise ValueError(
            f"local attention needs a square grid of spatial tokens and an odd kernel; got {tokens - prefix} "
            f"spatial tokens and kernel={kernel}"
        )
    rows, cols = (
        torch.div(torch.arange(side * side, device=device), side, rounding_mode="floor"),
        torch.arange(side * side, device=device) % side,
    )
    near = torch.maximum((rows[:, None] - rows[None]).abs(), (cols[:, None] - cols[None]).abs()) <= kernel // 2
    mask = torch.zeros(tokens, tokens, dtype=torch.bool, device=device)
    mask[:prefix] = True
    mask[prefix:, prefix:] = near
    return mask


class LocalAttention(Attention):
    """timm's ``Attention`` restricted by :func:`neighbourhood_mask` (same parameters, same arithmetic)."""

    def __init__(self, dim: int, num_heads: int, qkv_bias: bool, kernel: int, prefix: int):
        super().__init__(dim, num_heads=num_heads, qkv_bias=qkv_bias)
        self.kernel, self.prefix = kernel, prefix

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None, is_causal: bool = False) -> torch.Tensor:
        if attn_mask is not None or is_causal:
            raise ValueError("LocalAttention sets its own mask; it takes no attn_mask or is_causal")
        return super().forward(x, attn_mask=neighbourhood_mask(x.shape[1], self.prefix, self.kernel, x.device))


def build_local_vit(num_classes: int, kernel: int = 5, **vit_kwargs: Any) -> VisionTransformer:
    """:func:`.vit.build_vit` with every block's attention local to a ``kernel`` x ``kernel`` neighbourhood."""
    net = build_vit(num_classes, **vit_kwargs)
    for block in net.blocks:
        glob: Attention = block.attn  # type: ignore[assignment]  # timm's Block holds an Attention
        local = LocalAttention(
            glob.qkv.in_features, glob.num_heads, glob.qkv.bias is not None, kernel, net.num_prefix_tokens
        )
        local.load_state_dict(glob.state_dict())  # the global ViT's initial weights, key for key
        block.attn = local
    return net
