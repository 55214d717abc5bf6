"""The seed study: expectations and floors derived from it, and a committed study that matches the catalogue."""

from __future__ import annotations

import pytest

from model_props.claims import get_claim, list_claims
from model_props.claims.expectations import FLOOR_MARGIN, SeedStudy, load_study
from model_props.training.profiles import load_profile

CLAIM = get_claim("park2022.msa-lowpass")


def part(verdict: str, value: float) -> dict:
    return {"part": "msa-later-half", "verdict": verdict, "value": value, "interval": [value - 0.01, value + 0.01]}


def study(verdicts: list[str], fingerprint: str | None = None) -> SeedStudy:
    records = [
        {"seed": s, "verdict": v, "parts": [part(v, 0.1 if v == "supported" else -0.1)]} for s, v in enumerate(verdicts)
    ]
    vit = load_profile("smoke").recipes["vit"]
    return SeedStudy.from_json(
        {
            "profile": "smoke",
            "seeds": list(range(len(verdicts))),
            "recipes": {"vit": {"fingerprint": vit.fingerprint(), "test_accuracy": [0.80, 0.78, 0.82]}},
            "claims": {CLAIM.id: {"fingerprint": fingerprint or CLAIM.fingerprint(), "models": {"vit": records}}},
        }
    )


def test_supported_on_every_seed_must_pass():
    exp = study(["supported"] * 3).expectation(CLAIM, "vit")
    assert exp.kind == "pass" and exp.tally == (3, 3)


def test_contradicted_on_every_seed_is_a_known_failure_citing_the_paper_and_the_numbers():
    exp = study(["contradicted"] * 3).expectation(CLAIM, "vit")
    assert exp.kind == "known-failure" and exp.tally == (0, 3)
    assert exp.reason.startswith(CLAIM.evidence)
    assert (
        "contradicted on every seed" in exp.reason
        and "seed 2 contradicted, [msa-later-half] contradicted -0.1" in exp.reason
    )


@pytest.mark.parametrize(
    "verdicts",
    [
        ["supported", "contradicted", "supported"],
        ["contradicted", "inconclusive", "contradicted"],
        ["inconclusive"] * 3,
    ],
)
def test_anything_else_is_seed_dependent_with_the_tally(verdicts):
    """An inconclusive seed sits on the threshold: it never backs a strict mark."""
    exp = study(verdicts).expectation(CLAIM, "vit")
    k = verdicts.count("supported")
    assert exp.kind == "seed-dependent" and exp.tally == (k, 3)
    assert f"supported on {k} of 3 seeds" in exp.reason


def test_a_study_under_other_rules_or_of_another_model_says_nothing():
    assert study(["contradicted"] * 3, fingerprint="stale").expectation(CLAIM, "vit") is None
    assert study(["contradicted"] * 3).expectation(CLAIM, "pit") is None
    assert study(["contradicted"] * 3).expectation(get_claim("park2022.conv-mlp-highpass"), "vit") is None


def test_floor_sits_below_the_worst_seed_by_the_margin():
    s = study(["supported"] * 3)
    profile = load_profile("smoke")
    assert s.floor(profile.recipes["vit"]) == pytest.approx(0.78 - FLOOR_MARGIN)
    assert s.floor(profile.recipes["pit"]) is None
    import dataclasses

    assert s.floor(dataclasses.replace(profile.recipes["vit"], lr=0.5)) is None, "a changed recipe has no floor"


def test_the_committed_smoke_study_covers_the_current_recipes_and_claims():
    """Rerun ``model-props seed-study`` when a recipe or a claim changes: this test names what is stale."""
    committed = load_study("smoke")
    assert committed is not None, "fixtures/smoke-seeds.json is missing"
    assert len(committed.seeds) >= 3
    profile = load_profile("smoke")
    stale_recipes = [
        n
        for n in profile.references + profile.variants
        if committed.recipes.get(n, {}).get("fingerprint") != profile.recipes[n].fingerprint()
    ]
    stale_claims = [c.id for c in list_claims() if committed.claims.get(c.id, {}).get("fingerprint") != c.fingerprint()]
    assert not stale_recipes and not stale_claims, (
        f"rerun the seed study: recipes {stale_recipes}, claims {stale_claims}"
    )
    for claim in list_claims():
        for model in profile.references:
            records = committed.claims[claim.id]["models"].get(model)
            assert records is None or len(records) == len(committed.seeds), (claim.id, model)
