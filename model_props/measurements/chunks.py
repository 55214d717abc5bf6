"""Reports measured in chunks: each chunk of a report's seeded order of sampling units is its own measurement-cache
entry, so that a report on the first n units reuses every chunk an earlier report measured and a longer one goes on
from them. That is what lets a sequential verdict (:mod:`model_props.verdicts.sequential`) measure look by look, and
two kinds that measure the same thing on different sample sizes (``attack`` and ``attack_test``) share their images.

A chunk's key is its model's report key (:func:`~.registry.measurement_key`'s fields less the kind's sample-size
settings) and the chunk's own label (its index, size and what else it is measured with, e.g. the eps); the entry
holds one ``.npy`` array and a manifest with the seconds it took, like a whole report's. :func:`in_chunks` is the
loop every chunked kind measures with; :func:`chunk_size` sizes the chunks of a kind whose sample is its own (noise,
corruptions, occlusion).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..cache import CacheEntry

__all__ = ["LOOKS", "Chunks", "computed", "cached_chunks", "chunk_size", "in_chunks"]

# the looks of a sequential verdict over a whole sample (fixed at design time: model_props.verdicts.sequential)
LOOKS = 8

# (label, compute) -> the chunk's array: recalled from the cache, or computed (and kept)
Chunks = Callable[[dict[str, Any], Callable[[], np.ndarray]], np.ndarray]

# chunks measured again in this process (``remeasure``), by folder and name: a sequential verdict asks for its first
# chunks again at every look, and a published entry is never rewritten, so each is measured again only once
_REMEASURED: dict[tuple[str, str], np.ndarray] = {}


def computed(label: dict[str, Any], compute: Callable[[], np.ndarray]) -> np.ndarray:
    """Keep no chunk: compute each one (a model without an identity, or no cache)."""
    return compute()


def _load(entry: CacheEntry) -> np.ndarray | None:
    if entry.read("chunk") is None:
        return None
    try:
        return np.load(io.BytesIO(entry.path("chunk").read_bytes()), allow_pickle=False)
    except (OSError, ValueError):
        return None


def cached_chunks(
    cache_dir: Path, folder: str, key: Mapping[str, Any], meta: Mapping[str, Any], *, device: str, remeasure: bool
) -> Chunks:
    """Chunks kept under ``<cache_dir>/measurements/<folder>/``, keyed by ``key`` and each chunk's label;
    ``remeasure`` computes each chunk again, once a process (and replaces its entry's use in this process only: a
    published entry is never rewritten, so a remeasured chunk reads the same seeded images and draws)."""

    def get(label: dict[str, Any], compute: Callable[[], np.ndarray]) -> np.ndarray:
        name = hashlib.sha256(json.dumps({**key, "chunk": label}, sort_keys=True).encode()).hexdigest()[:20]
        if remeasure and (folder, name) in _REMEASURED:
            return _REMEASURED[folder, name]
        entry = CacheEntry(cache_dir / "measurements" / folder, name, {"chunk": "chunk.npy"})
        with entry.locked():
            if not remeasure and (found := _load(entry)) is not None:
                return found
            start = time.perf_counter()
            array = compute()

            def save(tmp: Path) -> None:
                with open(tmp, "wb") as fh:
                    np.save(fh, array, allow_pickle=False)

            entry.write({"chunk": save}, {**meta, "chunk": label, "seconds": round(time.perf_counter() - start, 2)},
                        device=device)  # fmt: skip
            if remeasure:
                _REMEASURED[folder, name] = array
            return array

    return get


def chunk_size(whole: int) -> int:
    """Units a chunk of a seeded sample of ``whole`` units: a look's worth of a sequential verdict over it (an eighth,
    rounded up), so that a look measures at most one chunk beyond what it reads, whatever the sample's size."""
    return max(1, -(-whole // LOOKS))


def in_chunks(order: Any, n: int, size: int, label: Mapping[str, Any], compute: Callable[[int, Any], np.ndarray],
              chunks: Chunks) -> np.ndarray:  # fmt: skip
    """The first ``n`` rows of a report measured in chunks of ``size`` units of a seeded ``order`` (unit indices):
    chunk j is ``compute(j, order[j * size : (j + 1) * size])``, kept or recalled by ``chunks`` under ``label`` with
    its index and size, so the rows of chunk j never depend on ``n``."""
    parts = [
        chunks(
            {**label, "chunk": j, "chunk_images": size}, functools.partial(compute, j, order[j * size : (j + 1) * size])
        )
        for j in range(-(-n // size))
    ]
    return np.concatenate(parts)[:n]
