"""Claims of Raghu et al. (NeurIPS 2021) read from cross-model CKA (catalogue numbers 25-27): which layers of two
models represent the same thing (Fig. 1-2), and where a ViT trained with global average pooling, or on less
data, departs from the ViT trained with a CLS token on all of it.

Every statistic reads a :class:`~model_props.measurements.cross.PairReports`: minibatch CKA of the model under
test against the other model, against a second training seed of its own recipe (the seed control) and against
a randomly initialised copy of the other model (the null), on the same images. CKA falls with depth between any
two independently trained networks (Davari et al., ICLR 2023), so a similarity means something only against
what a second seed of the same recipe reaches: each statistic is a difference against the seed control, per
unit of the model under test, contrasted between its lower band (normalised depth <= 1/3) and its upper band
(>= 2/3) (docs/design.md#decision-rules, rows 25-27). The null's value is reported beside each (the claim's figure).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import NotApplicable
from ..measurements.cross import CrossReport, PairReports
from .base import Claim, Part, needs_cls, needs_traits
from .raghu2021 import PAPER

LOWER, UPPER = 1 / 3, 2 / 3  # depth bands over the model's units (docs/design.md#decision-rules)
RESNET_DEPTH = 0.6  # claim 27: ViT's lower band resembles ResNet units shallower than this on average


def _bands(depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = depth <= LOWER, depth >= UPPER
    if not lower.any() or not upper.any():
        raise NotApplicable("the model has no unit in its lower (depth <= 1/3) or upper (depth >= 2/3) band")
    return lower, upper


# Each similarity gives, per resample (a row of the index matrix of batches), one value per unit of A: (rows, Ua).
def best_match(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Per unit of A, its highest CKA over the units of B (Raghu et al.'s best-matching layer)."""
    return report.cka.compute(idx).amax(dim=-1).numpy()


def matched_depth(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Per unit of A, its CKA with the unit of B nearest in normalised depth (the first of two as near): the
    diagonal when A and B have the same units."""
    nearest = np.abs(report.depth_a[:, None] - report.depth_b[None, :]).argmin(axis=1)
    return report.cka.compute(idx).numpy()[..., np.arange(len(nearest)), nearest]


def weighted_depth(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Per unit of A, the mean normalised depth of B's units weighted by CKA (negative estimates count 0)."""
    weights = report.cka.compute(idx).numpy().clip(min=0.0)
    return (weights @ report.depth_b) / np.maximum(weights.sum(axis=-1), 1e-12)


Similarity = Callable[[CrossReport, np.ndarray], np.ndarray]


def lower_minus_upper(similarity: Similarity) -> Callable[[PairReports, np.ndarray], np.ndarray]:
    """Per unit u of the model under test, s(u) = similarity(against) - similarity(control); the mean of s over
    the lower band minus its mean over the upper band."""

    def stat(reports: PairReports, idx: np.ndarray) -> np.ndarray:
        lower, upper = _bands(reports.against.depth_a)
        s = similarity(reports.against, idx) - similarity(reports.control, idx)
        return s[..., lower].mean(axis=-1) - s[..., upper].mean(axis=-1)

    return stat


def lower_band_depth() -> Callable[[PairReports, np.ndarray], np.ndarray]:
    """The CKA-weighted normalised depth of the other model's units, averaged over the lower band, minus
    :data:`RESNET_DEPTH`."""

    def stat(reports: PairReports, idx: np.ndarray) -> np.ndarray:
        lower, _ = _bands(reports.against.depth_a)
        return weighted_depth(reports.against, idx)[..., lower].mean(axis=-1) - RESNET_DEPTH

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

CLS_VS_GAP_LATE_LAYERS = Claim(
    id="raghu2021.cls-vs-gap-late-layers",
    number=25,
    paper=PAPER,
    section="Sec. 6: spatial information and localization (CLS token against global average pooling)",
    statement="ViTs trained with a CLS token and with global average pooling learn similar representations in "
    "their lower and middle layers and differ in their last layers.",
    units="every spatial unit of the CLS ViT and of the ViT with a GAP head (vit_gap), both at their final "
    "checkpoint, minibatch CKA (unbiased HSIC) on the same 1,024 test images; per CLS ViT unit, its CKA with "
    "the GAP ViT's unit at the same normalised depth against the same with a second seed of its own recipe; "
    "lower band depth <= 1/3, upper band >= 2/3; an untrained GAP ViT reported beside it",
    evidence="Raghu et al. Sec. 6 (ViT-B/32, JFT-300M and ImageNet): CKA between CLS- and GAP-trained ViTs is "
    "high in the lower and middle layers and falls in the last layers, where the GAP model's tokens hold "
    "global information",
    measurement="cross",
    parts=(
        Part(
            name="late-layers-differ",
            statistic_name="matched-depth CKA to the GAP ViT minus to a second seed, lower-band mean - upper-band mean",
            statistic=lower_minus_upper(matched_depth),
            direction="greater",
            sampling="batches",
            report="cross",
            partner="vit_gap",
        ),
    ),
    applies=needs_cls,
    models=("vit",),
)

DATA_SCALE_HIGHER_LAYERS = Claim(
    id="raghu2021.data-scale-higher-layers",
    number=26,
    paper=PAPER,
    section="Sec. 7: effects of scale on transfer learning (CKA to the model trained on all the data)",
    statement="With less training data, a ViT's higher layers learn weaker representations (less similar to the "
    "same ViT trained on all the data), while its lower layers are barely affected.",
    units="every spatial unit of the ViT and of the same recipe on a quarter of the training images "
    "(vit_quarter), both at their final checkpoint, minibatch CKA (unbiased HSIC) on the same 1,024 test images; "
    "per ViT unit, its CKA with the quarter-data ViT's unit at the same normalised depth against the same with a "
    "second full-data seed; lower band depth <= 1/3, upper band >= 2/3; an untrained quarter-data ViT reported "
    "beside it",
    evidence="Raghu et al. Sec. 7 (ViTs trained on subsets of JFT-300M against the full-data model): CKA to the "
    "model trained on all the data stays high in the lower layers and falls in the higher layers as the data "
    "shrinks",
    measurement="cross",
    parts=(
        Part(
            name="higher-layers-weaker",
            statistic_name="matched-depth CKA to the quarter-data ViT minus to a second seed, lower-band mean - "
            "upper-band mean",
            statistic=lower_minus_upper(matched_depth),
            direction="greater",
            sampling="batches",
            report="cross",
            partner="vit_quarter",
        ),
    ),
    applies=needs_cls,
    models=("vit",),
)

CLAIMS = (CLS_VS_GAP_LATE_LAYERS, DATA_SCALE_HIGHER_LAYERS, VIT_LOWER_LIKE_RESNET_MID)
