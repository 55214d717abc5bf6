"""Claims of Raghu et al., "Do Vision Transformers See Like Convolutional Neural Networks?" (NeurIPS
2021), catalogue numbers 17 and 18."""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicable
from ..measurements.units import UnitReport
from .base import Claim, Paper, Part, needs_cls, needs_traits

PAPER = Paper(
    key="raghu2021",
    title="Do Vision Transformers See Like Convolutional Neural Networks?",
    authors="Maithra Raghu, Thomas Unterthiner, Simon Kornblith, Chiyuan Zhang, Alexey Dosovitskiy",
    venue="NeurIPS 2021",
    arxiv="2108.08810",
)


def _residual(report: UnitReport) -> np.ndarray:
    return ~np.isnan(report.skip_ratio).all(axis=0)


def _mean_skip_ratio(report: UnitReport, idx: np.ndarray) -> np.ndarray:
    """Mean over residual units and images of ||x|| / ||f(x)|| (spatial tokens): the images' own means over the
    residual units, averaged over the resampled images."""
    if not _residual(report).any():
        raise NotApplicable("the model has no residual unit with a measured skip and branch")
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


def _attention_halves(report: UnitReport) -> tuple[list[str], list[str]]:
    depth = {u.name: u.depth for u in report.units}
    names = list(report.attention)
    lower, upper = [n for n in names if depth[n] < 0.5], [n for n in names if depth[n] >= 0.5]
    if not lower or not upper:
        raise NotApplicable("the model has no global attention weights in its lower or upper half")
    return lower, upper


def _distance_growth(report: UnitReport, idx: np.ndarray) -> np.ndarray:
    """Mean attention distance (over heads, queries, images) of upper-half MSAs minus lower-half MSAs."""
    lower, upper = _attention_halves(report)

    def mean(ns):
        return np.mean([report.attention[n].mean(axis=1)[idx].mean(axis=-1) for n in ns], axis=0)

    return mean(upper) - mean(lower)


def _head_spread_drop(report: UnitReport, idx: np.ndarray) -> np.ndarray:
    """Spread of heads (std over heads of the image-mean distance) in the lower half minus the upper half."""
    lower, upper = _attention_halves(report)

    def spread(ns):
        return np.mean([report.attention[n][idx].mean(axis=-2).std(axis=-1) for n in ns], axis=0)

    return spread(lower) - spread(upper)


_has_global_attention = needs_traits(any_of=("global_msa",))


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
    applies=_has_global_attention,
)

ATTENTION_DISTANCE_GROWS = Claim(
    id="raghu2021.attention-distance-grows",
    number=18,
    paper=PAPER,
    section="Sec. 4, Fig. 3 and Fig. 4: local and global information in ViT's attention",
    statement="Lower ViT layers mix heads that attend locally and globally; higher layers attend globally, so "
    "the mean attention distance grows with depth. With too little training data the lower layers "
    "do not learn local heads (Raghu et al., Fig. 4).",
    units="global MSA units; lower half = normalised depth < 0.5; distance in input pixels between patch "
    "centres, CLS excluded and rows renormalised",
    evidence="Raghu et al. Fig. 3-4 (ViTs on JFT-300M; trained on ImageNet alone, lower layers learn fewer local heads): attention distance grows with depth and lower layers mix local and global heads",
    measurement="attention",
    parts=(
        Part(
            name="distance-grows",
            statistic_name="mean attention distance (px) of upper-half MSAs - lower-half MSAs",
            statistic=_distance_growth,
            direction="greater",
        ),
        Part(
            name="lower-heads-mixed",
            statistic_name="std over heads of mean attention distance (px), lower half - upper half",
            statistic=_head_spread_drop,
            direction="greater",
        ),
    ),
    applies=_has_global_attention,
)

CLAIMS = (SKIP_DOMINATES, ATTENTION_DISTANCE_GROWS)
