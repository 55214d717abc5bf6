"""Verdicts: the one home of how a claim is judged (design: the verdict says what it is about).

Owns the statistics (:mod:`.stats`: bootstrap and t intervals, decisions, Holm, prediction intervals, minimum
detectable effects; simulated studies of known variance that check the intervals' coverage, :mod:`.coverage`), the
evidence a claim is judged on (:mod:`.evidence`) and the judge, a pure function of it (:mod:`.judge`, which also
puts together a test's whole verdict; a part on one checkpoint's reports, and the loop that gathers a sequential
part's looks: :mod:`.checkpoint`), what a test makes of the outcome (:mod:`.outcome`), the rule that picks a
verdict's scope (:mod:`.scope`), the seed study read back as evidence (:mod:`.study`), the reviewed expectation
snapshot the claim tests assert (:mod:`.snapshot`) and the reproduction of the study by a live run
(:mod:`.reproduction`: what it checks, :mod:`.family`; each check, :mod:`.live_check`, on its statistic's scale,
:mod:`.scales`; the omnibus, :mod:`.omnibus`).

May import: :mod:`model_props.claims` (the catalogue, as data) and the layers beneath it; never the session, the
plugin or the reporting, which gather the evidence and show the verdicts.
"""

from .checkpoint import gather_looks, look_sizes, next_look
from .evidence import AgainstSeeds, Evidence, Measured, OnLooks, OnReports, PerSeed, Skipped, point_value
from .judge import TestVerdict, judge
from .outcome import (
    ClaimContradicted,
    ClaimInconclusive,
    ClaimOutcome,
    ExpectationMismatch,
    Expected,
    PartOutcome,
)

__all__ = [
    "Evidence", "Measured", "OnReports", "OnLooks", "AgainstSeeds", "PerSeed", "Skipped", "point_value", "judge", "look_sizes", "next_look", "gather_looks", "TestVerdict", "ClaimContradicted",
    "ClaimInconclusive", "ClaimOutcome", "ExpectationMismatch", "Expected", "PartOutcome",
]  # fmt: skip
