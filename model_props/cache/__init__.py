"""The on-disk cache: files, entries and the source hashes that key them.

Owns where the cache lives (:func:`default_cache_dir`), kill-safe file writes and per-entry locks
(:mod:`.files`), the one entry protocol that the model and the measurement caches share (:mod:`.entry`), and
source hashes taken from the import closure of the code that computed an entry (:mod:`.source`).

May import: :mod:`model_props.errors` and :mod:`model_props.provenance` only (the foundation layer).
"""

from .entry import CacheEntry
from .files import atomic_write, default_cache_dir, entry_lock, sha256_file
from .source import import_closure, source_hash

__all__ = [
    "CacheEntry",
    "atomic_write",
    "default_cache_dir",
    "entry_lock",
    "sha256_file",
    "import_closure",
    "source_hash",
]
__not_in_cache_keys__ = "re-exports the cache's storage; computes no cached value"
