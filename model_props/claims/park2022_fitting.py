"""Claims of Park & Kim (ICLR 2022, :mod:`.park2022`), Sec. 2.1 and Fig. 1b, catalogue numbers 7 and 19: a
weak inductive bias underfits small data, it does not overfit it.

Fit parts read the final checkpoints: test error on test images, and the training NLL on a fixed subset of each
model's own training split. Errors are on the 0-1 scale. Every part bootstraps over images.
"""

from __future__ import annotations

from .base import Claim, needs_kinds
from .park2022 import PAPER, error_of, final_part, train_nll_of

UNDERFIT_NOT_OVERFIT = Claim(
    id="park2022.underfit-not-overfit",
    number=7,
    paper=PAPER,
    section="Sec. 2.1, Fig. 1b: weak inductive bias underfits, it does not overfit",
    statement="The weak inductive bias of MSAs makes models underfit small data rather than overfit it: a model "
    "with MSAs has both a higher test error and a higher training NLL than ResNet.",
    units="test error on test images and NLL on a fixed subset of the model's own training images (no "
    "augmentation), final checkpoints; the model against ResNet",
    evidence="Park & Kim Fig. 1b (CIFAR-100): test error and training NLL rise together, ResNet (17.1 %, 2.09) < "
    "Swin (23.2 %, 2.22) < PiT (23.9 %, 2.29) < ViT (33.3 %, 2.51)",
    measurement="fit",
    parts=(
        final_part("error-vs-resnet", "test error", error_of, "greater", "fit", versus="resnet"),
        final_part(
            "train-nll-vs-resnet", "train NLL", train_nll_of, "greater", "fit", versus="resnet", sampling="train_images"
        ),
    ),
    applies=needs_kinds("msa"),
    severity="critical",
)

FRACTIONS = ("vit", "vit_quarter", "vit_small")  # 100 %, 25 %, 6.25 % of the training data

VIT_NO_OVERFIT_SMALL_DATA = Claim(
    id="park2022.vit-no-overfit-small-data",
    number=19,
    paper=PAPER,
    section="Sec. 2.1, Fig. 1b: ViT does not overfit small data",
    statement="As the training subset shrinks (same optimizer steps), ViT's training NLL rises together with its "
    "test error: it underfits, it does not overfit.",
    units="test error on test images and NLL on a fixed subset of each model's own training images, final "
    "checkpoints; ViTs trained on 100 %, 25 % and 6.25 % of the training data",
    evidence="Park & Kim Sec. 2.1 and Fig. 1b (CIFAR-100 ViTs on data subsets): a ViT trained on less data has a "
    "higher training NLL as well as a higher test error",
    measurement="fit",
    parts=tuple(
        part
        for larger, smaller in zip(FRACTIONS, FRACTIONS[1:])
        for part in (
            final_part(f"error-{smaller}", "test error", error_of, "greater", "fit", subject=smaller, versus=larger),
            final_part(
                f"train-nll-{smaller}",
                "train NLL",
                train_nll_of,
                "greater",
                "fit",
                subject=smaller,
                versus=larger,
                sampling="train_images",
            ),
        )
    ),
    applies=needs_kinds("msa"),
    models=("vit",),
)

CLAIMS = (UNDERFIT_NOT_OVERFIT, VIT_NO_OVERFIT_SMALL_DATA)
