"""Kill-safety: a process killed with SIGKILL while training or while writing a measurement never leaves a
cache entry that a later run loads; the later run builds it again, whole."""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import numpy as np
import torch
from tiny_resnet import TINY_RESNET_ARCH, tiny_resnet  # this folder is on sys.path (pytest's "prepend" import mode)

import model_props.measurements.cache as report_cache
from model_props.anatomy import anatomy
from model_props.data import class_balanced_subset, load_dataset
from model_props.measurements import registry as measurements
from model_props.training.checkpoints import get_trained
from model_props.training.loss import TrainingLoss
from model_props.training.recipes import MeasurementSettings, Recipe

RECIPE = Recipe(
    name="killed", profile="test", model="resnet", steps=100000, warmup_steps=5, batch_size=16, arch=TINY_RESNET_ARCH
)


def _small(data):
    return dataclasses.replace(
        data,
        train=class_balanced_subset(data.train, 0.02, seed=0),
        val=class_balanced_subset(data.val, 0.05, seed=0),
        test=class_balanced_subset(data.test, 0.05, seed=0),
    )


def _train(cache: Path) -> None:
    """In the killed process: train a recipe that would run for 100,000 steps."""
    data = _small(load_dataset("deadleaves", cache_dir=cache))
    (cache / "started").write_text("training")
    get_trained(RECIPE, cache_dir=cache, data=data, progress=False)


def _tiny_input(cache: Path) -> measurements.MeasureInput:
    data = load_dataset("deadleaves", cache_dir=cache)
    model = tiny_resnet()
    model.eval()
    return measurements.MeasureInput("tiny", model, anatomy(model), "ab" * 32, class_balanced_subset(data.test, 0.05, seed=0),
                                     class_balanced_subset(data.train, 0.01, seed=0), TrainingLoss(), data.name)  # fmt: skip


def _write(cache: Path) -> None:
    """In the killed process: measure a report whose file write stalls halfway."""
    inp = _tiny_input(cache)
    real_savez = np.savez

    def stalled_savez(fh, **arrays):  # write part of the file, then hang until killed
        real_savez(fh, **arrays)
        fh.flush()
        fh.truncate(fh.tell() // 2)
        (cache / "started").write_text("writing")
        time.sleep(600)

    report_cache.np.savez = stalled_savez
    measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=cache)


def _single_threaded(target, cache: Path) -> None:
    torch.set_num_threads(1)  # a forked child must not reuse the parent's OpenMP thread pool (it would deadlock)
    target(cache)


def run_and_kill(target, cache: Path, settle: float) -> None:
    """Run ``target(cache)`` in a forked process (it inherits this one's imports), wait until it says it started,
    ``settle`` seconds more, then SIGKILL it."""
    proc = mp.get_context("fork").Process(target=_single_threaded, args=(target, cache))
    proc.start()
    try:
        deadline = time.time() + 300
        while not (cache / "started").exists():
            assert proc.exitcode is None, f"the process ended early with {proc.exitcode}"
            assert time.time() < deadline, "the process never started its work"
            time.sleep(0.2)
        time.sleep(settle)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.join(timeout=60)
    assert proc.exitcode == -signal.SIGKILL


def test_killed_while_training_leaves_nothing_loadable(fresh_cache):
    cache = fresh_cache("cache")  # the generated data only: the killed process reads it, never generates it
    run_and_kill(_train, cache, settle=2.0)  # well into the training loop (started is written before it)
    published = [p for p in (cache / "models").rglob("*") if not p.name.startswith(".") and p.is_dir()]
    assert published == [cache / "models" / "test"], f"a killed run left an entry: {published}"
    short = dataclasses.replace(RECIPE, steps=10)  # what a later run asks for: trains, no stale file in the way
    data = _small(load_dataset("deadleaves", cache_dir=cache))
    assert get_trained(short, cache_dir=cache, data=data, progress=False).from_cache is False
    assert get_trained(short, cache_dir=cache, data=data, progress=False).from_cache is True


def test_killed_while_writing_a_measurement_leaves_nothing_loadable(fresh_cache):
    cache = fresh_cache("cache")
    run_and_kill(_write, cache, settle=0.2)  # the write is already stalled when started is written
    published = list((cache / "measurements").glob("*/[!.]*"))
    assert not [p for p in published if not p.name.endswith(".lock")], f"a killed write left an entry: {published}"
    inp = _tiny_input(cache)
    calls = []
    original = measurements.REPORT_KINDS["fit"]

    def counted(*args):
        calls.append(1)
        return original.compute(*args)

    measurements.REPORT_KINDS["fit"] = dataclasses.replace(original, compute=counted)
    try:
        report = measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=cache)
        again = measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=cache)
    finally:
        measurements.REPORT_KINDS["fit"] = original
    assert calls == [1], "measured again once after the kill, then read from the cache"
    assert (report.test_correct == again.test_correct).all()
    assert not list((cache / "measurements").rglob(".*.tmp")), "the killed writer's temporary entry is gone"
