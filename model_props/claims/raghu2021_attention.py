"""Claim of Raghu et al. (NeurIPS 2021, :mod:`.raghu2021`), Sec. 4, Fig. 3 and 4, catalogue number 18: ViT's
lower layers mix heads that attend locally and globally, its higher layers attend globally, and with too little
training data the lower layers learn no local heads.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicable
from ..measurements.units import UnitReport
from .base import Claim, Part
from .raghu2021 import PAPER, has_global_attention


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
    applies=has_global_attention,
)

CLAIMS = (ATTENTION_DISTANCE_GROWS,)
