"""The cache-entry protocol shared by the model cache and the measurement cache.

An entry is a set of data files, each with a role (``"final"``, ``"warmup"``, ``"report"``), and one JSON
sidecar that lists them with their sha256 and carries the entry's metadata. Writers hold the entry's lock,
write every data file atomically (temporary file, fsync, rename), then the sidecar last: a reader that finds
a sidecar finds the files it lists. Readers verify each file they need against the sidecar's sha256; a
missing, unparsable or disagreeing entry reads as absent and is built again, under the same lock, so that
two processes build an entry once and a killed writer leaves nothing loadable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CacheError
from .files import atomic_write, entry_lock, sha256_file

__all__ = ["CacheEntry"]

FILES = "files"  # the sidecar key of the {role: {"file": name, "sha256": hex}} listing


@dataclass(frozen=True)
class CacheEntry:
    """``folder/<key>.json`` and its data files ``folder/<key><suffix>`` per role."""

    folder: Path
    key: str
    suffixes: Mapping[str, str]  # role -> file name suffix, e.g. {"final": ".final.safetensors"}

    @property
    def sidecar(self) -> Path:
        return self.folder / f"{self.key}.json"

    def path(self, role: str) -> Path:
        return self.folder / f"{self.key}{self.suffixes[role]}"

    @property
    def paths(self) -> dict[str, Path]:
        return {role: self.path(role) for role in self.suffixes}

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the entry's inter-process lock (read, decide, write under it)."""
        with entry_lock(self.sidecar):
            yield

    def read(self, *roles: str) -> dict[str, Any] | None:
        """The sidecar's metadata if it parses and each of ``roles`` has a file whose sha256 it records; else None."""
        try:
            meta = json.loads(self.sidecar.read_text())
            listed = meta[FILES]
            for role in roles:
                path = self.path(role)
                if not path.is_file() or listed[role]["sha256"] != sha256_file(path):
                    return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return meta if isinstance(meta, dict) else None

    def sha256(self, meta: Mapping[str, Any], role: str) -> str:
        return str(meta[FILES][role]["sha256"])

    def write(self, writers: Mapping[str, Callable[[Path], None]], meta: Mapping[str, Any]) -> dict[str, Any]:
        """Write each role's file with ``writers[role](tmp_path)``, then the sidecar: ``meta`` plus the listing.

        Call it under :meth:`locked`. Roles written earlier and not rewritten now are dropped from the listing."""
        listed: dict[str, dict[str, str]] = {}
        try:
            for role, write in writers.items():
                path = self.path(role)
                atomic_write(path, write)
                listed[role] = {"file": path.name, "sha256": sha256_file(path)}
            full = {**meta, FILES: listed}
            atomic_write(self.sidecar, lambda tmp: tmp.write_text(json.dumps(full, indent=2, sort_keys=True)))
        except OSError as exc:
            raise CacheError(f"cannot write cache entry {str(self.sidecar)!r}: {exc}") from exc
        return full
