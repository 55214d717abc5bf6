"""Anatomy: every model as an ordered list of units (embed / msa / mlp / conv / subsample / head).

Owns the unit model (:mod:`.model`), the traced forward pass that records what modules do (:mod:`.tracer`,
:mod:`.records`), the rule that maps it to units (:mod:`.mapping`), reading taps and capturing every unit's
tensors in one pass (:mod:`.taps`, :mod:`.attention`, :mod:`.capture`) and the coverage check over timm's
architectures (:mod:`.coverage`).

May import: :mod:`model_props.zoo` and the foundation (:mod:`model_props.errors`, :mod:`model_props.provenance`).
"""

from .capture import Capture, capture
from .mapping import anatomy
from .model import TRAITS, Anatomy, Tap, Unit, UnitKind
from .taps import resolve_module, to_map
from .tracer import device_of

__all__ = [
    "Anatomy",
    "Tap",
    "Unit",
    "UnitKind",
    "TRAITS",
    "anatomy",
    "Capture",
    "capture",
    "to_map",
    "resolve_module",
    "device_of",
]
