"""Every claim can fail: on a mutant where the claim is false by construction, it is not supported."""
import pytest

from model_props.claims import CLAIMS, get_claim
from model_props.mutants import make_mutant

# claim id -> (reference it mutates, mutation, the part the mutation reverses).
MUTANT_FOR = {
    "park2022.msa-lowpass": ("vit", "highpass-attention", "msa-later-half"),
    "park2022.conv-mlp-highpass": ("resnet", "blur-convs", "conv-mlp"),
    "park2022.msa-reduces-variance": ("vit", "highpass-attention", "msa"),
    "park2022.multistage-block-cka": ("vit", "scrambled-mlps", "uniform-vs-resnet"),
    "raghu2021.skip-dominates": ("vit", "amplified-branches", "vs-resnet"),
    "raghu2021.attention-distance-grows": ("vit", "inverted-attention-distance", "distance-grows"),
}


def test_every_claim_has_a_mutant():
    assert sorted(MUTANT_FOR) == sorted(CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(MUTANT_FOR))
def test_claim_is_contradicted_on_its_mutant(claim_id, reference_model, check_claim):
    base, mutation, part = MUTANT_FOR[claim_id]
    mutant = make_mutant(reference_model(base), mutation)
    outcome = check_claim(get_claim(claim_id), mutant, record=False)
    assert outcome.verdict == "contradicted", outcome.message()
    assert {p.part.name: p.verdict for p in outcome.parts}[part] == "contradicted", outcome.message()
