"""The cache-entry protocol shared by the model cache and the measurement cache, safe on a shared filesystem.

An entry is a directory ``folder/<name>/`` holding data files, each with a role (``"final"``, ``"warmup"``,
``"report"``), and ``manifest.json``: their sha256, the entry's metadata and who produced it (host, process,
device). A writer builds the whole entry in a hidden temporary directory beside it and publishes it with one
``os.rename``, which is atomic on a POSIX filesystem (NFS, Lustre and GPFS included); a published entry is never
written again. So a reader sees either no entry or a complete one, never files of two writers mixed; of two
workers racing to publish the same entry, the first rename wins and the second finds the directory taken,
discards its own copy and reads the winner's, so both converge on one valid entry. A damaged entry (a file
that disagrees with the manifest) reads as absent and is replaced by the next writer. A killed writer leaves
only its hidden temporary directory, which no reader opens and the next writer of the entry sweeps away.

The per-entry lock (:func:`~model_props.cache.files.entry_lock`) only saves work (two processes on one host
do not compute an entry twice); correctness does not depend on it, since file locks are not reliable on
every shared filesystem.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CacheError
from .files import LOCK_TIMEOUT_S, entry_lock, fsync, make_shared, sha256_file

__all__ = ["CacheEntry"]
__not_in_cache_keys__ = "stores and verifies entries; computes no cached value"

MANIFEST = "manifest.json"
FILES = "files"  # the manifest key of the {role: {"file": name, "sha256": hex}} listing
PRODUCER = "produced_by"  # the manifest key of {host, pid, device}


def _producer(device: str) -> dict[str, Any]:
    """Who produces an entry: this host, this process and the torch device it computes on."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "device": device}


@dataclass(frozen=True)
class CacheEntry:
    """The entry ``folder/<name>/`` with one file per role, ``files[role]`` naming it."""

    folder: Path
    name: str
    files: Mapping[str, str]  # role -> file name inside the entry, e.g. {"final": "final.safetensors"}

    @property
    def directory(self) -> Path:
        return self.folder / self.name

    @property
    def manifest(self) -> Path:
        return self.directory / MANIFEST

    def path(self, role: str) -> Path:
        return self.directory / self.files[role]

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the entry's inter-process lock (read, decide, write under it)."""
        with entry_lock(self.folder / self.name):
            yield

    def read(self, *roles: str) -> dict[str, Any] | None:
        """The manifest if it parses and each of ``roles`` has a file whose sha256 it records; else None. A damaged
        entry (an unreadable manifest, a listed file missing or not matching its sha256) also says so in one line
        on stderr, since what reads it as absent recomputes it."""
        if not self.manifest.is_file():
            return None
        try:
            meta = json.loads(self.manifest.read_text())
            listed = meta[FILES]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _damaged(self, f"its manifest is unreadable: {type(exc).__name__}")
            return None
        for role in roles:
            if not isinstance(listed, dict) or role not in listed:
                return None  # not written with this role (e.g. a run trained only to warm-up): absent, not damaged
            path = self.directory / str(listed[role].get("file"))
            if not path.is_file():
                _damaged(self, f"{path.name} is missing")
                return None
            if listed[role].get("sha256") != sha256_file(path):
                _damaged(self, f"{path.name} does not match its sha256")
                return None
        return meta if isinstance(meta, dict) else None

    def sha256(self, meta: Mapping[str, Any], role: str) -> str:
        return str(meta[FILES][role]["sha256"])

    def write(
        self, writers: Mapping[str, Callable[[Path], None]], meta: Mapping[str, Any], *, device: str
    ) -> dict[str, Any]:
        """Build the entry (each role's file with ``writers[role](path)``, then the manifest: ``meta``, the
        listing and the producer) in a temporary directory and publish it; the manifest of the published entry,
        which is another writer's if that one published first."""
        self._sweep()
        tmp = self.folder / f".{self.name}~{socket.gethostname()}~{os.getpid()}~{uuid.uuid4().hex[:8]}.tmp"
        try:
            tmp.mkdir(parents=True)
            listed: dict[str, dict[str, str]] = {}
            for role, write in writers.items():
                path = tmp / self.files[role]
                write(path)
                fsync(path)
                listed[role] = {"file": path.name, "sha256": sha256_file(path)}
            full = {**meta, FILES: listed, PRODUCER: _producer(device)}
            (tmp / MANIFEST).write_text(json.dumps(full, indent=2, sort_keys=True))
            fsync(tmp / MANIFEST)
            for path in tmp.iterdir():
                make_shared(path)
            make_shared(tmp, directory=True)
            return self._publish(tmp, tuple(writers)) or full
        except OSError as exc:
            raise CacheError(f"cannot write cache entry {str(self.directory)!r}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _publish(self, tmp: Path, roles: tuple[str, ...]) -> dict[str, Any] | None:
        """Rename ``tmp`` to the entry; None when ours is published, else the manifest of the entry already there."""
        for _ in range(3):
            try:
                os.rename(tmp, self.directory)
                return None
            except OSError:  # the directory exists: another writer's entry, or a damaged one
                if not self.directory.exists():
                    raise
            if (theirs := self.read(*roles)) is not None:
                return theirs
            aside = self.folder / f".{self.name}~damaged~{uuid.uuid4().hex[:8]}.tmp"
            try:
                os.rename(self.directory, aside)  # then publish ours in its place
            except FileNotFoundError:
                continue  # another writer moved it first
            shutil.rmtree(aside, ignore_errors=True)
        raise CacheError(f"cache entry {str(self.directory)!r} keeps changing under this writer")

    def _sweep(self) -> None:
        """Remove temporary directories of this entry that no live writer owns: its own host's with a dead pid,
        or any older than the lock timeout (a writer on another host has died, or its filesystem lost it)."""
        host = socket.gethostname()
        for stale in self.folder.glob(f".{self.name}~*.tmp"):
            owner, pid = (stale.name[len(self.name) + 2 : -len(".tmp")].split("~") + ["", ""])[:2]
            try:
                dead = owner == "damaged" or (owner == host and not _alive(int(pid)))
                if dead or time.time() - stale.stat().st_mtime > LOCK_TIMEOUT_S:
                    shutil.rmtree(stale, ignore_errors=True)
            except (ValueError, OSError):
                continue


_REPORTED: set[Path] = set()


def _damaged(entry: CacheEntry, why: str) -> None:
    """Say once per process that ``entry`` is damaged and will be rebuilt (it then reads as absent)."""
    if entry.directory not in _REPORTED:
        _REPORTED.add(entry.directory)
        print(f"model-props: the cache entry {entry.directory} is damaged ({why}); rebuilding it", file=sys.stderr)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
