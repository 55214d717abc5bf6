"""Content digests of measurement reports, for the keys of what is computed from them (figures, estimates)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["update_with_report"]
__not_in_cache_keys__ = "feeds bytes to a hash; computes no cached value"


def update_with_report(h: Any, label: str, report: Any) -> None:
    """Feed ``report`` to the hash ``h``: its type, its arrays (``to_arrays``, as the measurement cache stores them)
    and the repr of each of its units, the whole of what a cached report is rebuilt from (``from_arrays``)."""
    h.update(f"\0report|{label}|{type(report).__qualname__}\0".encode())
    for name, array in sorted(report.to_arrays().items()):
        array = np.ascontiguousarray(array)
        h.update(f"{name}|{array.dtype.str}|{array.shape}\0".encode())
        h.update(array.tobytes())
    for unit in getattr(report, "units", None) or ():
        h.update(f"unit|{unit!r}\0".encode())
