"""Claims of Park & Kim (ICLR 2022, :mod:`.park2022`) on robustness, catalogue numbers 11 and 16: ViT is
vulnerable to low-frequency noise and ResNet to high-frequency noise (Sec. 3.1, Fig. 2b), and MSAs lose less
accuracy to adversarial attacks than convs do.

Noise and attack parts read the final checkpoints on test images. Accuracies and drops are on the 0-1 scale. Every
part bootstraps over images.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Claim, needs_kinds, needs_traits
from .park2022 import PAPER, final_part

LOW, HIGH = (0.1,), (0.7, 0.8, 0.9)  # the frequency bands (units of pi) the noise claim reads


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

CLAIMS = (FREQUENCY_VULNERABILITY, MSA_ADVERSARIAL_ROBUST)
