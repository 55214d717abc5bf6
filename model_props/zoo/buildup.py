"""The build-up rule's variants (Park & Kim 2022, Sec. 4.1 and Fig. 12b): where MSA blocks sit in a CNN.

Park & Kim build AlterNet by replacing conv blocks with MSA blocks from the end of a baseline CNN, stage by
stage: an MSA block at the end of a stage helps, one elsewhere does not. Two variants test it against the
references: :func:`resnet_with_msa` (the reference ResNet with its last block replaced by an MSA block, the
rule's first step) and :func:`alternet_early_msa` (the reference AlterNet with each MSA block moved to the
second position of its stage, right after the stage's opening block). The MSA block is AlterNet's
(:class:`.alternet.AttentionBlock`: pre-activation, window attention).

These are ``package.module:factory`` models of recipes: the registry does not import this module, so the cache
keys of the other models do not cover it; the recipes' own keys do
(:meth:`~model_props.training.recipes.Recipe.key`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timm.models.resnet import ResNet
from torch import nn

from .alternet import AlterNet, AttentionBlock
from .resnet import build_resnet

__all__ = ["resnet_with_msa", "alternet_early_msa"]


def resnet_with_msa(num_classes: int, head_dim: int = 16, window_size: int = 4, **resnet_kwargs: Any) -> ResNet:
    """:func:`.resnet.build_resnet` with the last block of the last stage replaced by an MSA block of the stage's
    width (``width // head_dim`` heads; at 32 px the last stage's 4x4 map is one window of 4: global attention)."""
    net = build_resnet(num_classes, **resnet_kwargs)
    last_stage: nn.Sequential = net.layer4  # type: ignore[assignment]  # timm builds stages as Sequentials
    width = int(net.num_features)  # the last stage's output width (x4 for bottlenecks)
    last_stage[-1] = AttentionBlock(width, max(1, width // head_dim), window_size)
    return net


def _early(blocks: Sequence[nn.Module]) -> list[nn.Module]:
    """The stage's opening block, then its MSA blocks, then its other conv blocks (each group in order)."""
    opening, rest = blocks[0], blocks[1:]
    return [
        opening,
        *(b for b in rest if isinstance(b, AttentionBlock)),
        *(b for b in rest if not isinstance(b, AttentionBlock)),
    ]


def alternet_early_msa(num_classes: int = 10, **alternet_kwargs: Any) -> AlterNet:
    """:class:`.alternet.AlterNet` with each stage's MSA blocks moved right after its opening block (a stage of
    two blocks is unchanged: its MSA is already second; in the CIFAR layout only the last stage moves,
    C A C A -> C A A C)."""
    net = AlterNet(num_classes, **alternet_kwargs)
    net.stages = nn.Sequential(*(nn.Sequential(*_early(list(stage.children()))) for stage in net.stages))
    return net
