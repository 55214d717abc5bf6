"""Every claim can fail: on a mutant where the claim is false by construction, it is contradicted.

A mutant stands in for one model the claim reads: the model under test itself, or a model a comparison
names (``subject``/``versus``, e.g. the small-data ViT). It is a copy of that model at the checkpoint the
claim reads, altered so that the finding is reversed (see ``model_props.testing.mutants``).
"""

import pytest

from model_props.claims import CLAIMS, get_claim
from model_props.testing.mutants import make_mutant

# claim id -> (the model the claim runs on, the model the mutant replaces, its checkpoint, mutation, the part
# the mutation reverses).
MUTANT_FOR = {
    "park2022.msa-lowpass": ("vit", "vit", "final", "highpass-attention", "msa-later-half"),
    "park2022.conv-mlp-highpass": ("resnet", "resnet", "final", "blur-convs", "conv-mlp"),
    "park2022.msa-reduces-variance": ("vit", "vit", "final", "highpass-attention", "msa"),
    "park2022.multistage-block-cka": ("vit", "vit", "final", "scrambled-mlps", "uniform-vs-resnet"),
    "raghu2021.skip-dominates": ("vit", "vit", "final", "amplified-branches", "vs-resnet"),
    "raghu2021.attention-distance-grows": ("vit", "vit", "final", "inverted-attention-distance", "distance-grows"),
    "park2022.msa-flattens-loss": ("vit", "vit", "warmup", "sharpened-loss", "ape-vs-resnet"),
    "park2022.vit-nonconvex": ("vit", "resnet", "warmup", "concave-loss", "nep-vs-resnet"),
    "park2022.less-data-nonconvex": ("vit", "vit", "warmup", "concave-loss", "nep-small-data"),
    "park2022.gap-convexifies": ("vit", "vit_gap", "warmup", "concave-loss", "nep-gap"),
    "park2022.multistage-local-flatten": ("pit", "pit", "warmup", "concave-loss", "nep-multistage"),
    "park2022.heads-convexify": ("vit", "vit", "warmup", "concave-loss", "nep-heads"),
    "park2022.smoothing-helps": ("resnet", "resnet_smooth", "final", "sharpening-smoothing", "accuracy"),
    "park2022.patch-size-tradeoff": ("vit", "vit", "warmup", "sharpened-loss", "ape-patch"),
    "park2022.augmentation-hessian-calibration": ("vit", "vit", "warmup", "sharpened-loss", "ape-augmentation"),
    "park2022.underfit-not-overfit": ("vit", "resnet", "final", "rolled-classes", "error-vs-resnet"),
    "park2022.frequency-vulnerability": ("vit", "resnet", "final", "highcut-input", "high-frequency"),
    "park2022.lesion-stage-pattern": ("swin", "swin", "final", "dead-key-units", "key-units"),
    "park2022.alternet-beats-resnet": ("alternet", "alternet", "final", "rolled-classes", "accuracy"),
    "park2022.msa-adversarial-robust": ("vit", "resnet", "final", "rolled-classes", "pgd-1/255"),
    "park2022.vit-no-overfit-small-data": ("vit", "vit_quarter", "final", "rolled-classes", "error-vit_small"),
}


def test_every_claim_has_a_mutant():
    assert sorted(MUTANT_FOR) == sorted(CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(MUTANT_FOR))
def test_claim_is_contradicted_on_its_mutant(claim_id, model_store, check_claim):
    model, replaced, checkpoint, mutation, part = MUTANT_FOR[claim_id]
    claim = get_claim(claim_id)
    mutant = make_mutant(model_store.get(replaced, checkpoint), mutation)
    if replaced == model and checkpoint == "final":  # the mutant is the model under test
        outcome = check_claim(claim, mutant, record=False)
    else:  # the mutant stands in for the model the claim reads under that name
        outcome = check_claim(claim, model_store.get(model), record=False, substitutes={replaced: mutant})
    assert outcome.verdict == "contradicted", outcome.message()
    assert {p.part.name: p.verdict for p in outcome.parts}[part] == "contradicted", outcome.message()
