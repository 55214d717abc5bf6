"""Claims of Park & Kim (ICLR 2022, :mod:`.park2022`), Sec. 3.1-3.2, catalogue numbers 8, 9 and 10: MSAs
are low-pass filters and convs (and MLPs) high-pass filters (Fig. 2a and 8), and MSAs reduce the feature-map
variance (Fig. 9). Each part reads one report of the final checkpoint and bootstraps over images.
"""

from __future__ import annotations

from .base import Claim, Part, needs_kinds
from .park2022 import PAPER
from .unit_statistics import mean_effect, unchanged

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

CLAIMS = (MSA_LOWPASS, CONV_MLP_HIGHPASS, MSA_REDUCES_VARIANCE)
