"""Claim of Naseer et al., "Intriguing Properties of Vision Transformers" (NeurIPS 2021), which a later paper
set beside Park & Kim's and Raghu et al.'s findings: ViTs are far more robust than CNNs to random occlusion."""

from __future__ import annotations

import numpy as np

from ..measurements.occlusion import OcclusionReport
from .base import Claim, Paper, Part, needs_kinds

PAPER = Paper(
    key="naseer2021",
    title="Intriguing Properties of Vision Transformers",
    authors="Muzammal Naseer, Kanchana Ranasinghe, Salman Khan, Munawar Hayat, Fahad Shahbaz Khan, Ming-Hsuan Yang",
    venue="NeurIPS 2021",
    arxiv="2105.10497",
)


def _relative_drop(report: OcclusionReport, idx: np.ndarray) -> np.ndarray:
    """(clean accuracy - occluded accuracy) / (clean accuracy - chance) on the resampled images."""
    return report.relative_drop(idx)


OCCLUSION_ROBUST = Claim(
    id="naseer2021.occlusion-robust",
    number=30,
    paper=PAPER,
    section="Sec. 3.1, Fig. 3-4: robustness to occlusion (random PatchDrop)",
    statement="Vision transformers lose far less accuracy than CNNs when random patches of the image are occluded.",
    units="the model's predictions with a seeded half of the 8x8-pixel cells of a grid at an odd pixel offset "
    "set to the images' mean colour (the same masks for both models, paired); relative drop = (clean - occluded) "
    "/ (clean - chance)",
    evidence="Naseer et al. Sec. 3.1 and Fig. 3-4 (DeiT and T2T against ResNet50 and other CNNs, ImageNet val, "
    "random PatchDrop of 16x16 patches): ViTs keep up to 60 % top-1 accuracy with 80 % of the image occluded, "
    "where the CNNs collapse",
    measurement="occlusion",
    parts=(
        Part(
            name="relative-drop-vs-resnet",
            statistic_name="relative accuracy drop under occlusion, (clean - occluded) / (clean - chance)",
            statistic=_relative_drop,
            direction="less",
            versus="resnet",
            report="occlusion",
            undefined="the model is at or below chance on the clean images of this sample",
        ),
    ),
    applies=needs_kinds("msa"),
)

CLAIMS = (OCCLUSION_ROBUST,)
