"""The anatomy rule on architectures it was not written for: a sample of timm families, each checked against
hand-labelled attention counts (read in timm's source) and against the oracles of ``model_props.anatomy.coverage``."""

from __future__ import annotations

import warnings

import pytest

from model_props.anatomy.coverage import check_anatomy
from model_props.zoo import build_model

# model -> (msa units, kinds that must be present), counted by hand from timm's model definitions at 32 px
HAND_LABELLED = {
    "vit_tiny_patch16_224": (12, {"mlp"}),  # 12 blocks of attention + MLP
    "swin_tiny_patch4_window7_224": (12, {"mlp", "subsample"}),  # depths 2, 2, 6, 2
    "mobilevit_xxs": (9, {"conv", "mlp"}),  # transformers of 2, 4, 3 blocks inside MobileViT blocks
    "levit_128s": (11, {"mlp"}),  # 2 + 3 + 4 attention blocks, 2 attention downsamplings
    "edgenext_xx_small": (3, {"conv", "mlp"}),  # one split-transpose (XCA) block in stages 2-4
    "efficientformerv2_s0": (5, {"conv"}),  # attention in the last 2 + 2 blocks and 1 downsampling
    "convit_tiny": (12, {"mlp"}),  # 10 gated positional (GPSA) + 2 plain attention blocks
    "caformer_s18": (12, {"conv", "mlp"}),  # conv token mixers in stages 1-2, attention in 3-4 (9 + 3)
    "convnext_atto": (0, {"conv", "subsample"}),  # depthwise 7x7 conv blocks
    "regnetx_002": (0, {"conv"}),  # post-activated bottlenecks with projections
    "resnet10t": (0, {"conv"}),  # one basic block per stage, avg-pool projections
    "vgg11": (0, {"conv"}),  # no residuals: its stages (feature_info)
}


@pytest.mark.parametrize("name", sorted(HAND_LABELLED))
def test_anatomy_matches_hand_labels_and_oracles(name):
    msa, kinds = HAND_LABELLED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(f"timm:{name}", num_classes=10, img_size=32)
    check = check_anatomy(model)
    assert check.mapped, check.reason
    assert check.counts.get("msa", 0) == msa, check.counts
    assert kinds <= set(check.counts), check.counts
    assert check.checks == {"attention": True, "residual_sums": True, "stages": True, "depth": True}, check.checks
