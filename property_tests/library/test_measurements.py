"""The measurement cache: a warm read recomputes nothing, damage is measured again, keys follow every input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from tiny_resnet import tiny_resnet  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.anatomy import anatomy
from model_props.data import class_balanced_subset
from model_props.errors import MeasurementError
from model_props.measurements import registry as measurements
from model_props.measurements.chunks import chunk_size
from model_props.measurements.registry import (
    REPORT_KINDS,
    MeasureInput,
    NotCached,
    chunk_key,
    measure,
    measurement_key,
)
from model_props.training.loss import TrainingLoss
from model_props.training.recipes import MeasurementSettings

SETTINGS = MeasurementSettings(
    n_images=64, batch_size=32, fit_images=64, hessian_batches=2, hessian_batch_size=8, hessian_top_k=2
)


@pytest.fixture(scope="module")
def inp(dataset) -> MeasureInput:
    torch.manual_seed(0)
    model = tiny_resnet().eval()
    return MeasureInput(
        "tiny",
        model,
        anatomy(model),
        "ab" * 32,
        class_balanced_subset(dataset.test, 0.05, seed=0),
        class_balanced_subset(dataset.train, 0.01, seed=0),
        TrainingLoss(),
        dataset.name,
    )


@pytest.fixture
def calls(monkeypatch):
    """Counts the computations behind ``measure`` per kind."""
    counts: dict[str, int] = {}
    for kind, spec in list(REPORT_KINDS.items()):

        def counted(*args, _compute=spec.compute, _kind=kind, **kw):
            counts[_kind] = counts.get(_kind, 0) + 1
            return _compute(*args, **kw)

        monkeypatch.setitem(REPORT_KINDS, kind, dataclasses.replace(spec, compute=counted))
    return counts


@pytest.mark.parametrize("kind", ["units", "fit"])
def test_a_warm_read_recomputes_nothing_and_returns_the_same_numbers(tmp_path, inp, calls, kind):
    first = measure(kind, inp, SETTINGS, seed=0, cache_dir=tmp_path)
    second = measure(kind, inp, SETTINGS, seed=0, cache_dir=tmp_path)
    assert calls == {kind: 1}
    a, b = first.to_arrays(), second.to_arrays()
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
    assert not list(tmp_path.rglob(".*.tmp")), "temporary files left behind"


def test_damaged_entries_are_measured_again_and_remeasure_ignores_the_cache(tmp_path, inp, calls):
    measure("fit", inp, SETTINGS, seed=0, cache_dir=tmp_path)
    (npz,) = tmp_path.rglob("*.npz")
    good = npz.read_bytes()
    npz.write_bytes(good[: len(good) // 2])
    measure("fit", inp, SETTINGS, seed=0, cache_dir=tmp_path)
    assert calls["fit"] == 2 and npz.read_bytes() == good
    (npz.parent / "manifest.json").write_text("{ not json")
    measure("fit", inp, SETTINGS, seed=0, cache_dir=tmp_path)
    assert calls["fit"] == 3
    measure("fit", inp, SETTINGS, seed=0, cache_dir=tmp_path, remeasure=True)
    assert calls["fit"] == 4
    measure("fit", inp, SETTINGS, seed=0, cache_dir=tmp_path)
    assert calls["fit"] == 4


def test_attack_chunks_make_a_shorter_report_a_prefix_of_a_longer_one_and_are_measured_once(tmp_path, inp):
    """``attack`` (the first 70 images at 1 and 2/255) and ``attack_test`` (every image at 1/255) read one set of
    chunks: the same images, eps and random starts; a look (``upto``) measures only its chunks."""
    m = dataclasses.replace(SETTINGS, attack_images=70, attack_epsilons_255=(1, 2), pgd_steps=2)
    entries = lambda: len(list(tmp_path.rglob("manifest.json")))  # noqa: E731
    look = measure("attack", inp, m, seed=3, cache_dir=tmp_path, upto=64)
    assert look.correct.shape == (64, 5) and entries() == 2  # one chunk at each eps
    whole = measure("attack", inp, m, seed=3, cache_dir=tmp_path)
    assert whole.correct.shape == (70, 5) and entries() == 4
    assert np.array_equal(whole.correct[:64], look.correct)
    test = measure("attack_test", inp, m, seed=3, cache_dir=tmp_path)
    assert len(test.correct) == len(inp.test) > 70 and entries() == 2 + -(-len(inp.test) // 64)
    assert np.array_equal(test.correct[:70], whole.correct[:, [0, 1, 3]])  # clean, FGSM and PGD at 1/255
    assert np.array_equal(measure("attack", inp, m, seed=3).correct, whole.correct)  # uncached: the same numbers
    assert not np.array_equal(measure("attack", inp, m, seed=4, upto=64).correct, look.correct)  # another sample
    with pytest.raises(MeasurementError, match=r"kind='fit' is measured whole, not on its first 10 units"):
        measure("fit", inp, m, seed=3, cache_dir=tmp_path, upto=10)


def test_remeasuring_look_by_look_measures_each_chunk_once(tmp_path, inp, monkeypatch):
    """``--claims-remeasure`` ignores the cache; a sequential verdict's later looks still reuse the chunks its earlier
    looks measured again in this process."""
    from model_props.measurements import attack

    calls: list[int] = []
    real = attack._attack_chunk
    monkeypatch.setattr(attack, "_attack_chunk", lambda *a: calls.append(a[-2]) or real(*a))
    m = dataclasses.replace(SETTINGS, attack_images=100, attack_epsilons_255=(1,), pgd_steps=1)
    measure("attack", inp, m, seed=5, cache_dir=tmp_path)
    assert calls == [0, 1]
    first = measure("attack", inp, m, seed=5, cache_dir=tmp_path, upto=64, remeasure=True)
    again = measure("attack", inp, m, seed=5, cache_dir=tmp_path, upto=100, remeasure=True)
    assert calls == [0, 1, 0, 1] and np.array_equal(again.correct[:64], first.correct)


def test_a_cached_only_read_measures_nothing_and_raises_for_any_part_the_cache_lacks(tmp_path, inp, calls):
    """``cached_only`` (what a session reads ahead of its tests, to measure on its workers what the cache lacks): a
    whole report, or a chunked one lacking its last chunk, is refused with :class:`NotCached` and nothing is computed
    or written; once measured, the same numbers are read back; so is a model that is never cached, and
    ``remeasure``."""
    m = dataclasses.replace(SETTINGS, noise_images=len(inp.test))
    entries = lambda: len(list(tmp_path.rglob("manifest.json")))  # noqa: E731
    for kind in ("fit", "noise"):
        with pytest.raises(NotCached):
            measure(kind, inp, m, seed=3, cache_dir=tmp_path, cached_only=True)
    assert calls == {"noise": 1} and entries() == 0  # (noise only asks for its chunks: none is computed)
    measure("noise", inp, m, seed=3, cache_dir=tmp_path, upto=50)  # 4 of its 8 chunks
    with pytest.raises(NotCached):
        measure("noise", inp, m, seed=3, cache_dir=tmp_path, cached_only=True)
    assert entries() == 4
    read = measure("noise", inp, m, seed=3, cache_dir=tmp_path, upto=50, cached_only=True)
    whole = measure("noise", inp, m, seed=3, cache_dir=tmp_path)
    fit = measure("fit", inp, m, seed=3, cache_dir=tmp_path)
    assert entries() == 9
    for measured, cached in [(whole, measure("noise", inp, m, seed=3, cache_dir=tmp_path, cached_only=True)),
                             (fit, measure("fit", inp, m, seed=3, cache_dir=tmp_path, cached_only=True)),
                             (read, measure("noise", inp, m, seed=3, upto=50))]:  # fmt: skip
        a, b = measured.to_arrays(), cached.to_arrays()
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    for never in [dict(cache_dir=None), dict(cache_dir=tmp_path, remeasure=True)]:
        with pytest.raises(NotCached):
            measure("fit", inp, m, seed=3, cached_only=True, **never)
        with pytest.raises(NotCached):
            measure("fit", dataclasses.replace(inp, identity=None), m, seed=3, cache_dir=tmp_path, cached_only=True)
    assert entries() == 9


@pytest.mark.parametrize("kind, setting", [("noise", "noise_images"), ("corruption", "corruption_images"),
                                           ("occlusion", "corruption_images")])  # fmt: skip
def test_chunks_make_a_shorter_report_a_prefix_of_a_longer_one(tmp_path, inp, kind, setting):
    """Noise, corruptions and occlusion: the report on the first 50 images is the first 50 rows of the whole one, over
    several chunks of an eighth of the sample (a look's worth: 13 of the fixture's 100 images), each chunk measured
    once; uncached, the same numbers."""
    m = dataclasses.replace(SETTINGS, **{setting: len(inp.test)})
    assert chunk_size(len(inp.test)) == 13
    look = measure(kind, inp, m, seed=3, cache_dir=tmp_path, upto=50)
    assert len(list(tmp_path.rglob("manifest.json"))) == 4  # 52 images: a look measures less than a chunk beyond it
    whole = measure(kind, inp, m, seed=3, cache_dir=tmp_path)
    assert whole.size("images") == len(inp.test)
    for a, b in zip(whole.to_arrays().values(), look.to_arrays().values()):
        assert np.array_equal(a[:50] if a.ndim else a, b)
    assert len(list(tmp_path.rglob("manifest.json"))) == 8
    uncached = measure(kind, inp, m, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(uncached.to_arrays().values(), whole.to_arrays().values()))


def test_the_key_follows_every_input(inp, monkeypatch):
    base = measurement_key("units", inp, SETTINGS, 0, "cpu")
    variants = [
        measurement_key("units", dataclasses.replace(inp, identity="cd" * 32), SETTINGS, 0, "cpu"),
        measurement_key("units", dataclasses.replace(inp, identity="ab" * 32 + "+concave-loss"), SETTINGS, 0, "cpu"),
        measurement_key("units", inp, dataclasses.replace(SETTINGS, n_images=32), 0, "cpu"),
        measurement_key("units", inp, SETTINGS, 1, "cpu"),
        measurement_key("fit", inp, SETTINGS, 0, "cpu"),
    ]
    assert len({base, *variants}) == len(variants) + 1
    # settings a kind does not read leave its key alone
    assert measurement_key("fit", inp, dataclasses.replace(SETTINGS, hessian_batches=9), 0, "cpu") == variants[-1]
    monkeypatch.setattr(measurements, "code_hash", lambda kind, mutant=False: "other code")
    assert measurement_key("units", inp, SETTINGS, 0, "cpu") != base


def test_a_chunk_key_follows_every_input_and_the_hessian_s_its_training_loss(inp, monkeypatch):
    """A chunk's label holds the settings it is measured with; its report's key holds the rest, and the Hessian's
    the training loss it is the Hessian of (no other kind reads the loss, so theirs leave it out)."""
    base = chunk_key("spectrum", inp, 0, "cpu")
    variants = [
        chunk_key("spectrum", dataclasses.replace(inp, identity="cd" * 32), 0, "cpu"),
        chunk_key("spectrum", dataclasses.replace(inp, identity="ab" * 32 + "+concave-loss"), 0, "cpu"),
        chunk_key("spectrum", inp, 1, "cpu"),
        chunk_key("spectrum", dataclasses.replace(inp, loss=TrainingLoss(shift=1.0)), 0, "cpu"),
        chunk_key("noise", inp, 0, "cpu"),
    ]
    assert all(v != base for v in variants) and len({str(v) for v in variants}) == len(variants)
    assert "loss" not in chunk_key("noise", dataclasses.replace(inp, loss=TrainingLoss(shift=1.0)), 0, "cpu")
    monkeypatch.setattr(measurements, "code_hash", lambda kind, mutant=False: "other code")
    assert chunk_key("spectrum", inp, 0, "cpu") != base


def test_hessian_batches_are_chunks_and_a_shorter_spectrum_a_prefix_of_a_longer_one(tmp_path, inp, monkeypatch):
    """The spectrum on its first batches is the first rows of the whole one, each batch its own entry measured
    once; uncached, the same numbers; another training loss is measured on its own."""
    from model_props.measurements import spectrum

    m = dataclasses.replace(SETTINGS, hessian_batches=3)
    entries = lambda: len(list(tmp_path.rglob("manifest.json")))  # noqa: E731
    look = measure("spectrum", inp, m, seed=0, cache_dir=tmp_path, upto=2)
    assert look.n_batches == 2 and entries() == 2
    whole = measure("spectrum", inp, m, seed=0, cache_dir=tmp_path)
    assert whole.n_batches == 3 and entries() == 3
    for a, b in zip(whole.to_arrays().values(), look.to_arrays().values()):
        assert np.array_equal(a[:2] if a.ndim else a, b)
    monkeypatch.setattr(spectrum, "lanczos_top_k", lambda *a, **k: pytest.fail("a cached batch was measured again"))
    assert np.array_equal(measure("spectrum", inp, m, seed=0, cache_dir=tmp_path).eigenvalues, whole.eigenvalues)
    monkeypatch.undo()
    uncached = measure("spectrum", inp, m, seed=0)
    assert np.array_equal(uncached.eigenvalues, whole.eigenvalues) and np.array_equal(uncached.hvps, whole.hvps)
    shifted = measure("spectrum", dataclasses.replace(inp, loss=TrainingLoss(shift=1.0)), m, seed=0,
                      cache_dir=tmp_path, upto=1)  # fmt: skip
    assert entries() == 4 and not np.array_equal(shifted.eigenvalues, whole.eigenvalues[:1])


def test_a_model_without_identity_is_never_cached(tmp_path, inp, calls):
    anonymous = dataclasses.replace(inp, identity=None)
    measure("fit", anonymous, SETTINGS, seed=0, cache_dir=tmp_path)
    measure("fit", anonymous, SETTINGS, seed=0, cache_dir=tmp_path)
    assert calls["fit"] == 2 and not list(tmp_path.rglob("*.npz"))
