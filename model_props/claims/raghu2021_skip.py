"""Claim of Raghu et al. (NeurIPS 2021, :mod:`.raghu2021`), Sec. 5, Fig. 9 and 10, catalogue number 17: the
skip connections of ViT dominate its residual units more than ResNet's do, and the CLS token's ratio, high in the
lower layers, falls below the spatial tokens' past the middle of the network.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicable
from ..measurements.units import UnitReport
from .base import Claim, Part, needs_cls
from .raghu2021 import PAPER, has_global_attention


def _residual(report: UnitReport) -> np.ndarray:
    return ~np.isnan(report.skip_ratio).all(axis=0)


def _mean_skip_ratio(report: UnitReport, idx: np.ndarray) -> np.ndarray:
    """Mean over residual units and images of ||x|| / ||f(x)|| (spatial tokens): the images' own means over the
    residual units, averaged over the resampled images."""
    if not _residual(report).any():
        raise NotApplicable(
            "the model has no residual unit with a measured skip and branch (a branch that outputs zero, e.g. with "
            "zero-initialised normalisation weights as before training, has no ratio)"
        )
    return report.skip_ratio[:, _residual(report)].mean(axis=1)[idx].mean(axis=-1)


def _cls_minus_spatial(lower: bool):
    def stat(report: UnitReport, idx: np.ndarray) -> np.ndarray:
        depth = np.array([u.depth for u in report.units])
        cols = ~np.isnan(report.skip_ratio_cls).all(axis=0) & ((depth < 0.5) if lower else (depth >= 0.5))
        if not cols.any():
            raise NotApplicable(
                f"the model has no residual unit with a CLS token in its {'lower' if lower else 'upper'} half"
            )
        per_image = (report.skip_ratio_cls[:, cols] - report.skip_ratio[:, cols]).mean(axis=1)
        return per_image[idx].mean(axis=-1)

    return stat


SKIP_DOMINATES = Claim(
    id="raghu2021.skip-dominates",
    number=17,
    paper=PAPER,
    section="Sec. 5, Fig. 9 and Fig. 10: skip connections in ViT are highly influential",
    statement="ViT's skip connections dominate its residual units: the norm ratio ||x|| / ||f(x)|| is larger "
    "than ResNet's. In lower layers only the CLS token has a high ratio; past about the middle of the "
    "network the pattern reverses (spatial tokens high, CLS low).",
    units="every residual unit (MSA and MLP; ResNet's conv blocks); the CLS token measured apart from the "
    "spatial tokens; lower half = normalised depth < 0.5",
    evidence="Raghu et al. Fig. 9-10 (ViT-B/32 and ResNet-50 on JFT-300M): ViT's skip-norm ratio exceeds ResNet's; the CLS token's ratio is high in lower layers and low past the middle",
    measurement="skip",
    parts=(
        Part(
            name="vs-resnet",
            statistic_name="mean ||x||/||f(x)|| over residual units (spatial tokens)",
            statistic=_mean_skip_ratio,
            direction="greater",
            versus="resnet",
        ),
        Part(
            name="cls-high-lower",
            statistic_name="mean (CLS ratio - spatial ratio) over residual units with depth < 0.5",
            statistic=_cls_minus_spatial(lower=True),
            direction="greater",
            applies=needs_cls,
        ),
        Part(
            name="cls-low-upper",
            statistic_name="mean (CLS ratio - spatial ratio) over residual units with depth >= 0.5",
            statistic=_cls_minus_spatial(lower=False),
            direction="less",
            applies=needs_cls,
        ),
    ),
    applies=has_global_attention,
)

CLAIMS = (SKIP_DOMINATES,)
