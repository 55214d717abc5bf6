"""The published claims as tests: one test per (claim, model under test), generated from the catalogue.

The claim, its units and decision rules live in ``model_props.claims``. A verdict says what it is about: the
references are judged over the training seeds of the profile's seed study (architecture scope), and every part
must have the verdict the reviewed expectation snapshot holds for it (``<profile>-expectations.json``; a
difference fails, naming the part and the command that updates the snapshot); a model of yours over its
checkpoints when you give three or more (``--checkpoint='runs/seed*.safetensors'``), else about the one set of
weights you give, and it must be supported. Where the snapshot holds a part contradicted at this scale, the test
is a strict ``xfail(raises=ClaimContradicted)``: any other error still fails it. A claim found inconclusive is
reported as INCONCLUSIVE, its own outcome, never as passed.
"""

from model_props.claims import get_claim

__all__ = ["test_claim"]


def test_claim(claim_id, model_under_test, assert_claim):
    assert_claim(get_claim(claim_id), model_under_test)
