"""The positive controls of the catalogue, as data: per claim part, the mutant on which it must come out contradicted
while the unmutated model, measured the same way, is not (``property_tests/claims/test_mutants.py``), or why it has
none (an *uncontrolled* part, listed in the reports and the README).

A control names the reference the claim runs on, the model the mutant replaces (the model under test itself, or a
model the part reads by name: ResNet as ``versus``, a variant as ``subject``), the checkpoint the mutant is made
from, and the mutation (:mod:`model_props.mutation.mutants`). The control counts only where the unmutated model is
not already contradicted at the same scope, seed and sample: checkpoint scope, the live run's own weights (the test
asserts it). Training gives other weights on another machine, so a control is kept only where its base's estimate
goes the part's way on every seed of the built-in seed study (:data:`STUDY`, each seed on its own sample): a
checkpoint interval is built around that estimate, so a base whose estimate lies on the rule's other side on a seed
may be contradicted on weights like those. The study holds the per-seed estimates, not per-seed checkpoint verdicts,
so the rule reads the estimates: it is derived (:data:`BASE_AGAINST`), follows the study when it is regenerated, and
is stricter than "contradicted on no seed" (a seed whose estimate lies on the other side within its interval also
removes the control). The others are uncontrolled, naming the seeds.

The architecture path has controls of its own (:data:`ARCHITECTURE_CONTROLS`): judged over several training seeds (a
t interval over per-seed estimates, each on its own seed's sample), the part must be contradicted on those seeds'
mutants while their unmutated models, judged the same way, are not (``property_tests/library/
test_architecture_control.py``, on the tiny profile).

Not imported by the catalogue's modules, so it is in no claim's statistics fingerprint.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any, NamedTuple

from ..training.profiles import BUILTIN_PACKAGE
from . import get_claim

__all__ = [
    "Control", "DESIGNED", "CONTROLS", "UNCONTROLLED", "BELOW_CHANCE", "BASE_AGAINST", "STUDY", "base_estimates",
    "against", "seeds_against", "ARCHITECTURE_CONTROLS",
]  # fmt: skip


class Control(NamedTuple):
    model: str  # the reference the claim runs on
    replaced: str  # the model the mutant stands in for
    checkpoint: str  # "warmup" | "final": the weights the mutant is made from
    mutation: str


DESIGNED: dict[tuple[str, str], Control] = {
    ("park2022.msa-flattens-loss", "ape-vs-resnet"): Control("vit", "vit", "warmup", "sharpened-loss"),
    ("park2022.vit-nonconvex", "nep-vs-resnet"): Control("vit", "resnet", "warmup", "concave-loss"),
    ("park2022.gap-convexifies", "nep-gap"): Control("vit", "vit_gap", "warmup", "concave-loss"),
    ("park2022.multistage-local-flatten", "nep-multistage"): Control("pit", "pit", "warmup", "concave-loss"),
    ("park2022.multistage-local-flatten", "negative-magnitude-local"): Control("swin", "swin", "warmup", "concave-loss"),
    ("park2022.heads-convexify", "nep-heads"): Control("vit", "vit", "warmup", "concave-loss"),
    ("park2022.heads-convexify", "ape-heads"): Control("vit", "vit", "warmup", "sharpened-loss"),
    ("park2022.underfit-not-overfit", "error-vs-resnet"): Control("vit", "resnet", "final", "rolled-classes"),
    ("park2022.underfit-not-overfit", "train-nll-vs-resnet"): Control("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-lowpass", "msa-later-half"): Control("vit", "vit", "final", "highpass-attention"),
    ("park2022.conv-mlp-highpass", "conv-mlp"): Control("vit", "vit", "final", "blurring-mlps"),
    ("park2022.msa-reduces-variance", "msa"): Control("swin", "swin", "final", "highpass-attention"),
    ("park2022.frequency-vulnerability", "high-frequency"): Control("vit", "resnet", "final", "highcut-input"),
    ("park2022.multistage-block-cka", "uniform-vs-resnet"): Control("vit", "vit", "final", "scrambled-mlps"),
    ("park2022.lesion-stage-pattern", "key-units"): Control("resnet", "resnet", "final", "dead-key-units"),
    ("park2022.alternet-beats-resnet", "accuracy"): Control("alternet", "alternet", "final", "rolled-classes"),
    ("park2022.alternet-beats-resnet", "corruption-accuracy"): Control("alternet", "alternet", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "accuracy"): Control("resnet", "resnet_smooth", "final", "sharpening-smoothing"),
    ("park2022.smoothing-helps", "nll"): Control("resnet", "resnet_smooth", "final", "sharpening-smoothing"),
    ("park2022.smoothing-helps", "ece"): Control("resnet", "resnet_smooth", "final", "sharpening-smoothing"),
    ("park2022.smoothing-helps", "ape"): Control("resnet", "resnet_smooth", "warmup", "sharpened-loss"),
    ("park2022.msa-adversarial-robust", "pgd-1/255"): Control("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-adversarial-robust", "pgd-2/255"): Control("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-adversarial-robust", "pgd-4/255"): Control("vit", "resnet", "final", "rolled-classes"),
    ("bai2021.same-recipe-adversarial", "pgd-drop-equivalent"): Control("vit", "resnet", "final", "rolled-classes"),
    ("raghu2021.skip-dominates", "vs-resnet"): Control("vit", "vit", "final", "amplified-branches"),
    ("raghu2021.skip-dominates", "cls-low-upper"): Control("vit", "vit", "final", "frozen-cls-upper"),
    ("raghu2021.attention-distance-grows", "distance-grows"): Control("vit", "vit", "final", "inverted-attention-distance"),
    ("raghu2021.attention-distance-grows", "lower-heads-mixed"): Control("vit", "vit", "final", "uniform-lower-attention"),
    ("park2022.vit-no-overfit-small-data", "error-vit_quarter"): Control("vit", "vit", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_quarter"): Control("vit", "vit", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "error-vit_small"): Control("vit", "vit_quarter", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_small"): Control("vit", "vit_quarter", "final", "rolled-classes"),
    ("park2022.augmentation-hessian-calibration", "ece-augmentation"): Control("vit", "vit_noaug", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "error-local5"): Control("vit", "vit_local5", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "train-nll-local5"): Control("vit", "vit_local5", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "nep-local5-vs-global"): Control("vit", "vit_local5", "warmup", "concave-loss"),
    ("park2022.data-specificity-local-msa", "nep-local5-vs-local3"): Control("vit", "vit_local5", "warmup", "concave-loss"),
    ("park2022.alternet-buildup", "accuracy-resnet-msa"): Control("alternet", "resnet_msa", "final", "rolled-classes"),
    ("park2022.alternet-buildup", "accuracy-msa-at-stage-end"): Control("alternet", "alternet", "final", "rolled-classes"),
    ("dosovitskiy2021.position-embedding-2d", "near-minus-far"): Control("vit", "vit", "final", "checkerboard-positions"),
    ("raghu2021.cls-preserves-location", "cls-over-gap"): Control("vit", "vit", "final", "shuffled-tokens"),
    ("raghu2021.cls-vs-gap-late-layers", "late-layers-differ"): Control("vit", "vit_gap", "final", "shuffled-tokens"),
    ("raghu2021.data-scale-higher-layers", "higher-layers-weaker"): Control("vit", "vit_quarter", "final", "shuffled-tokens"),
    ("raghu2021.vit-lower-like-resnet-mid", "upper-unmatched"): Control("vit", "vit", "final", "scrambled-upper-mlps"),
    ("raghu2021.vit-lower-like-resnet-mid", "lower-like-resnet-mid"): Control("vit", "vit", "final", "class-evidence-embedding"),
}  # fmt: skip

# Controls of the architecture path, judged over seeds (module docstring).
ARCHITECTURE_CONTROLS: dict[tuple[str, str], Control] = {
    ("park2022.msa-lowpass", "msa-later-half"): Control("vit", "vit", "final", "highpass-attention"),
}

BELOW_CHANCE = "the references' weights it reads are below twice chance on a study seed, so the part is never measured"

# (claim id, part) -> why it has no control that counts
UNCONTROLLED: dict[tuple[str, str], str] = {
    ("park2022.multistage-block-cka", "block-structure"): (
        "a multi-stage model whose units resemble other stages' units more than their own stage's would need its "
        "stages tied to one another through the input image; no mutant of a reference does that by construction"
    ),
    ("park2022.frequency-vulnerability", "low-frequency"): (
        "the references' ResNet loses almost nothing to 0.1π noise, so no ViT can lose less; a ResNet made to lose "
        "more must lose more than the ViT, and amplifying ResNet's input band (0, 0.2π] by 3x raised its drop only "
        "to 0.07 while its clean accuracy fell from 0.98 to 0.78: noise there cannot be told from the image"
    ),
    ("park2022.msa-reduces-variance", "conv-mlp"): (
        "an MLP branch sees only the LayerNorm of the residual stream, so no branch can return a fraction of the "
        "stream itself; the mutant tried (blurring-mlps) raises the variance change instead of lowering it, and a "
        "mutant without the norm is no longer mapped as an MLP unit by the anatomy"
    ),
    ("park2022.less-data-nonconvex", "nep-small-data"): BELOW_CHANCE + " (vit_small at the end of warm-up)",
    ("park2022.augmentation-hessian-calibration", "ape-augmentation"): BELOW_CHANCE + " (vit_noaug at warm-up)",
    ("park2022.augmentation-hessian-calibration", "nep-augmentation"): BELOW_CHANCE + " (vit_noaug at warm-up)",
    ("park2022.patch-size-tradeoff", "ape-patch"): BELOW_CHANCE + " (vit_p8 at the end of warm-up)",
    ("park2022.patch-size-tradeoff", "nep-patch"): BELOW_CHANCE + " (vit_p8 at the end of warm-up)",
    (
        "park2022.msa-adversarial-robust",
        "pgd-8/255",
    ): "the smoke profile attacks up to 4/255: the part is never measured",
    ("raghu2021.skip-dominates", "cls-high-lower"): (
        "the unmutated ViT is already contradicted on it (the study's seeds and the live checkpoint): no mutant "
        "can show that the part can fail where it fails already"
    ),
    ("naseer2021.occlusion-robust", "relative-drop-vs-resnet"): (
        "the unmutated ViT is already contradicted on it (the study's seeds and the live checkpoint): no mutant "
        "can show that the part can fail where it fails already"
    ),
}

STUDY = "smoke-seeds.json"  # the built-in seed study on whose every seed a control's base must hold


def base_estimates(study: Mapping[str, Any], key: tuple[str, str], control: Control) -> list[float | None]:
    """The unmutated base's per-seed estimates of part ``key`` in ``study`` (a seed study's JSON): the part's
    statistic on the model it reads for reference ``control.model`` (its ``subject``, else that reference), minus
    its ``versus`` paired by seed index, as the study records them (each seed on its own sample); None: undefined."""
    claim_id, name = key
    part = next(p for p in get_claim(claim_id).parts if p.name == name)
    values = study["claims"][claim_id]["parts"][name]["values"]
    subject = values[part.subject or control.model]
    versus = values[part.versus] if part.versus else [0.0] * len(subject)
    return [None if a is None or b is None else a - b for a, b in zip(subject, versus)]


def against(estimate: float | None, direction: str, threshold: float) -> bool:
    """Whether a base estimate leaves room for a contradiction: on the rule's other side of the threshold (outside
    the margin, for ``within``), or undefined (the base would be skipped)."""
    if estimate is None or math.isnan(estimate):
        return True
    if direction == "within":
        return abs(estimate) > abs(threshold)
    return estimate < threshold if direction == "greater" else estimate > threshold


def seeds_against(study: Mapping[str, Any], key: tuple[str, str], control: Control) -> tuple[int, ...]:
    """The study's seeds on which the base's estimate of part ``key`` goes against the part (:func:`against`)."""
    part = next(p for p in get_claim(key[0]).parts if p.name == key[1])
    estimates = base_estimates(study, key, control)
    return tuple(s for s, e in zip(study["seeds"], estimates) if against(e, part.direction, part.threshold))


_STUDY: dict[str, Any] = json.loads(resources.files(BUILTIN_PACKAGE).joinpath(STUDY).read_text())

# Per designed control whose base goes against its part on a seed of the study: those seeds.
BASE_AGAINST: dict[tuple[str, str], tuple[int, ...]] = {
    key: seeds for key, control in DESIGNED.items() if (seeds := seeds_against(_STUDY, key, control))
}

CONTROLS: dict[tuple[str, str], Control] = {k: c for k, c in DESIGNED.items() if k not in BASE_AGAINST}
for _key, _seeds in BASE_AGAINST.items():
    _c = DESIGNED[_key]
    UNCONTROLLED[_key] = (
        f"the unmutated {_c.model}'s estimate goes against it on seed{'s' if len(_seeds) > 1 else ''} "
        f"{', '.join(map(str, _seeds))} of the {_STUDY['date']} seed study, so its base may be contradicted on "
        f"weights like those and its mutant ({_c.mutation}) would prove nothing: the control cannot count on every "
        "machine"
    )
