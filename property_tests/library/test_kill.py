"""Kill-safety: a process killed with SIGKILL while training or while writing a measurement never leaves a
cache entry that a later run loads; the later run builds it again, whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TRAIN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import torch
    import model_props.training.checkpoints as training
    from model_props.data import class_balanced_subset, load_dataset
    from model_props.training.recipes import Recipe
    import dataclasses

    cache = Path(sys.argv[1])
    data = load_dataset("deadleaves", cache_dir=cache)
    data = dataclasses.replace(data, train=class_balanced_subset(data.train, 0.02, seed=0),
                               val=class_balanced_subset(data.val, 0.05, seed=0), test=class_balanced_subset(data.test, 0.05, seed=0))
    recipe = Recipe(name="killed", profile="test", model="resnet", steps=100000, warmup_steps=5, batch_size=16,
                    arch={"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]})
    (cache / "started").write_text("training")
    training.get_trained(recipe, cache_dir=cache, data=data, progress=False)
""")

WRITE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    import model_props.measurements.cache as report_cache
    import model_props.measurements.registry as measurements
    from model_props.anatomy import anatomy
    from model_props.data import class_balanced_subset, load_dataset
    from model_props.measurements.spectrum import TrainingLoss
    from model_props.training.recipes import MeasurementSettings
    from model_props.zoo import build_model

    cache = Path(sys.argv[1])
    data = load_dataset("deadleaves", cache_dir=cache)
    model = build_model("resnet", num_classes=10, arch_kwargs={"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]}).eval()
    inp = measurements.MeasureInput("tiny", model, anatomy(model), "ab" * 32, class_balanced_subset(data.test, 0.05, seed=0),
                                    class_balanced_subset(data.train, 0.01, seed=0), TrainingLoss(), data.name)
    real_savez = np.savez

    def stalled_savez(fh, **arrays):  # write part of the file, then hang until killed
        real_savez(fh, **arrays)
        fh.flush()
        fh.truncate(fh.tell() // 2)
        (cache / "started").write_text("writing")
        time.sleep(600)

    report_cache.np.savez = stalled_savez
    measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=cache)
""")


def run_and_kill(script: str, cache: Path, settle: float) -> None:
    """Run ``script``, wait until it says it started, ``settle`` seconds more, then SIGKILL it."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(cache)], cwd=ROOT)
    try:
        deadline = time.time() + 300
        while not (cache / "started").exists():
            assert proc.poll() is None, f"the process ended early with {proc.returncode}"
            assert time.time() < deadline, "the process never started its work"
            time.sleep(0.2)
        time.sleep(settle)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_killed_while_training_leaves_nothing_loadable(tmp_path, dataset):
    import dataclasses

    from model_props.data import class_balanced_subset, load_dataset
    from model_props.training.checkpoints import get_trained
    from model_props.training.recipes import Recipe

    run_and_kill(TRAIN, tmp_path, settle=2.0)  # well into the training loop (started is written before it)
    recipe = Recipe(
        name="killed",
        profile="test",
        model="resnet",
        steps=100000,
        warmup_steps=5,
        batch_size=16,
        arch={"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]},
    )
    published = [p for p in (tmp_path / "models").rglob("*") if not p.name.startswith(".") and p.is_dir()]
    assert published == [tmp_path / "models" / "test"], f"a killed run left an entry: {published}"
    short = dataclasses.replace(recipe, steps=10)  # what a later run asks for: trains, no stale file in the way
    data = load_dataset("deadleaves", cache_dir=tmp_path)
    data = dataclasses.replace(
        data,
        train=class_balanced_subset(data.train, 0.02, seed=0),
        val=class_balanced_subset(data.val, 0.05, seed=0),
        test=class_balanced_subset(data.test, 0.05, seed=0),
    )
    assert get_trained(short, cache_dir=tmp_path, data=data, progress=False).from_cache is False
    assert get_trained(short, cache_dir=tmp_path, data=data, progress=False).from_cache is True


def test_killed_while_writing_a_measurement_leaves_nothing_loadable(tmp_path, dataset):
    from model_props.anatomy import anatomy
    from model_props.data import class_balanced_subset, load_dataset
    from model_props.measurements import registry as measurements
    from model_props.measurements.spectrum import TrainingLoss
    from model_props.training.recipes import MeasurementSettings
    from model_props.zoo import build_model

    run_and_kill(WRITE, tmp_path, settle=0.2)  # the write is already stalled when started is written
    published = list((tmp_path / "measurements").glob("*/[!.]*"))
    assert not [p for p in published if not p.name.endswith(".lock")], f"a killed write left an entry: {published}"
    data = load_dataset("deadleaves", cache_dir=tmp_path)
    model = build_model(
        "resnet", num_classes=10, arch_kwargs={"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]}
    ).eval()
    inp = measurements.MeasureInput(
        "tiny",
        model,
        anatomy(model),
        "ab" * 32,
        class_balanced_subset(data.test, 0.05, seed=0),
        class_balanced_subset(data.train, 0.01, seed=0),
        TrainingLoss(),
        data.name,
    )
    calls = []
    original = measurements.REPORT_KINDS["fit"]

    def counted(*args):
        calls.append(1)
        return original.compute(*args)

    import dataclasses

    measurements.REPORT_KINDS["fit"] = dataclasses.replace(original, compute=counted)
    try:
        report = measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=tmp_path)
        again = measurements.measure("fit", inp, MeasurementSettings(fit_images=64), seed=0, cache_dir=tmp_path)
    finally:
        measurements.REPORT_KINDS["fit"] = original
    assert calls == [1], "measured again once after the kill, then read from the cache"
    assert (report.test_correct == again.test_correct).all()
    assert not list((tmp_path / "measurements").rglob(".*.tmp")), "the killed writer's temporary entry is gone"
