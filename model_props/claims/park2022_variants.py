"""Architecture-variant claims of Park & Kim, "How Do Vision Transformers Work?" (ICLR 2022), catalogue numbers 20
(local MSA, Sec. 3.4 and Fig. 5) and 23 (the build-up rule, Sec. 4.1 and Fig. 12b).

Both compare models built by factories of the zoo (:mod:`model_props.zoo.local_vit`, :mod:`model_props.zoo.buildup`)
with the reference they vary, trained by the same recipe. Fit parts read the final checkpoints and bootstrap over
test images (the training NLL over a fixed subset of each model's own training images); Hessian parts read the
end of warm-up and bootstrap over mini-batches, as the loss-landscape claims do (:mod:`.park2022_landscape`).
"""

from __future__ import annotations

from .base import Claim, needs_kinds
from .park2022 import PAPER
from .park2022_landscape import NEP, SPECTRUM_UNITS, pooled_nep, spectral_part
from .park2022_robustness import error_of, final_part, train_nll_of

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

ALTERNET_BUILDUP = Claim(
    id="park2022.alternet-buildup",
    number=23,
    paper=PAPER,
    section="Sec. 4.1, Fig. 12b: the build-up rule: MSA blocks at the end of a stage",
    statement="Replacing conv blocks by MSA blocks from the end of a CNN improves accuracy: ResNet with its last "
    "block replaced by an MSA block beats ResNet, and AlterNet (each MSA ending its stage) beats the same blocks "
    "with each MSA moved right after its stage's opening block.",
    units="test accuracy on test images, final checkpoints; ResNet with an MSA last block (resnet_msa) against "
    "ResNet, and AlterNet against AlterNet with its MSAs moved forward (alternet_early_msa), same recipes",
    evidence="Park & Kim Fig. 12b (CIFAR-100, Alter-ResNet-50 built up from ResNet-50): 0 MSAs 82.5 %, one at the "
    "end 83.45 %, then 83.66, 83.77 and 84.0 % up to four; a fifth MSA hurts wherever it goes, and MSAs placed "
    "elsewhere than at stage ends help less",
    measurement="fit",
    parts=(
        final_part(
            "accuracy-resnet-msa",
            "test accuracy",
            lambda r, i: r.accuracy(i),
            "greater",
            "fit",
            subject="resnet_msa",
            versus="resnet",
        ),
        final_part(
            "accuracy-msa-at-stage-end",
            "test accuracy",
            lambda r, i: r.accuracy(i),
            "greater",
            "fit",
            subject="alternet",
            versus="alternet_early_msa",
        ),
    ),
    applies=lambda a: None,
    models=("alternet",),
)

CLAIMS = (DATA_SPECIFICITY_LOCAL_MSA, ALTERNET_BUILDUP)
