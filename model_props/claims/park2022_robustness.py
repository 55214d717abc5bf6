"""Fit, robustness and lesion claims of Park & Kim, "How Do Vision Transformers Work?" (ICLR 2022), catalogue
numbers 7, 11, 13, 14, 16 and 19.

Fit parts read the final checkpoints (test images, and a fixed subset of each model's own training split for
the training NLL); noise, corruption, attack and lesion parts read the final checkpoints on test images.
Accuracies and drops are on the 0-1 scale. Every part bootstraps over images.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..anatomy import Anatomy
from ..measurements.lesion import key_units, removable_units
from ..measurements.registry import ReportKind
from .base import Claim, Part, needs_kinds, needs_traits
from .park2022 import PAPER

LOW, HIGH = (0.1,), (0.7, 0.8, 0.9)  # the frequency bands (units of pi) the noise claim reads


def final_part(name: str, statistic_name: str, statistic, direction, report: ReportKind, **kw) -> Part:
    """A part read from ``report`` of the final checkpoint."""
    return Part(
        name=name,
        statistic_name=statistic_name,
        statistic=statistic,
        direction=direction,
        report=report,
        checkpoint="final",
        **kw,
    )


def error_of(r: Any, i: np.ndarray) -> np.ndarray:
    """Test error, 1 - accuracy, of a fit report on images ``i``."""
    return 1.0 - r.accuracy(i)


def train_nll_of(r: Any, i: np.ndarray) -> np.ndarray:
    """Mean train NLL of a fit report on training images ``i``."""
    return r.train_nll_mean(i)


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


def _band_drop(frequencies: tuple[float, ...]):
    def stat(r: Any, i: np.ndarray) -> np.ndarray:
        return np.mean([r.band_drop(f, i) for f in frequencies], axis=0)

    return stat


FREQUENCY_VULNERABILITY = Claim(
    id="park2022.frequency-vulnerability",
    number=11,
    paper=PAPER,
    section="Sec. 3.1, Fig. 2b: ViT is vulnerable to low-frequency noise, ResNet to high-frequency noise",
    statement="MSAs are low-pass and convolutions high-pass, so ViT loses more accuracy than ResNet under "
    "low-frequency noise and less under high-frequency noise.",
    units="accuracy drop (clean - noisy) under Gaussian noise band-limited to a square ring of half-width 0.1π "
    "around f, rescaled to an RMS of 0.05 per pixel, on test images; final checkpoints; ViT against ResNet",
    evidence="Park & Kim Fig. 2b (ImageNet ViT-Ti vs ResNet-50): ViT loses more at 0.1π-0.5π (e.g. 12.1 vs 8.9 "
    "points at 0.2π), ResNet more at 0.7π-0.9π (13.6 and 15.4 vs 4.3 and 4.8 points)",
    measurement="noise",
    parts=(
        final_part(
            "low-frequency", "accuracy drop under noise at 0.1π", _band_drop(LOW), "greater", "noise", versus="resnet"
        ),
        final_part(
            "high-frequency",
            "mean accuracy drop under noise at 0.7π-0.9π",
            _band_drop(HIGH),
            "less",
            "noise",
            versus="resnet",
        ),
    ),
    applies=needs_traits(any_of=("global_msa",), none_of=("multi_stage", "conv")),
    severity="critical",
)


def _lesion_gap(r: Any, i: np.ndarray) -> np.ndarray:
    key = key_units(r.kinds, r.stages)
    drops = r.drops(i)
    return drops[..., key].mean(axis=-1) - drops[..., ~key].mean(axis=-1)


def _has_key_and_other_units(anat: Anatomy) -> str | None:
    units = removable_units(anat)
    key = key_units(tuple(u.kind for u in units), np.array([u.stage for u in units]))
    if not key.any() or key.all():
        return (
            f"{anat.family} has no {'first-conv or last-MSA' if not key.any() else 'other'} removable units to compare"
        )
    return None


LESION_STAGE_PATTERN = Claim(
    id="park2022.lesion-stage-pattern",
    number=13,
    paper=PAPER,
    section="Sec. 4.1 and App. D, lesion study: multi-stage models behave like a series of small models",
    statement="In multi-stage models, removing a conv unit at the start of a stage or an MSA unit at the end of a "
    "stage costs more accuracy than removing the other units.",
    units="accuracy drop (intact - lesioned) when one unit's residual branch is removed; key units: the first "
    "removable conv unit of every stage that starts with a subsampling (never the block next to the stem) and "
    "the last MSA unit of every stage; others: every other removable unit (never embedding, subsampling or "
    "head); final checkpoints, test images",
    evidence="Park & Kim App. D / Fig. 10 and issue #41 (CIFAR-100 Swin-Ti and AlterNet): the drop oscillates with "
    "the stage period; convs and MLPs at the start of a stage and MSAs at its end matter most",
    measurement="lesion",
    parts=(
        final_part(
            "key-units",
            "mean drop of key units - mean drop of the other removable units",
            _lesion_gap,
            "greater",
            "lesion",
            applies=_has_key_and_other_units,
            degenerate="no lesioned unit changes any prediction on any image (every drop is exactly zero)",
        ),
    ),
    applies=needs_traits(any_of=("multi_stage",)),
)


def _mean_corruption_accuracy(r: Any, i: np.ndarray) -> np.ndarray:
    return r.mean_accuracy(i)


ALTERNET_BEATS_RESNET = Claim(
    id="park2022.alternet-beats-resnet",
    number=14,
    paper=PAPER,
    section="Sec. 4.2, Fig. 12c: AlterNet beats CNNs in the small-data regime",
    statement="Replacing the conv blocks at the end of each stage by MSA blocks (AlterNet) improves both "
    "accuracy and robustness to corruptions over ResNet in the small-data regime.",
    units="test accuracy (final checkpoints, test images) and mean accuracy over 8 corruptions x 5 severities; "
    "conv models with MSA blocks against ResNet",
    evidence="Park & Kim Fig. 12c (CIFAR-100 and CIFAR-100-C): Alter-ResNet 84.0 % accuracy and 66.7 % robustness "
    "against ResNet's 82.5 % and 65.0 %",
    measurement="corruption",
    parts=(
        final_part("accuracy", "test accuracy", lambda r, i: r.accuracy(i), "greater", "fit", versus="resnet"),
        final_part(
            "corruption-accuracy",
            "mean corruption accuracy",
            _mean_corruption_accuracy,
            "greater",
            "corruption",
            versus="resnet",
        ),
    ),
    applies=lambda a: needs_traits(any_of=("conv",))(a) or needs_kinds("msa")(a),
)


def _pgd_drop(eps_255: int):
    def stat(r: Any, i: np.ndarray) -> np.ndarray:
        return r.drop("pgd", eps_255 / 255, i)

    return stat


ATTACK_EPSILONS_255 = (1, 2, 4, 8)  # a part per eps; eps the profile does not attack are skipped

MSA_ADVERSARIAL_ROBUST = Claim(
    id="park2022.msa-adversarial-robust",
    number=16,
    paper=PAPER,
    section="Sec. 1 and App. (robustness): MSAs improve robustness to adversarial attacks",
    statement="Models with MSAs lose less accuracy than ResNet under adversarial attacks (PGD; FGSM reported "
    "beside it).",
    units="accuracy drop (clean - robust) under PGD (10 steps of eps/4 from a random start) at each eps, on test "
    "images, final checkpoints; the model against ResNet",
    evidence="Park & Kim Sec. 1 and the authors' robustness code (no adversarial numbers published): MSA models are "
    "claimed more robust to adversarial perturbations than CNNs",
    measurement="attack",
    parts=tuple(
        final_part(
            f"pgd-{e}/255", f"accuracy drop under PGD at eps {e}/255", _pgd_drop(e), "less", "attack", versus="resnet"
        )
        for e in ATTACK_EPSILONS_255
    ),
    applies=needs_kinds("msa"),
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

CLAIMS = (
    UNDERFIT_NOT_OVERFIT,
    FREQUENCY_VULNERABILITY,
    LESION_STAGE_PATTERN,
    ALTERNET_BEATS_RESNET,
    MSA_ADVERSARIAL_ROBUST,
    VIT_NO_OVERFIT_SMALL_DATA,
)
