"""The release gate: gating claims and non-inferiority tolerances of a candidate against a baseline
(:mod:`.tolerances`; docs/design.md#who-uses-it).

May import: :mod:`model_props.claims` and the layers beneath it.
"""

from .tolerances import GATE_STATISTICS, Gate, GateOutcome, GateStatistic, check_tolerance, read_gate

__all__ = ["GATE_STATISTICS", "Gate", "GateOutcome", "GateStatistic", "check_tolerance", "read_gate"]
