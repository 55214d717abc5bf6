"""The positive controls of the catalogue, as data: per claim part, the mutant on which it must come out contradicted
while the unmutated model, measured the same way, is not (``property_tests/claims/test_mutants.py``), or why it has
none (an *uncontrolled* part, listed in the reports and the README).

A control names the reference the claim runs on, the model the mutant replaces (the model under test itself, or a
model the part reads by name: ResNet as ``versus``, a variant as ``subject``), the checkpoint the mutant is made
from, and the mutation (:mod:`model_props.testing.mutants`). The control counts only where the unmutated model is
not already contradicted at the same scope, seed and sample: checkpoint scope, the live run's own weights. Training
gives other weights on another machine, so a control is kept only where its base is contradicted on none of the
seed study's seeds (checkpoint scope, each seed on its own sample); the others are uncontrolled, naming the seeds.

Not imported by the catalogue's modules, so it is in no claim's statistics fingerprint.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Control", "CONTROLS", "UNCONTROLLED", "BELOW_CHANCE"]


class Control(NamedTuple):
    model: str  # the reference the claim runs on
    replaced: str  # the model the mutant stands in for
    checkpoint: str  # "warmup" | "final": the weights the mutant is made from
    mutation: str


_DESIGNED: dict[tuple[str, str], Control] = {
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
    ("park2022.smoothing-helps", "accuracy"): Control("resnet", "resnet_smooth", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "nll"): Control("resnet", "resnet_smooth", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "ece"): Control("resnet", "resnet_smooth", "final", "rolled-classes"),
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
    ("park2022.smoothing-helps", "ape"): BELOW_CHANCE + " (resnet_smooth at the end of warm-up)",
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

# Parts whose unmutated base is contradicted at checkpoint scope on these seeds of the smoke profile (0-4: the
# two-stage study of 2026-11-26; 100: the live seed, on the machine that made the study): on those weights a mutant would prove nothing, so the control cannot count on
# every machine. Re-check after a new study (each seed's base verdict, as the mutant test judges it).
_BASE_CONTRADICTED: dict[tuple[str, str], tuple[int, ...]] = {
    ("bai2021.same-recipe-adversarial", "pgd-drop-equivalent"): (0, 3, 4),
    ("park2022.alternet-beats-resnet", "accuracy"): (4,),
    ("park2022.alternet-beats-resnet", "corruption-accuracy"): (0, 1, 2, 3, 4),
    ("park2022.alternet-buildup", "accuracy-msa-at-stage-end"): (4,),
    ("park2022.alternet-buildup", "accuracy-resnet-msa"): (0, 2, 4),
    ("park2022.conv-mlp-highpass", "conv-mlp"): (0, 1, 3, 4),
    ("park2022.data-specificity-local-msa", "train-nll-local5"): (4,),
    ("park2022.data-specificity-local-msa", "nep-local5-vs-global"): (100,),
    ("park2022.gap-convexifies", "nep-gap"): (1,),
    ("park2022.heads-convexify", "ape-heads"): (1,),
    ("park2022.heads-convexify", "nep-heads"): (0,),
    ("park2022.lesion-stage-pattern", "key-units"): (0, 1, 3, 4),
    ("park2022.msa-adversarial-robust", "pgd-1/255"): (0, 2, 4),
    ("park2022.msa-flattens-loss", "ape-vs-resnet"): (4,),
    ("park2022.msa-reduces-variance", "msa"): (0, 2),
    ("park2022.multistage-local-flatten", "nep-multistage"): (1, 3, 4),
    ("park2022.vit-no-overfit-small-data", "error-vit_quarter"): (3, 4),
    ("park2022.vit-no-overfit-small-data", "error-vit_small"): (2,),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_quarter"): (0, 3, 4),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_small"): (0, 1, 2, 3, 4),
    ("raghu2021.attention-distance-grows", "lower-heads-mixed"): (2,),
    ("raghu2021.data-scale-higher-layers", "higher-layers-weaker"): (0, 2),
    ("raghu2021.skip-dominates", "cls-low-upper"): (0,),
    ("raghu2021.vit-lower-like-resnet-mid", "upper-unmatched"): (0, 1, 2, 3, 4),
}

CONTROLS: dict[tuple[str, str], Control] = {k: c for k, c in _DESIGNED.items() if k not in _BASE_CONTRADICTED}
for _key, _seeds in _BASE_CONTRADICTED.items():
    _c = _DESIGNED[_key]
    UNCONTROLLED[_key] = (
        f"the unmutated {_c.model} is already contradicted on it at checkpoint scope on seed"
        f"{'s' if len(_seeds) > 1 else ''} {', '.join(map(str, _seeds))} (0-4: the study; 100: the live seed): its mutant ({_c.mutation}) would prove "
        "nothing on those weights, so the control cannot count on every machine"
    )
