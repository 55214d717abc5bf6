"""The published claims as tests: one test per (claim, model), generated from the catalogue.

The claim, its units and decision rules live in ``model_props.claims``; the verdict is *supported* only
when every applicable part's bootstrap interval excludes the null on the claimed side. Findings known not
to replicate at a profile's scale are strict xfails whose reasons live in the claim's ``known_failures``.
"""
from model_props.claims import get_claim


def test_claim(claim_id, model_under_test, check_claim):
    outcome = check_claim(get_claim(claim_id), model_under_test)
    assert outcome.verdict == "supported", outcome.message()
