"""Racing writers of one cache entry (workers of a cluster on a shared filesystem, where file locks may not
hold): each publishes a whole entry with one rename, so readers never see files of two writers mixed and the
writers converge on one valid entry."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from model_props.cache import CacheEntry

ROLES = {"final": "final.bin", "warmup": "warmup.bin"}
ROUNDS = 12


def _writer(folder: str, tag: str, barrier, queue) -> None:
    """Publish the entry with content marked ``tag`` (no lock taken), after all writers reach the barrier."""
    entry = CacheEntry(Path(folder), "key", ROLES)
    writers = {role: (lambda path, role=role: path.write_bytes(f"{tag}:{role}:".encode() * 50_000)) for role in ROLES}
    barrier.wait()
    meta = entry.write(writers, {"writer": tag}, device="cpu")
    queue.put((tag, meta["writer"], {r: f["sha256"] for r, f in meta["files"].items()}))


def _reader(folder: str, barrier, queue) -> None:
    """Read the entry as fast as possible while the writers race; report every state seen."""
    entry = CacheEntry(Path(folder), "key", ROLES)
    barrier.wait()
    seen = set()
    for _ in range(400):
        meta = entry.read("final", "warmup")
        if meta is None:
            seen.add("absent")
            continue
        contents = {entry.path(r).read_bytes()[:2] for r in ROLES}  # b"a:" or b"b:": which writer's file
        seen.add("mixed" if len(contents) != 1 else f"whole {meta['writer']}")
    queue.put(sorted(seen))


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_racing_writers_converge_on_one_whole_entry(tmp_path, round_):
    ctx = mp.get_context("fork")
    barrier, queue, seen = ctx.Barrier(3), ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, barrier, queue)) for tag in "ab"]
    procs.append(ctx.Process(target=_reader, args=(str(tmp_path), barrier, seen)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    results = [queue.get(timeout=5) for _ in "ab"]
    winners = {winner for _, winner, _ in results}
    assert len(winners) == 1, f"the writers returned different entries: {results}"
    assert len({tuple(sorted(shas.items())) for _, _, shas in results}) == 1
    entry = CacheEntry(tmp_path, "key", ROLES)
    meta = entry.read("final", "warmup")
    assert meta is not None and meta["writer"] in winners, "the published entry is the one both writers returned"
    assert {entry.path(r).read_bytes()[:2] for r in ROLES} == {f"{meta['writer']}:".encode()}
    states = seen.get(timeout=5)
    assert "mixed" not in states, f"a reader saw files of two writers: {states}"
    assert set(states) <= {"absent", f"whole {meta['writer']}"}, states
    assert not list(tmp_path.glob(".*.tmp")), "the losing writer's temporary entry is gone"


@pytest.mark.bad_input
def test_a_read_only_cache_is_read_without_a_lock_and_a_write_there_is_one_line(tmp_path, monkeypatch):
    """A warm cache on a read-only mount: reading a dataset took its lock file for writing and failed with 349 lines
    (issue 61). The lock only saves work, so none is taken where nothing can be written; a write there says so."""
    import errno
    import tempfile

    import filelock

    from model_props.cache.files import atomic_write, entry_lock
    from model_props.errors import CacheError

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(filelock.FileLock, "acquire", read_only)
    with entry_lock(tmp_path / "entry"):  # read what is there, without a lock
        pass
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(
        CacheError, match=r"the cache '.*' is read-only and lacks entry: give a writable --claims-cache"
    ):
        atomic_write(tmp_path / "entry", lambda path: path.write_text("x"))
    monkeypatch.setattr(filelock.FileLock, "acquire", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EIO, "I/O")))
    with pytest.raises(OSError, match="I/O"), entry_lock(tmp_path / "entry"):  # any other failure is not hidden
        pass
