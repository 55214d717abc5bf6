"""Claims of Raghu et al. (NeurIPS 2021) read from cross-model CKA (catalogue number 27): which layers of two
models represent the same thing (Fig. 1-2).

Every statistic reads a :class:`~model_props.measurements.cross.PairReports`: minibatch CKA of the model under
test against the other model, against a second training seed of its own recipe (the seed control) and against
a randomly initialised copy of the other model (the null), on the same images. CKA falls with depth between any
two independently trained networks (Davari et al., ICLR 2023), so a similarity means something only against
what a second seed of the same recipe reaches: each statistic is a difference against the seed control, per
unit of the model under test, contrasted between its lower band (normalised depth <= 1/3) and its upper band
(>= 2/3) (design Sec. 7, row 27). The null's value is reported beside each (the claim's figure).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import NotApplicable
from ..measurements.cross import CrossReport, PairReports
from .base import Claim, Part, needs_traits
from .raghu2021 import PAPER

LOWER, UPPER = 1 / 3, 2 / 3  # depth bands over the model's units (design Sec. 7)
RESNET_DEPTH = 0.6  # claim 27: ViT's lower band resembles ResNet units shallower than this on average


def _bands(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = depth <= LOWER, depth >= UPPER
    if not lower.any() or not upper.any():
        raise NotApplicable("the model has no unit in its lower (depth <= 1/3) or upper (depth >= 2/3) band")
    return lower, upper


def best_match(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Per unit of A, its highest CKA over the units of B (Raghu et al.'s best-matching layer)."""
    return report.cka.compute(idx).max(dim=1).values.numpy()


def weighted_depth(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Per unit of A, the mean normalised depth of B's units weighted by CKA (negative estimates count 0)."""
    weights = report.cka.compute(idx).numpy().clip(min=0.0)
    return (weights @ report.depth_b) / np.maximum(weights.sum(axis=1), 1e-12)


Similarity = Callable[[CrossReport, np.ndarray], np.ndarray]


def lower_minus_upper(similarity: Similarity) -> Callable[[PairReports, np.ndarray], float]:
    """Per unit u of the model under test, s(u) = similarity(against) - similarity(control); the mean of s over
    the lower band minus its mean over the upper band."""

    def stat(reports: PairReports, idx: np.ndarray) -> float:
        lower, upper = _bands(reports.against.depth_a)
        s = similarity(reports.against, idx) - similarity(reports.control, idx)
        return float(s[lower].mean() - s[upper].mean())

    return stat


def lower_band_depth() -> Callable[[PairReports, np.ndarray], float]:
    """The CKA-weighted normalised depth of the other model's units, averaged over the lower band, minus
    :data:`RESNET_DEPTH`."""

    def stat(reports: PairReports, idx: np.ndarray) -> float:
        lower, _ = _bands(reports.against.depth_a)
        return float(weighted_depth(reports.against, idx)[lower].mean() - RESNET_DEPTH)

    return stat


_SINGLE_STAGE_MSA = needs_traits(any_of=("global_msa",), none_of=("multi_stage",))

VIT_LOWER_LIKE_RESNET_MID = Claim(
    id="raghu2021.vit-lower-like-resnet-mid",
    number=27,
    paper=PAPER,
    section="Sec. 3, Fig. 1-2: representation structure of ViTs and CNNs",
    statement="The lower layers of ViT represent what the lower-to-middle layers of ResNet do, while ViT's upper "
    "layers learn representations no ResNet layer has.",
    units="every spatial unit of the model and of ResNet, minibatch CKA (unbiased HSIC) on the same 1,024 test "
    "images; per model unit, its best-matching ResNet unit against its best match in a second seed of its own "
    "recipe; lower band depth <= 1/3, upper band >= 2/3; a randomly initialised ResNet (zero_init_last=False) "
    "reported beside it",
    evidence="Raghu et al. Fig. 2 (ViT-L/16 and ResNet-50/152 on ImageNet/JFT): ViT's lower half is most similar "
    "to ResNet's lower-to-middle stages; ViT's upper layers are dissimilar to every ResNet layer",
    measurement="cross",
    parts=(
        Part(
            name="upper-unmatched",
            statistic_name="best-match CKA to ResNet minus to a second seed, lower-band mean - upper-band mean",
            statistic=lower_minus_upper(best_match),
            direction="greater",
            sampling="batches",
            report="cross",
            partner="resnet",
        ),
        Part(
            name="lower-like-resnet-mid",
            statistic_name="CKA-weighted depth of ResNet units for the lower band - 0.6",
            statistic=lower_band_depth(),
            direction="less",
            sampling="batches",
            report="cross",
            partner="resnet",
        ),
    ),
    applies=_SINGLE_STAGE_MSA,
)

CLAIMS = (VIT_LOWER_LIKE_RESNET_MID,)
