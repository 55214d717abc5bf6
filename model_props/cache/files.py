"""Cache files: where the cache lives, atomic writes, and one lock per entry.

Writers go through :func:`atomic_write` (temp file in the same directory, fsync, ``os.replace``) so a
reader never sees a half-written file, and through :func:`entry_lock` so two pytest-xdist workers never
build the same entry twice. Readers verify what they load (a checksum, or a parse) and rebuild on failure.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from ..errors import CacheError

__all__ = ["default_cache_dir", "atomic_write", "entry_lock", "fsync", "make_shared", "sha256_file"]
__not_in_cache_keys__ = "writes, locks and hashes files; computes no cached value"

_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)  # a cache this process cannot write
LOCK_TIMEOUT_S = 3600.0  # a cold training run of one model holds its lock for minutes, never an hour


def default_cache_dir() -> Path:
    """``$MODEL_PROPS_CACHE`` if set, else ``$XDG_CACHE_HOME/model-props`` (``~/.cache/model-props``)."""
    if env := os.environ.get("MODEL_PROPS_CACHE"):
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "model-props"


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place.

    Call it under the entry's :func:`entry_lock`: it first deletes the temporaries a killed writer of the same
    entry left behind (no other writer can be at work)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        if exc.errno not in _READ_ONLY:
            raise
        raise CacheError(f"the cache {str(path.parent)!r} is read-only and lacks {path.name}: give a writable "
                         "--claims-cache, or warm this one where it is writable first") from None  # fmt: skip
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        fsync(tmp)
        make_shared(tmp)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fsync(path: Path) -> None:
    """Flush a written file to the disk (before it is renamed into place)."""
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def make_shared(path: Path, *, directory: bool = False) -> None:
    """Give ``path`` the mode a new file (``0o666``) or folder (``0o777``) gets under the umask: temporary
    files and folders are created private, and a cache is shared like any other file."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if directory else 0o666) & ~mask)


@contextmanager
def entry_lock(path: Path) -> Iterator[None]:
    """Hold an inter-process lock on the cache entry ``path`` (lock file ``path.lock``). In a cache this process
    cannot write (a read-only mount of a warm cache) no lock is taken: the lock only saves work, and what is there is
    read as it is; an entry that would have to be written fails there with :class:`CacheError` saying so."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheError(f"cache directory {str(path.parent)!r} cannot be created: {exc}") from exc
    lock = FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S)
    try:
        lock.acquire()
    except OSError as exc:
        if exc.errno not in _READ_ONLY:
            raise
        yield  # nothing can be written here, so there is no writer to wait for
        return
    try:
        yield
    finally:
        lock.release()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
