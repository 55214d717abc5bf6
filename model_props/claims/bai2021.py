"""Claim of Bai et al., "Are Transformers More Robust Than CNNs?" (NeurIPS 2021), which disputes Park & Kim's claim
16: trained with the same recipe, CNNs are as robust to adversarial attacks as Transformers.

An equivalence claim: the difference of PGD accuracy drops, model - ResNet, is judged by two one-sided tests at
level 0.90 against a margin of 5 accuracy points (``direction="within"``,
:func:`~model_props.verdicts.stats.decide`). Park & Kim's side of the dispute (claim 16, "MSA models lose less
accuracy than ResNet") is restated on the same statistic, drop(model) - drop(ResNet) < 0, and judged on the same
interval (:class:`~.base.Dispute`).
It reads ``attack_test``: PGD at the profile's smallest eps on every image of the test split, so that the interval is
as narrow as the split allows. Our references share the training budget, schedule and augmentation, and each
model's learning rate and warm-up are chosen on the validation split: the "same recipe" of Bai et al. in the sense
that no model is favoured by its own tuning.
"""

from __future__ import annotations

import numpy as np

from ..measurements.attack import AttackReport
from .base import Claim, Dispute, Paper, Part, needs_kinds

PAPER = Paper(
    key="bai2021",
    title="Are Transformers More Robust Than CNNs?",
    authors="Yutong Bai, Jieru Mei, Alan Yuille, Cihang Xie",
    venue="NeurIPS 2021",
    arxiv="2111.05464",
)

MARGIN = 0.05  # 5 accuracy points (docs/design.md#decision-rules)


def _pgd_drop(report: AttackReport, idx: np.ndarray) -> np.ndarray:
    """Clean accuracy - accuracy under PGD at the report's smallest eps, on the resampled images (0-1 scale)."""
    return report.drop("pgd", float(report.epsilons.min()), idx)


SAME_RECIPE_ADVERSARIAL = Claim(
    id="bai2021.same-recipe-adversarial",
    number=29,
    paper=PAPER,
    section="Sec. 4: adversarial robustness once the training recipes are aligned",
    statement="Trained with the same recipe, CNNs are as robust to adversarial attacks as Transformers: the PGD "
    "accuracy drop of an MSA model and of ResNet differ by less than 5 points.",
    units="the model's predictions on every test image, clean and under PGD (10 steps of eps/4 from a seeded random "
    "start) at the profile's smallest eps, paired with ResNet's on the same images; FGSM at that eps beside it",
    evidence="Bai et al. Sec. 4 (DeiT-S against ResNet50 on ImageNet, PGD and AutoAttack): once ResNet50 adopts "
    "DeiT's training recipe (and both are trained adversarially alike), the CNN is as robust as the Transformer; "
    "the Transformers' earlier advantage came from their recipes, not their architecture",
    measurement="attack",
    parts=(
        Part(
            name="pgd-drop-equivalent",
            statistic_name="accuracy drop under PGD at the smallest eps (clean - robust)",
            statistic=_pgd_drop,
            direction="within",
            threshold=MARGIN,
            versus="resnet",
            report="attack_test",
        ),
    ),
    applies=needs_kinds("msa"),
    level=0.90,
    disputes=(
        Dispute(
            claim="park2022.msa-adversarial-robust",
            part="pgd-drop-equivalent",
            direction="less",
            threshold=0.0,
            hypothesis="MSA models lose less accuracy under PGD than ResNet: the drop difference, model - resnet, < 0",
        ),
    ),
)

CLAIMS = (SAME_RECIPE_ADVERSARIAL,)
