"""How a report is stored in the measurement cache: one ``.npz`` of its arrays per entry (no pickles), written
and verified through the shared entry protocol (:class:`~model_props.cache.CacheEntry`)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..cache import CacheEntry

__all__ = ["report_entry", "save_report", "load_report"]


def report_entry(cache_dir: Path, kind: str, key: str) -> CacheEntry:
    return CacheEntry(cache_dir / "measurements" / kind, key, {"report": "report.npz"})


def save_report(report: Any) -> Callable[[Path], None]:
    """A writer of ``report.to_arrays()`` as an ``.npz``, for :meth:`CacheEntry.write`."""

    def save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **report.to_arrays())

    return save


def load_report(entry: CacheEntry, report_class: Any, units: Any) -> Any:
    """The cached report (``report_class.from_arrays``), or None if the entry is absent, damaged or does not fit."""
    if entry.read("report") is None:
        return None
    try:
        with np.load(io.BytesIO(entry.path("report").read_bytes()), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        return report_class.from_arrays(arrays, units)
    except (OSError, ValueError, KeyError):
        return None
