"""Claim figures kept in the cache: a warm run attaches the PNG drawn before instead of drawing it again (matplotlib
takes about 0.4 s a figure, a third of a warm claim test's time).

The key covers everything :func:`~.figures.figure_png` draws from: the drawing code's import closure and the hashed
library versions (:func:`~model_props.cache.source_hash`), matplotlib's version, the claim's id and measurement, the
model's label, and every report it is given by (label, kind, checkpoint): its arrays and units
(:func:`~model_props.cache.digest.update_with_report`), the whole of what the figure draws.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ..cache import CacheEntry, source_hash
from ..cache.digest import update_with_report
from ..errors import CacheError
from .figures import figure_png

__all__ = ["figure_key", "cached_figure_png"]


def figure_key(claim: Any, model: str, reports: Mapping[tuple[str, str, str], Any]) -> str:
    """32 hex digits of sha256 over what the figure of ``claim`` on ``model`` is drawn from."""
    h = hashlib.sha256(f"{source_hash(__name__)}|matplotlib={metadata.version('matplotlib')}".encode())
    h.update(f"\0{claim.id}\0{claim.measurement}\0{model}\0".encode())
    for label, kind, checkpoint in sorted(reports):
        update_with_report(h, f"{label}|{kind}|{checkpoint}", reports[label, kind, checkpoint])
    return h.hexdigest()[:32]


def cached_figure_png(cache_dir: Path, claim: Any, model: str, reports: Mapping[tuple[str, str, str], Any]) -> bytes:
    """The claim's figure from the cache's ``figures/`` folder, drawn and stored there when absent or damaged. A
    cache that cannot be written still gets the figure drawn (a figure is never a reason to fail a claim test)."""
    entry = CacheEntry(cache_dir / "figures", figure_key(claim, model, reports), {"png": "figure.png"})
    if entry.read("png") is not None:
        return entry.path("png").read_bytes()
    png = figure_png(claim, model, reports)

    def write(path: Path) -> None:
        path.write_bytes(png)

    try:
        entry.write({"png": write}, {"claim": claim.id, "model": model}, device="cpu")
    except CacheError:
        pass
    return png
