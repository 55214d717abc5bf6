"""Checkpoint-scope bootstraps kept in the cache: a warm run reads the estimate it computed before instead of
resampling again (2,000 resamples of a statistic written in Python take 0.05-0.3 s a part, two thirds of a warm
claim test's time).

A bootstrap is a deterministic function of the statistic's code, the reports it reads and the resampling (level,
seed, number of resamples, one / paired / two-sample), and the key covers each: the import closure of the claim's
catalogue module, of the evaluation and of this module (:func:`~model_props.cache.source_hash`), the claim and part,
and every report's arrays (``to_arrays``, as the measurement cache stores them) and units, the whole of what a
report is rebuilt from. ``--claims-remeasure`` computes every estimate again and stores it. A claim defined
outside the catalogue is never cached: no module of the catalogue holds its statistic's code.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..cache import CacheEntry, source_hash
from ..cache.digest import update_with_report
from ..claims import SOURCES, Claim
from ..claims.base import Part
from ..claims.evaluation import Memo
from ..claims.stats import Estimate
from ..errors import CacheError

__all__ = ["estimate_key", "estimate_memo"]

_SCALARS = ("value", "low", "high", "level", "n", "dropped")


def estimate_key(claim: Claim, part: Part, reports: tuple[Any, ...], resampling: str) -> str | None:
    """32 hex digits of sha256 over what the bootstrap of ``part`` on ``reports`` is computed from (None for a claim
    outside the catalogue)."""
    if claim.id not in SOURCES:
        return None
    h = hashlib.sha256(source_hash(__name__, "model_props.claims.evaluation", SOURCES[claim.id]).encode())
    h.update(f"\0{claim.id}\0{part.name}\0{resampling}\0".encode())
    for r, report in enumerate(reports):
        update_with_report(h, str(r), report)
    return h.hexdigest()[:32]


def _save(est: Estimate, path: Path) -> None:
    assert est.replicates is not None and est.t is None  # a bootstrap keeps its replicates, never t parameters
    arrays = {k: np.array(getattr(est, k)) for k in _SCALARS}
    arrays.update(replicates=est.replicates, method=np.array(est.method),
                  n_versus=np.array(-1 if est.n_versus is None else est.n_versus))  # fmt: skip
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    path.write_bytes(buffer.getvalue())


def _load(path: Path) -> Estimate:
    with np.load(path, allow_pickle=False) as z:
        n_versus = int(z["n_versus"])
        return Estimate(float(z["value"]), float(z["low"]), float(z["high"]), float(z["level"]), int(z["n"]),
                        str(z["method"]), z["replicates"], dropped=int(z["dropped"]),
                        n_versus=None if n_versus < 0 else n_versus)  # fmt: skip


def estimate_memo(cache_dir: Path, claim: Claim, *, recompute: bool = False) -> Memo:
    """The :data:`~model_props.claims.evaluation.Memo` of ``claim`` over the cache's ``estimates/`` folder: an entry
    that is absent, damaged or unreadable is computed and stored (a cache that cannot be written still gets the
    estimate); ``recompute`` computes every estimate again."""

    def memo(part: Part, reports: tuple[Any, ...], resampling: str, compute: Callable[[], Estimate]) -> Estimate:
        key = estimate_key(claim, part, reports, resampling)
        if key is None:
            return compute()
        entry = CacheEntry(cache_dir / "estimates", key, {"estimate": "estimate.npz"})
        if not recompute and entry.read("estimate") is not None:
            try:
                return _load(entry.path("estimate"))
            except (OSError, ValueError, KeyError):
                pass  # unreadable although its sha256 matched (written by another numpy): compute it again
        est = compute()
        try:
            entry.write({"estimate": lambda path: _save(est, path)}, {"claim": claim.id, "part": part.name},
                        device="cpu")  # fmt: skip
        except CacheError:
            pass
        return est

    return memo
