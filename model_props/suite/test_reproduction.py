"""This machine's live seed would move no committed verdict: a reference's family (the reference and the variants
this session trains live), trained here with the profile's live seed (which no study holds), is checked against the
seed study on every statistic a committed verdict reads, one-sided in the direction that would move the expectation
snapshot's verdict of its part (both ways for an inconclusive one), each on its natural scale, with an omnibus over
the one-sided ones for a broad shift towards the verdicts (Holm within a reference, 5 % family-wise over the
run's references); a live estimate undefined where the study's is defined fails. A check recorded as a known
discrepancy of this very draw (the recipe's fingerprint and the live seed, ``<profile>-discrepancies.json``) makes
the test a strict expected failure, which any other failed check, or the known one passing, turns into a failure.
Each reference's claim tests carry the checks of their own parts."""

import pytest

from model_props.verdicts.reproduction import ReproductionDiscrepancy

__all__ = ["test_reproduces_the_seed_study"]


def test_reproduces_the_seed_study(reproduction, request):
    if reproduction.known:
        why = "; ".join(f"{k.statistic}: {k.why}" for k in reproduction.known)
        request.applymarker(pytest.mark.xfail(strict=True, raises=ReproductionDiscrepancy, reason=why))
    reproduction.assert_reproduced()
