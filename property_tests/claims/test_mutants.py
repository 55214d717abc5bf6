"""Every claim part can fail: on a mutant where the part is false by construction it is contradicted, while the
reference the mutant was made from is not (positive controls).

A mutant stands in for one model the part reads: the model under test itself, or a model the part names
(``subject``/``versus``, e.g. the small-data ViT). It is a copy of that model at the checkpoint the part reads,
altered so that the finding is reversed (see ``model_props.testing.mutants``). The base's verdict is its
architecture verdict from the seed study (what the references are judged by); the mutant's is about its own
weights. A part without a mutant is listed in ``WITHOUT_MUTANT`` with the reason, which is checked where it can
be: a part the study already finds contradicted on the references needs no mutant to show that it can fail,
and a part the references cannot be measured on (a model below twice chance) has nothing to mutate.
"""

import pytest

from model_props.claims import get_claim, list_claims
from model_props.testing.mutants import make_mutant

# (claim id, part) -> (the model the claim runs on, the model the mutant replaces, its checkpoint, mutation)
MUTANT_FOR = {
    ("park2022.msa-flattens-loss", "ape-vs-resnet"): ("vit", "vit", "warmup", "sharpened-loss"),
    ("park2022.vit-nonconvex", "nep-vs-resnet"): ("vit", "resnet", "warmup", "concave-loss"),
    ("park2022.gap-convexifies", "nep-gap"): ("vit", "vit_gap", "warmup", "concave-loss"),
    ("park2022.multistage-local-flatten", "nep-multistage"): ("pit", "pit", "warmup", "concave-loss"),
    ("park2022.multistage-local-flatten", "negative-magnitude-local"): ("swin", "swin", "warmup", "concave-loss"),
    ("park2022.heads-convexify", "nep-heads"): ("vit", "vit", "warmup", "concave-loss"),
    ("park2022.heads-convexify", "ape-heads"): ("vit", "vit", "warmup", "sharpened-loss"),
    ("park2022.underfit-not-overfit", "error-vs-resnet"): ("vit", "resnet", "final", "rolled-classes"),
    ("park2022.underfit-not-overfit", "train-nll-vs-resnet"): ("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-lowpass", "msa-later-half"): ("vit", "vit", "final", "highpass-attention"),
    ("park2022.conv-mlp-highpass", "conv-mlp"): ("vit", "vit", "final", "blurring-mlps"),
    ("park2022.msa-reduces-variance", "msa"): ("swin", "swin", "final", "highpass-attention"),
    ("park2022.frequency-vulnerability", "high-frequency"): ("vit", "resnet", "final", "highcut-input"),
    ("park2022.multistage-block-cka", "uniform-vs-resnet"): ("vit", "vit", "final", "scrambled-mlps"),
    ("park2022.lesion-stage-pattern", "key-units"): ("resnet", "resnet", "final", "dead-key-units"),
    ("park2022.alternet-beats-resnet", "accuracy"): ("alternet", "alternet", "final", "rolled-classes"),
    ("park2022.alternet-beats-resnet", "corruption-accuracy"): ("alternet", "alternet", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "accuracy"): ("resnet", "resnet_smooth", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "nll"): ("resnet", "resnet_smooth", "final", "rolled-classes"),
    ("park2022.smoothing-helps", "ece"): ("resnet", "resnet_smooth", "final", "rolled-classes"),
    ("park2022.msa-adversarial-robust", "pgd-1/255"): ("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-adversarial-robust", "pgd-2/255"): ("vit", "resnet", "final", "rolled-classes"),
    ("park2022.msa-adversarial-robust", "pgd-4/255"): ("vit", "resnet", "final", "rolled-classes"),
    ("bai2021.same-recipe-adversarial", "pgd-drop-equivalent"): ("vit", "resnet", "final", "rolled-classes"),
    ("raghu2021.skip-dominates", "vs-resnet"): ("vit", "vit", "final", "amplified-branches"),
    ("raghu2021.skip-dominates", "cls-low-upper"): ("vit", "vit", "final", "frozen-cls-upper"),
    ("raghu2021.attention-distance-grows", "distance-grows"): ("vit", "vit", "final", "inverted-attention-distance"),
    ("raghu2021.attention-distance-grows", "lower-heads-mixed"): ("vit", "vit", "final", "uniform-lower-attention"),
    ("park2022.vit-no-overfit-small-data", "error-vit_quarter"): ("vit", "vit", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_quarter"): ("vit", "vit", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "error-vit_small"): ("vit", "vit_quarter", "final", "rolled-classes"),
    ("park2022.vit-no-overfit-small-data", "train-nll-vit_small"): ("vit", "vit_quarter", "final", "rolled-classes"),
    ("park2022.augmentation-hessian-calibration", "ece-augmentation"): ("vit", "vit_noaug", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "error-local5"): ("vit", "vit_local5", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "train-nll-local5"): ("vit", "vit_local5", "final", "rolled-classes"),
    ("park2022.data-specificity-local-msa", "nep-local5-vs-global"): ("vit", "vit_local5", "warmup", "concave-loss"),
    ("park2022.data-specificity-local-msa", "nep-local5-vs-local3"): ("vit", "vit_local5", "warmup", "concave-loss"),
    ("park2022.alternet-buildup", "accuracy-resnet-msa"): ("alternet", "resnet_msa", "final", "rolled-classes"),
    ("park2022.alternet-buildup", "accuracy-msa-at-stage-end"): ("alternet", "alternet", "final", "rolled-classes"),
    ("dosovitskiy2021.position-embedding-2d", "near-minus-far"): ("vit", "vit", "final", "checkerboard-positions"),
    ("raghu2021.cls-preserves-location", "cls-over-gap"): ("vit", "vit", "final", "shuffled-tokens"),
    ("raghu2021.cls-vs-gap-late-layers", "late-layers-differ"): ("vit", "vit_gap", "final", "shuffled-tokens"),
    ("raghu2021.data-scale-higher-layers", "higher-layers-weaker"): ("vit", "vit_quarter", "final", "shuffled-tokens"),
    ("raghu2021.vit-lower-like-resnet-mid", "upper-unmatched"): ("vit", "vit", "final", "scrambled-upper-mlps"),
    ("raghu2021.vit-lower-like-resnet-mid", "lower-like-resnet-mid"): (
        "vit",
        "vit",
        "final",
        "class-evidence-embedding",
    ),  # fmt: skip
}

# (claim id, part) -> (what checks the reason, the reason). "contradicted on REF": the study's verdict on REF is
# contradicted, so the suite already shows the part failing; "skipped on REF": the study cannot measure it on REF.
WITHOUT_MUTANT = {
    ("park2022.multistage-block-cka", "block-structure"): (
        "none",
        "a multi-stage model whose units resemble other stages' units more than their own stage's would need its "
        "stages tied to one another through the input image; no mutant of a reference does that by construction",
    ),
    ("park2022.frequency-vulnerability", "low-frequency"): (
        "none",
        "the references' ResNet loses almost nothing to 0.1π noise (-0.0005 to 0.002 accuracy over the study's five "
        "seeds), so no ViT can lose less; a ResNet made to lose more must lose more than the ViT's 0.035-0.22, and "
        "amplifying ResNet's input band (0, 0.2π] by 3x (tried on earlier weights) raised its drop only to 0.07 "
        "while its clean accuracy fell from 0.98 to 0.78: noise there cannot be told from the image",
    ),
    ("park2022.msa-reduces-variance", "conv-mlp"): (
        "none",
        "an MLP branch sees only the LayerNorm of the residual stream, so no branch can return a fraction of the "
        "stream itself; the mutant tried (blurring-mlps: blur of the normalised tokens minus them) raises the "
        "variance change (+0.013, 95 % CI [0.012, 0.015] on ViT) instead of lowering it, and a mutant without the "
        "norm is no longer mapped as an MLP unit by the anatomy",
    ),
    ("park2022.less-data-nonconvex", "nep-small-data"): ("skipped on vit", ""),  # vit_small's warm-up at chance
    ("park2022.smoothing-helps", "ape"): ("skipped on resnet", ""),  # one seed of resnet_smooth's warm-up at chance
    ("park2022.augmentation-hessian-calibration", "ape-augmentation"): ("skipped on vit", ""),  # vit_noaug's, too
    ("park2022.augmentation-hessian-calibration", "nep-augmentation"): ("skipped on vit", ""),
    ("park2022.msa-adversarial-robust", "pgd-8/255"): ("skipped on vit", ""),  # the smoke profile attacks to 4/255
    ("raghu2021.skip-dominates", "cls-high-lower"): ("contradicted on vit", ""),
    ("naseer2021.occlusion-robust", "relative-drop-vs-resnet"): ("contradicted on vit", ""),
    ("park2022.patch-size-tradeoff", "ape-patch"): ("skipped on vit", ""),
    ("park2022.patch-size-tradeoff", "nep-patch"): ("skipped on vit", ""),
}


def test_every_part_has_a_mutant_or_a_stated_reason():
    parts = {(c.id, p.name) for c in list_claims() for p in c.parts}
    assert set(MUTANT_FOR) | set(WITHOUT_MUTANT) == parts
    assert not set(MUTANT_FOR) & set(WITHOUT_MUTANT)


@pytest.mark.parametrize("key", sorted(WITHOUT_MUTANT), ids=lambda k: f"{k[0]}-{k[1]}")
def test_a_part_without_a_mutant_says_why(key, model_store):
    claim_id, part = key
    check, reason = WITHOUT_MUTANT[key]
    if check == "none":
        assert len(reason) > 40
        return
    verdict, _, model = check.split()
    found = {p.part.name: p for p in model_store.study.evaluate(get_claim(claim_id), model).parts}[part]
    assert found.verdict == verdict, found.describe()


@pytest.mark.parametrize("key", sorted(MUTANT_FOR), ids=lambda k: f"{k[0]}-{k[1]}")
def test_part_is_contradicted_on_its_mutant_not_on_its_base(key, model_store, check_claim):
    claim_id, part = key
    model, replaced, checkpoint, mutation = MUTANT_FOR[key]
    claim = get_claim(claim_id)
    base = {p.part.name: p for p in model_store.study.evaluate(claim, model).parts}[part]
    assert base.verdict not in ("contradicted", "skipped"), f"the base already decides it: {base.describe()}"
    mutant = make_mutant(model_store.get(replaced, checkpoint), mutation)
    try:
        if replaced == model and checkpoint == "final" and claim.models is None:  # the mutant is the model under test
            outcome = check_claim(claim, mutant, record=False)
        else:  # the mutant stands in for the model the claim reads under that name (a claim of named references too)
            outcome = check_claim(claim, model_store.get(model), record=False, substitutes={replaced: mutant})
    except pytest.skip.Exception as exc:  # a mutant test that skips could never fail
        pytest.fail(f"the claim was not evaluated on the mutant: {exc}")
    assert {p.part.name: p.verdict for p in outcome.parts}[part] == "contradicted", outcome.message()
