"""``nn.MultiheadAttention`` self-attention (torchvision's ViT) recomputed in explicit operations, so that the
anatomy reads it as attention: the fused call is one opaque operation to a tracer."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ModelBuildError

__all__ = ["ExplicitSelfAttention", "explicit_attention"]


class ExplicitSelfAttention(nn.Module):
    """``nn.MultiheadAttention`` self-attention (torchvision's ViT) with its own parameters, computed as
    softmax(Q K^T / sqrt(d)) V in explicit operations, timm-style (``attn_drop`` on the weights), so that the
    anatomy reads it as attention and captures its weights; the fused call is one opaque operation to a tracer.

    The parameters are the module's own (``in_proj_weight``, ``in_proj_bias``, ``out_proj``): the state dict is
    unchanged, and the outputs equal the module's to float tolerance (a test checks).
    """

    def __init__(self, mha: nn.MultiheadAttention):
        super().__init__()
        self.num_heads, self.head_dim, self.batch_first = mha.num_heads, mha.head_dim, mha.batch_first
        self.in_proj_weight, self.in_proj_bias, self.out_proj = mha.in_proj_weight, mha.in_proj_bias, mha.out_proj
        self.attn_drop = nn.Dropout(mha.dropout)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        attn_mask: torch.Tensor | None = None,
        **_: Any,
    ):
        if not (query is key is value) or key_padding_mask is not None or attn_mask is not None:
            raise ValueError("ExplicitSelfAttention computes unmasked self-attention only (query is key is value)")
        x = query if self.batch_first else query.transpose(0, 1)
        b, n, c = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias).reshape(b, n, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = self.attn_drop((q * self.head_dim**-0.5 @ k.transpose(-2, -1)).softmax(dim=-1))
        out = self.out_proj((attn @ v).transpose(1, 2).reshape(b, n, c))
        return (out if self.batch_first else out.transpose(0, 1)), None


def explicit_attention(net: nn.Module) -> nn.Module:
    """Replace every self-attention ``nn.MultiheadAttention`` of ``net`` by :class:`ExplicitSelfAttention` (in
    place); a cross-attention one, or one with separate q/k/v weights, is refused in one line."""
    for name, module in list(net.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.MultiheadAttention):
                if child.in_proj_weight is None or child.bias_k is not None:
                    raise ModelBuildError(
                        f"{name + '.' if name else ''}{child_name} is an nn.MultiheadAttention with separate q/k/v "
                        "weights or extra key biases, which the anatomy cannot read"
                    )
                setattr(module, child_name, ExplicitSelfAttention(child))
    return net
