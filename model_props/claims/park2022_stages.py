"""Claims of Park & Kim (ICLR 2022, :mod:`.park2022`), Sec. 4 and App. D, catalogue numbers 12, 13, 14 and 23:
multi-stage models behave like a series of small models (CKA block structure, App. D.3; the lesion study, Fig. 10),
AlterNet beats ResNet (Sec. 4.2), and the build-up rule puts MSA blocks at the end of a stage (Sec. 4.1, Fig. 12b).

CKA parts bootstrap over batches; lesion, corruption and fit parts read the final checkpoints on test images and
bootstrap over images. The build-up claim compares models built by :mod:`model_props.zoo.buildup` with the reference
they vary, trained by the same recipe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..anatomy import Anatomy
from ..errors import NotApplicable
from ..measurements.lesion import key_units, removable_units
from ..measurements.units import UnitReport
from .base import Claim, Part, needs_kinds, needs_traits
from .park2022 import PAPER, final_part


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

CLAIMS = (MULTISTAGE_BLOCK_CKA, LESION_STAGE_PATTERN, ALTERNET_BEATS_RESNET, ALTERNET_BUILDUP)
