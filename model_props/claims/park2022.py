"""Claims of Park & Kim, "How Do Vision Transformers Work?" (ICLR 2022), catalogue numbers 8, 9, 10, 12."""

from __future__ import annotations

import numpy as np

from ..errors import NotApplicable
from ..measurements.units import UnitReport
from .base import Claim, Paper, Part, needs_kinds, needs_traits
from .unit_statistics import mean_effect, unchanged

PAPER = Paper(
    key="park2022",
    title="How Do Vision Transformers Work?",
    authors="Namuk Park, Songkuk Kim",
    venue="ICLR 2022",
    arxiv="2202.06709",
)


def _block_gap(report: UnitReport, batches: np.ndarray) -> np.ndarray:
    """Mean CKA of unit pairs within a stage (off-diagonal) minus mean CKA of pairs across stages."""
    cka = report.cka.compute(batches).numpy()
    stage = np.array([u.stage for u in report.units])
    same = stage[:, None] == stage[None, :]
    off_diag = ~np.eye(len(stage), dtype=bool)
    return cka[:, same & off_diag].mean(axis=-1) - cka[:, ~same].mean(axis=-1)


def _lower_upper_cka(report: UnitReport, batches: np.ndarray) -> np.ndarray:
    """Mean CKA between units in the lowest third of depth and units in the highest third."""
    depth = np.array([u.depth for u in report.units])
    if not ((depth <= 1 / 3).any() and (depth >= 2 / 3).any()):
        raise NotApplicable("the model has no units in its lowest or highest third of depth")
    cka = report.cka.compute(batches).numpy()
    return cka[:, depth <= 1 / 3][:, :, depth >= 2 / 3].mean(axis=(-2, -1))


_LATER_MSA = Part(
    name="msa-later-half",
    statistic_name="mean ΔlogA(hf) change over MSA units with depth >= 0.5",
    statistic=mean_effect("high_freq", lambda u: u.kind == "msa" and u.depth >= 0.5, "MSA units in its later half"),
    direction="less",
    applies=lambda a: (
        None
        if any(u.kind == "msa" and u.depth >= 0.5 for u in a.units)
        else f"{a.family} has no MSA units in its later half"
    ),
    degenerate=unchanged("MSA units in its later half"),
)

MSA_LOWPASS = Claim(
    id="park2022.msa-lowpass",
    number=8,
    paper=PAPER,
    section="Sec. 3.1, Fig. 2a and Fig. 8: MSAs are low-pass filters",
    statement="MSAs reduce high-frequency signals: in the later half of the network, MSA units lower the "
    "high-frequency Δlog-amplitude of the feature map.",
    units="MSA units with normalised depth >= 0.5; the change of ΔlogA at the highest diagonal frequency "
    "from the state before the unit to the state after it",
    evidence="Park & Kim Fig. 8 (ImageNet ViT-Ti at 224 px): every MSA lowers the high-frequency Δlog-amplitude",
    measurement="fourier",
    parts=(_LATER_MSA,),
    applies=needs_kinds("msa"),
    severity="critical",
)

CONV_MLP_HIGHPASS = Claim(
    id="park2022.conv-mlp-highpass",
    number=9,
    paper=PAPER,
    section="Sec. 3.1, Fig. 2a and Fig. 8: Convs (and MLPs) are high-pass filters",
    statement="Convs and MLPs amplify high-frequency signals: conv and MLP units raise the high-frequency "
    "Δlog-amplitude of the feature map.",
    units="conv units that do not subsample, and MLP units, at every depth (subsampling layers are the "
    "paper's exception: they cut high frequencies)",
    evidence="Park & Kim Fig. 2a and 8 (ImageNet ResNet-50 and ViT-Ti at 224 px): conv blocks and MLPs raise the high-frequency Δlog-amplitude",
    measurement="fourier",
    parts=(
        Part(
            name="conv-mlp",
            statistic_name="mean ΔlogA(hf) change over non-subsampling conv and MLP units",
            statistic=mean_effect(
                "high_freq",
                lambda u: u.kind in ("conv", "mlp") and not u.subsamples,
                "non-subsampling conv or MLP units",
            ),
            direction="greater",
            degenerate=unchanged("non-subsampling conv or MLP units"),
        ),
    ),
    applies=needs_kinds("conv", "mlp"),
    severity="critical",
)

MSA_REDUCES_VARIANCE = Claim(
    id="park2022.msa-reduces-variance",
    number=10,
    paper=PAPER,
    section="Sec. 3.2, Fig. 9: MSAs reduce feature-map variance",
    statement="In a model with MSAs, MSA units reduce the variance of feature maps and conv/MLP units increase it.",
    units="MSA units; non-subsampling conv and MLP units (a model without MSA units is not applicable)",
    evidence="Park & Kim Fig. 9 (CIFAR-100 ResNet-50 and ViT-Ti, fully trained): MSAs lower the feature-map variance, convs and MLPs raise it, and ResNet's variance peaks at the end of each stage",
    measurement="variance",
    parts=(
        Part(
            name="msa",
            statistic_name="mean feature-variance change over MSA units",
            statistic=mean_effect("variance", lambda u: u.kind == "msa", "MSA units"),
            direction="less",
            applies=needs_kinds("msa"),
            degenerate=unchanged("MSA units"),
        ),
        Part(
            name="conv-mlp",
            statistic_name="mean feature-variance change over non-subsampling conv and MLP units",
            statistic=mean_effect(
                "variance",
                lambda u: u.kind in ("conv", "mlp") and not u.subsamples,
                "non-subsampling conv or MLP units",
            ),
            direction="greater",
            applies=needs_kinds("conv", "mlp"),
            degenerate=unchanged("non-subsampling conv or MLP units"),
        ),
    ),
    applies=needs_kinds("msa"),
    defining=("msa",),
)

MULTISTAGE_BLOCK_CKA = Claim(
    id="park2022.multistage-block-cka",
    number=12,
    paper=PAPER,
    section="Sec. 4.1 and App. D.3, CKA: multi-stage models behave like a series of small models",
    statement="Multi-stage models show block structure in CKA similarity (units of a stage resemble each other "
    "more than units of other stages); ViT's representations are uniform across depth "
    "(also Raghu et al. 2021, Fig. 1).",
    units="all units except the head. Multi-stage models: unit pairs within a stage vs across stages. "
    "Single-stage ViTs: the lowest third of depth against the highest third, compared with ResNet",
    evidence="Park & Kim App. D.3 and Raghu et al. Fig. 1 (ViT and ResNet on ImageNet/JFT): multi-stage models show CKA block structure, ViT is uniform across depth",
    measurement="cka",
    parts=(
        Part(
            name="block-structure",
            statistic_name="mean within-stage CKA - mean across-stage CKA",
            statistic=_block_gap,
            direction="greater",
            applies=needs_traits(any_of=("multi_stage",)),
            sampling="batches",
        ),
        Part(
            name="uniform-vs-resnet",
            statistic_name="mean CKA between the lowest and highest thirds of depth",
            statistic=_lower_upper_cka,
            direction="greater",
            applies=needs_traits(any_of=("global_msa",), none_of=("multi_stage",)),
            versus="resnet",
            sampling="batches",
        ),
    ),
    applies=lambda a: None,
)

CLAIMS = (MSA_LOWPASS, CONV_MLP_HIGHPASS, MSA_REDUCES_VARIANCE, MULTISTAGE_BLOCK_CKA)
