"""Claim of Raghu et al. (NeurIPS 2021) read from location probes (catalogue number 24): a ViT trained with a CLS
token keeps each token's spatial location up to its last block; trained with global average pooling it does not.

The statistic reads a :class:`~model_props.measurements.probe.ProbeReport`: per scored test image, the fraction of
the last block's spatial tokens whose grid position a linear probe (fitted on the other half of the images)
reads right (docs/design.md#decision-rules, row 24). The CLS and the GAP ViT are scored on the same images, so the comparison is
paired by image at checkpoint scope; at architecture scope their independent seeds give Welch's interval.
"""

from __future__ import annotations

import numpy as np

from ..measurements.probe import ProbeReport
from .base import Claim, Part, needs_cls
from .raghu2021 import PAPER


def last_block_accuracy(report: ProbeReport, idx: np.ndarray) -> np.ndarray:
    """Mean location-probe accuracy of the last spatial unit's tokens over the scored images ``idx``."""
    return report.accuracy[-1][idx].mean(axis=-1)


CLS_PRESERVES_LOCATION = Claim(
    id="raghu2021.cls-preserves-location",
    number=24,
    paper=PAPER,
    section="Sec. 6: spatial information and localization (CLS token against global average pooling)",
    statement="With a CLS token, ViT's tokens keep their spatial location up to the last block (a linear probe "
    "reads each token's grid position); trained with global average pooling instead, they lose it.",
    units="the spatial tokens of the last block (the residual stream after it); a ridge location probe per "
    "token, fitted on half of 1,024 seeded test images and scored on the other half; the CLS ViT against the "
    "ViT with a GAP head (vit_gap), both at their final checkpoint",
    evidence="Raghu et al. Sec. 6 (ViT-B/32 on JFT-300M, ImageNet): the higher-layer tokens of a CLS-trained ViT "
    "stay localised, while a GAP-trained ViT's higher-layer tokens carry global information and lose their "
    "location",
    measurement="probe",
    parts=(
        Part(
            name="cls-over-gap",
            statistic_name="location-probe accuracy of the last block's spatial tokens",
            statistic=last_block_accuracy,
            direction="greater",
            sampling="images",
            report="probe",
            subject="vit",
            versus="vit_gap",
        ),
    ),
    applies=needs_cls,
    models=("vit",),
)

CLAIMS = (CLS_PRESERVES_LOCATION,)
