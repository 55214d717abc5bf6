"""The release gate's tolerances: the candidate is not worse than the baseline beyond each tolerance.

One test per entry of ``[tool.model_props.gate.tolerances]`` (marked ``gate``); the gating claims themselves
run in ``test_claims.py``. See ``model_props.gate``.
"""

__all__ = ["test_gate_tolerance"]


def test_gate_tolerance(gate_statistic, gate_check):
    outcome = gate_check(gate_statistic)
    assert outcome.passed, outcome.message
