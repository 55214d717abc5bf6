"""ViT at 32 px from timm (Dosovitskiy et al. 2021; Park & Kim use ViT-Ti, patch 2, at CIFAR scale)."""

from __future__ import annotations

from typing import Literal

from timm.models.vision_transformer import VisionTransformer


def build_vit(
    num_classes: int,
    img_size: int = 32,
    patch_size: int = 4,
    embed_dim: int = 96,
    depth: int = 6,
    num_heads: int = 3,
    mlp_ratio: float = 4.0,
    global_pool: Literal["", "avg", "avgmax", "max", "token", "map", "prr"] = "token",  # timm's choices
    qkv_bias: bool = True,
    drop_path_rate: float = 0.0,
) -> VisionTransformer:
    """``global_pool='token'`` reads the CLS token; ``'avg'`` drops CLS and averages tokens (GAP head)."""
    return VisionTransformer(
        img_size=img_size,
        patch_size=patch_size,
        num_classes=num_classes,
        embed_dim=embed_dim,
        depth=depth,
        num_heads=num_heads,
        mlp_ratio=mlp_ratio,
        qkv_bias=qkv_bias,
        global_pool=global_pool,
        class_token=global_pool == "token",
        drop_path_rate=drop_path_rate,
    )
