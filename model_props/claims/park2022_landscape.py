"""Loss-landscape claims of Park & Kim (ICLR 2022, :mod:`.park2022`), catalogue numbers 1-6, 15 ("Blurs Behave
like Ensembles", ICML 2022), 20 (local MSA, Sec. 3.4 and Fig. 5), 21 and 22.

Every Hessian part reads the top-5 eigenvalues (by magnitude) of the training loss on training mini-batches
at the end of warm-up, as the paper does (docs/papers.md#hessian-spectra), and bootstraps over mini-batches:
NEP = fraction of negative eigenvalues, APE = mean positive eigenvalue. Fit parts (accuracy, NLL, ECE) read
the final checkpoints and bootstrap over test images. Comparisons of variants name the recipes they read
and run on the reference they vary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measurements.functional.spectrum import ape, negative_magnitude, nep
from .base import Claim, Part, needs_kinds, needs_traits
from .park2022 import PAPER, error_of, final_part, train_nll_of

NEP = "NEP (fraction of negative top Hessian eigenvalues)"
APE = "APE (mean positive top Hessian eigenvalue)"
NEG = "mean |negative top Hessian eigenvalue|"


def pooled_nep(report: Any, batches: np.ndarray) -> np.ndarray:
    """NEP of the top Hessian eigenvalues pooled over the sampled ``batches`` of a spectrum report."""
    return nep(report.pooled(batches))


def pooled_ape(report: Any, batches: np.ndarray) -> np.ndarray:
    """APE of the top Hessian eigenvalues pooled over the sampled ``batches`` of a spectrum report."""
    return ape(report.pooled(batches))


def pooled_negative_magnitude(report: Any, batches: np.ndarray) -> np.ndarray:
    """The mean |negative eigenvalue| of the top Hessian eigenvalues, pooled over the sampled ``batches`` of a
    spectrum report."""
    return negative_magnitude(report.pooled(batches))


UNDEFINED = {
    pooled_ape: "it has no positive eigenvalue among the pooled top eigenvalues",
    pooled_negative_magnitude: "it has no negative eigenvalue among the pooled top eigenvalues",
}


def spectral_part(name: str, statistic_name: str, statistic, direction, **kw) -> Part:
    """A part read from the Hessian spectrum at the warm-up checkpoint, its batches the sampling unit."""
    return Part(
        name=name,
        statistic_name=statistic_name,
        statistic=statistic,
        direction=direction,
        report="spectrum",
        checkpoint="warmup",
        sampling="batches",
        undefined=UNDEFINED.get(statistic, ""),
        **kw,
    )


def _fit(name: str, statistic_name: str, statistic, direction, **kw) -> Part:
    return Part(
        name=name,
        statistic_name=statistic_name,
        statistic=statistic,
        direction=direction,
        report="fit",
        checkpoint="final",
        sampling="images",
        **kw,
    )


SPECTRUM_UNITS = (
    "top-5 Hessian eigenvalues by magnitude of the training loss (NLL + weight decay) on augmented "
    "training mini-batches, model in eval mode, at the end of warm-up; pooled over mini-batches"
)

MSA_FLATTENS_LOSS = Claim(
    id="park2022.msa-flattens-loss",
    number=1,
    paper=PAPER,
    section="Sec. 3.3, Fig. 1c and Fig. 4: MSAs flatten the loss landscape",
    statement="MSAs flatten the loss landscape: at the end of warm-up, a model with MSAs has smaller positive "
    "Hessian eigenvalues than ResNet (APE(model) < APE(ResNet)).",
    units=f"{SPECTRUM_UNITS}; the model against ResNet",
    evidence="Park & Kim Fig. 1c and 4 (CIFAR-100 ViT-Ti vs ResNet-50 at the end of warm-up): ViT's positive "
    "eigenvalues peak around 20-80, ResNet's spread over 200-800",
    measurement="spectrum",
    parts=(spectral_part("ape-vs-resnet", APE, pooled_ape, "less", versus="resnet"),),
    applies=needs_kinds("msa"),
    severity="critical",
)

VIT_NONCONVEX = Claim(
    id="park2022.vit-nonconvex",
    number=2,
    paper=PAPER,
    section="Sec. 3.3, Fig. 4: ViT's loss is non-convex early in training",
    statement="ViT's loss landscape is non-convex and ResNet's nearly convex: at the end of warm-up, ViT has a "
    "larger fraction of negative Hessian eigenvalues than ResNet (NEP(ViT) > NEP(ResNet)).",
    units=f"{SPECTRUM_UNITS}; single-stage global-attention models against ResNet",
    evidence="Park & Kim Fig. 4 (CIFAR-100 ViT-Ti vs ResNet-50 at the end of warm-up): ViT has a clear mass of "
    "negative eigenvalues around -25 to -30, ResNet almost none",
    measurement="spectrum",
    parts=(spectral_part("nep-vs-resnet", NEP, pooled_nep, "greater", versus="resnet"),),
    applies=needs_traits(any_of=("global_msa",), none_of=("multi_stage", "conv")),
    severity="critical",
)

LESS_DATA_NONCONVEX = Claim(
    id="park2022.less-data-nonconvex",
    number=3,
    paper=PAPER,
    section="Sec. 3.3, Fig. 4: less data, more non-convexity",
    statement="Trained on a small fraction of the data (the same number of optimizer steps), ViT has more negative "
    "Hessian eigenvalues: NEP(ViT on a small subset) > NEP(ViT on all data).",
    units=f"{SPECTRUM_UNITS}; the ViT trained on 6.25 % of the training data (vit_small) against the ViT",
    evidence="Park & Kim Fig. 4 (CIFAR-100 ViT-Ti on 6 % of the data vs all of it, end of warm-up): the small-data "
    "ViT has a larger negative mass",
    measurement="spectrum",
    parts=(spectral_part("nep-small-data", NEP, pooled_nep, "greater", subject="vit_small", versus="vit"),),
    applies=needs_kinds("msa"),
    models=("vit",),
)

GAP_CONVEXIFIES = Claim(
    id="park2022.gap-convexifies",
    number=4,
    paper=PAPER,
    section="Sec. 3.3 and App. C: a GAP head suppresses negative eigenvalues",
    statement="Replacing the CLS token by global average pooling suppresses negative Hessian eigenvalues: "
    "NEP(ViT-GAP) < NEP(ViT-CLS).",
    units=f"{SPECTRUM_UNITS}; the ViT with a GAP head (vit_gap) against the CLS ViT",
    evidence="Park & Kim Sec. 3.3 / App. C (CIFAR-100 ViT-Ti, end of warm-up): GAP classifiers have fewer "
    "negative eigenvalues than CLS classifiers",
    measurement="spectrum",
    parts=(spectral_part("nep-gap", NEP, pooled_nep, "less", subject="vit_gap", versus="vit"),),
    applies=needs_kinds("msa"),
    models=("vit",),
)

MULTISTAGE_LOCAL_FLATTEN = Claim(
    id="park2022.multistage-local-flatten",
    number=5,
    paper=PAPER,
    section="Sec. 3.3, Fig. 4 and App. C: multi-stage and local MSAs suppress negative eigenvalues",
    statement="Multi-stage architectures (PiT) suppress negative Hessian eigenvalues compared with ViT, and local "
    "MSAs (Swin) shrink their magnitude.",
    units=f"{SPECTRUM_UNITS}; multi-stage global-attention models and local-attention models against the ViT",
    evidence="Park & Kim Fig. 4 and App. C (CIFAR-100 PiT-Ti and Swin-Ti vs ViT-Ti, end of warm-up): PiT has fewer "
    "negative eigenvalues than ViT, Swin's negative eigenvalues are smaller in magnitude",
    measurement="spectrum",
    parts=(
        spectral_part(
            "nep-multistage",
            NEP,
            pooled_nep,
            "less",
            versus="vit",
            applies=needs_traits(any_of=("multi_stage",), none_of=("local_msa", "conv")),
        ),
        spectral_part(
            "negative-magnitude-local",
            NEG,
            pooled_negative_magnitude,
            "less",
            versus="vit",
            applies=needs_traits(any_of=("local_msa",)),
        ),
    ),
    applies=needs_kinds("msa"),
)

HEADS_CONVEXIFY = Claim(
    id="park2022.heads-convexify",
    number=6,
    paper=PAPER,
    section="Sec. 3.3 and App. C: more heads convexify and flatten the loss",
    statement="More attention heads (the same width) give fewer negative and smaller positive Hessian "
    "eigenvalues: NEP and APE of ViT with 3 heads are below those of ViT with 1 head.",
    units=f"{SPECTRUM_UNITS}; the 3-head ViT against the 1-head ViT of the same width (vit_1head)",
    evidence="Park & Kim App. C (CIFAR-100 ViTs with 1 to 12 heads, end of warm-up): more heads reduce the "
    "negative and the positive eigenvalues",
    measurement="spectrum",
    parts=(
        spectral_part("nep-heads", NEP, pooled_nep, "less", subject="vit", versus="vit_1head"),
        spectral_part("ape-heads", APE, pooled_ape, "less", subject="vit", versus="vit_1head"),
    ),
    applies=needs_kinds("msa"),
    models=("vit",),
)

SMOOTHING_HELPS = Claim(
    id="park2022.smoothing-helps",
    number=15,
    paper=PAPER,
    section="Blurs Behave like Ensembles (Park & Kim, ICML 2022), Fig. 2 and 4: spatial smoothing",
    statement="Spatial smoothing (a blur before every subsampling) improves accuracy, NLL and calibration and "
    "flattens the loss: ResNet with smoothing beats ResNet on accuracy, NLL and ECE, and has a lower APE.",
    units="test accuracy, NLL and ECE (10 bins) of the final checkpoints on test images; APE of the warm-up "
    "checkpoints; ResNet with spatial smoothing (resnet_smooth) against ResNet",
    evidence="Park & Kim, Blurs Behave like Ensembles, poster Fig. 2 and 4 (CIFAR-100 ResNet-18): smoothing raises "
    "accuracy (77.9 -> 79.0 %), lowers NLL (0.886 -> 0.863) and ECE (5.1 -> 4.4 %) and shrinks the Hessian "
    "eigenvalues",
    measurement="fit",
    parts=(
        _fit(
            "accuracy", "test accuracy", lambda r, i: r.accuracy(i), "greater", subject="resnet_smooth", versus="resnet"
        ),
        _fit("nll", "test NLL", lambda r, i: r.nll(i), "less", subject="resnet_smooth", versus="resnet"),
        _fit("ece", "test ECE", lambda r, i: r.ece(i), "less", subject="resnet_smooth", versus="resnet"),
        spectral_part("ape", APE, pooled_ape, "less", subject="resnet_smooth", versus="resnet"),
    ),
    applies=lambda a: None,
    models=("resnet",),
)

PATCH_SIZE_TRADEOFF = Claim(
    id="park2022.patch-size-tradeoff",
    number=21,
    paper=PAPER,
    section="App. C: patch size trades Hessian magnitude against negative eigenvalues",
    statement="Smaller patches shrink the Hessian eigenvalues but bring negative ones; larger patches suppress "
    "negative eigenvalues but sharpen the loss: with patch 4 against patch 8, APE is lower and NEP higher.",
    units=f"{SPECTRUM_UNITS}; the base ViT (patch 4) against the patch-8 ViT (vit_p8)",
    evidence="Park & Kim App. C (CIFAR-100 ViTs with patch sizes 1 to 8, end of warm-up): small patches give small "
    "eigenvalue magnitudes with negatives, large patches suppress negatives but sharpen the loss",
    measurement="spectrum",
    parts=(
        spectral_part("ape-patch", APE, pooled_ape, "less", subject="vit", versus="vit_p8"),
        spectral_part("nep-patch", NEP, pooled_nep, "greater", subject="vit", versus="vit_p8"),
    ),
    applies=needs_kinds("msa"),
    models=("vit",),
)

AUGMENTATION_HESSIAN_CALIBRATION = Claim(
    id="park2022.augmentation-hessian-calibration",
    number=22,
    paper=PAPER,
    section="Sec. 3.3 and App. C: data augmentation flattens the loss and can harm calibration",
    statement="Data augmentation reduces the Hessian eigenvalue magnitudes, adding negative ones, and can harm "
    "calibration: with augmentation, APE is lower, NEP higher and ECE higher than without.",
    units=f"{SPECTRUM_UNITS}; ECE (10 bins) of the final checkpoints on test images; the ViT (crop and flip) "
    "against the ViT trained without augmentation (vit_noaug)",
    evidence="Park & Kim App. C (CIFAR-100 ViT-Ti with and without augmentation): augmentation reduces the "
    "eigenvalue magnitudes, adds negative eigenvalues and can make the model underconfident",
    measurement="spectrum",
    parts=(
        spectral_part("ape-augmentation", APE, pooled_ape, "less", subject="vit", versus="vit_noaug"),
        spectral_part("nep-augmentation", NEP, pooled_nep, "greater", subject="vit", versus="vit_noaug"),
        _fit("ece-augmentation", "test ECE", lambda r, i: r.ece(i), "greater", subject="vit", versus="vit_noaug"),
    ),
    applies=needs_kinds("msa"),
    models=("vit",),
)

DATA_SPECIFICITY_LOCAL_MSA = Claim(
    id="park2022.data-specificity-local-msa",
    number=20,
    paper=PAPER,
    section="Sec. 3.4, Fig. 5: data specificity, not long-range dependency: local MSA beats global MSA",
    statement="A ViT whose attention is local to a 5x5 neighbourhood of the token grid has a lower test error and "
    "a lower training NLL than the global ViT, and at the end of warm-up fewer negative Hessian eigenvalues than "
    "both the global ViT and the 3x3 local ViT.",
    units="test error on test images and NLL on a fixed subset of the model's own training images, final "
    f"checkpoints; NEP from {SPECTRUM_UNITS}; the 5x5 local ViT (vit_local5) against the ViT and the 3x3 local "
    "ViT (vit_local3), same parameters and recipe",
    evidence="Park & Kim Fig. 5 (CIFAR-100 ViT-Ti with 3x3, 5x5 and global 8x8 attention): error 27.9 %, 28.05 % and "
    "28.9 %, training NLL 2.45, 2.41 and 2.47; the 5x5 kernel has the smallest negative eigenvalue mass",
    measurement="spectrum",
    parts=(
        final_part("error-local5", "test error", error_of, "less", "fit", subject="vit_local5", versus="vit"),
        final_part(
            "train-nll-local5",
            "train NLL",
            train_nll_of,
            "less",
            "fit",
            subject="vit_local5",
            versus="vit",
            sampling="train_images",
        ),
        spectral_part("nep-local5-vs-global", NEP, pooled_nep, "less", subject="vit_local5", versus="vit"),
        spectral_part("nep-local5-vs-local3", NEP, pooled_nep, "less", subject="vit_local5", versus="vit_local3"),
    ),
    applies=needs_kinds("msa"),
    models=("vit",),
)

CLAIMS = (
    MSA_FLATTENS_LOSS,
    VIT_NONCONVEX,
    LESS_DATA_NONCONVEX,
    GAP_CONVEXIFIES,
    MULTISTAGE_LOCAL_FLATTEN,
    HEADS_CONVEXIFY,
    SMOOTHING_HELPS,
    PATCH_SIZE_TRADEOFF,
    AUGMENTATION_HESSIAN_CALIBRATION,
    DATA_SPECIFICITY_LOCAL_MSA,
)
