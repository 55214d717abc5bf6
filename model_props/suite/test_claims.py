"""The published claims as tests: one test per (claim, model under test), generated from the catalogue.

The claim, its units and decision rules live in ``model_props.claims``; the verdict is *supported* only
when every applicable part's bootstrap interval excludes the null on the claimed side. Where the profile's
seed study found a claim not to replicate on a reference (or to depend on the training seed), the plugin
marks that test as an expected failure, with the paper's evidence and the per-seed numbers as the reason.
"""

from model_props.claims import get_claim

__all__ = ["test_claim"]


def test_claim(claim_id, model_under_test, check_claim):
    outcome = check_claim(get_claim(claim_id), model_under_test)
    assert outcome.verdict == "supported", outcome.message()
