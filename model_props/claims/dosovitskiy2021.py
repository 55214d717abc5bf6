"""Claim of Dosovitskiy et al., "An Image is Worth 16x16 Words" (ICLR 2021), catalogue number 28: learned 1-D
position embeddings recover the 2-D grid."""

from __future__ import annotations

import numpy as np

from ..measurements.position import PositionReport
from .base import Claim, Paper, Part, needs_traits

PAPER = Paper(
    key="dosovitskiy2021",
    title="An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale",
    authors="Alexey Dosovitskiy, Lucas Beyer, Alexander Kolesnikov, Dirk Weissenborn, Xiaohua Zhai, "
    "Thomas Unterthiner, Mostafa Dehghani, Matthias Minderer, Georg Heigold, Sylvain Gelly, Jakob Uszkoreit, "
    "Neil Houlsby",
    venue="ICLR 2021",
    arxiv="2010.11929",
)


def _near_minus_far(report: PositionReport, idx: np.ndarray) -> np.ndarray:
    """Mean over query positions of (mean cosine at Chebyshev distance 1 - mean cosine at distance >= far)."""
    return report.contrast[idx].mean(axis=-1)


POSITION_EMBEDDING_2D = Claim(
    id="dosovitskiy2021.position-embedding-2d",
    number=28,
    paper=PAPER,
    section="Sec. 4.5, Fig. 7 (centre): similarity of position embeddings",
    statement="Learned 1-D position embeddings recover the 2-D grid of patches: the embeddings of nearby "
    "patches are the most similar, and similarity falls with distance (also along rows and columns).",
    units="the learned position embedding of the spatial tokens (CLS row left out), on the patch grid; "
    "Chebyshev distance; far = max(2, grid side / 2); a randomly initialised embedding's value shown beside it",
    evidence="Dosovitskiy et al. Fig. 7 centre (ViT-L/32 on JFT-300M): each position embedding is most similar "
    "to those of its own row and column and of its neighbours",
    measurement="position",
    parts=(
        Part(
            name="near-minus-far",
            statistic_name="mean over query positions of mean cosine at distance 1 - at distance >= far",
            statistic=_near_minus_far,
            direction="greater",
            sampling="positions",
            report="position",
        ),
    ),
    applies=needs_traits(any_of=("global_msa",)),
)

CLAIMS = (POSITION_EMBEDDING_2D,)
