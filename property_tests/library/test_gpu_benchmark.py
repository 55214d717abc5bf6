"""``benchmarks/gpu.py`` runs only where a GPU is lent, for minutes a session: its orchestration is checked here, on
the CPU, with phases that stand in for the real ones (a pytest log, one past its timeout with a child of its own, a
native abort, a cache written as a run writes it), so that a fault in it costs no GPU time. The real phases'
scripts are checked to take the arguments it gives them. No test here needs a trained model."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from distributed import KilledWorker

from model_props.store.lost import LostTasks

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture(scope="module")
def gpu():
    """benchmarks/gpu.py as its own script sees its folder: on ``sys.path`` (it imports ``run_times`` there)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("gpu_benchmark", BENCHMARKS / "gpu.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclass looks its module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("gpu_benchmark", None)
        sys.path.remove(str(BENCHMARKS))


def _phase(gpu, tmp_path: Path, name: str, script: str, timeout_s: float = 60.0):
    """A phase running ``script`` in a fresh interpreter, with a cache folder of its own."""
    env = {**os.environ, "MODEL_PROPS_CACHE": str(tmp_path / f"cache-{name}"), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-c", textwrap.dedent(script)]
    return gpu.Phase(name, command, tmp_path, env, timeout_s, tmp_path / "logs" / f"{name}.log")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs: a killed one whose new parent has not reaped it yet (a zombie) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


# the session's line for a lost report as the store words it, so that the log's parser follows its wording
LOST_LINE = LostTasks().report((100, "resnet", "spectrum", "final"), KilledWorker("task-key", None, 0))
LOG = f"""\
collected 4 items / 1 deselected / 3 selected
model-props: training 2 models, 2 at a time: vit (final), resnet (final)
model-props: {LOST_LINE}
property_tests/cuda/test_a.py::test_one PASSED                         [ 33%]
property_tests/cuda/test_a.py::test_two FAILED                         [ 66%]
property_tests/cuda/test_a.py::test_three SKIPPED (no CUDA)            [100%]
============ 1 failed, 1 passed, 1 skipped, 1 deselected in 0.12s ============
"""


def test_pytest_counts_reads_a_verbose_log(gpu):
    assert gpu.pytest_counts(LOG) == {
        "collected": 3,
        "done": 3,
        "outcomes": {"passed": 1, "failed": 1, "skipped": 1},
        "summary": "1 failed, 1 passed, 1 skipped, 1 deselected in 0.12s",
        "lost": [
            "measuring the spectrum report of resnet (seed 100, final) killed every worker that ran it (KilledWorker)"
        ],
    }
    assert gpu.pytest_counts("") == {"collected": None, "done": 0, "outcomes": {}, "summary": None, "lost": []}


def test_every_phase_ends_recorded_whatever_it_does(gpu, tmp_path, monkeypatch):
    """A phase that ends gets its summary; one past its timeout is killed with the child it started and recorded
    as timed out with the tests it had done; one a native abort kills is named by its signal; the cache a phase
    filled says where its time went; tests done are sampled as it runs."""
    monkeypatch.setattr(gpu, "PROGRESS_S", 0.5)
    child = tmp_path / "child.pid"
    todo = [
        _phase(gpu, tmp_path, "ends", f"import sys; print({LOG!r}); sys.exit(1)"),
        _phase(
            gpu,
            tmp_path,
            "late",
            f"""
            import subprocess, sys, time
            sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            open({str(child)!r}, "w").write(str(sleeper.pid))
            print("collected 2 items", flush=True)
            print("t.py::test_one PASSED", flush=True)
            time.sleep(120)
            """,
            timeout_s=3.0,
        ),  # fmt: skip
        _phase(gpu, tmp_path, "aborts", "import os; print('t.py::test_one PASSED', flush=True); os.abort()"),
        _phase(
            gpu,
            tmp_path,
            "measures",
            """
            import json, os, time
            from pathlib import Path
            cache = Path(os.environ["MODEL_PROPS_CACHE"])
            def manifest(path, meta):
                path.mkdir(parents=True)
                (path / "manifest.json").write_text(json.dumps(meta))
            manifest(cache / "models" / "vit", {"kind": "model"})
            time.sleep(0.1)
            for kind, seconds in (("noise", 1.5), ("attack", 4.0), ("noise", 0.5)):
                manifest(cache / "measurements" / kind / str(seconds), {"kind": kind, "seconds": seconds,
                         "produced_by": {"pid": os.getpid()}})
            """,
        ),  # fmt: skip
    ]
    start = time.perf_counter()
    gpu.run_all(todo, deadline=30.0)
    assert time.perf_counter() - start < 25, "the late phase was stopped at its timeout, not at the deadline"
    ends, late, aborts, measures = (phase.result for phase in todo)

    assert ends["exit"] == 1 and ends["summary"] == "1 failed, 1 passed, 1 skipped, 1 deselected in 0.12s"
    assert ends["collected"] == 3 and "timed_out" not in ends and "cache" not in ends

    assert late["timed_out"] == f"timed out after {late['wall_s']:.0f} s, 1 of 2 tests done"
    assert 3.0 <= late["wall_s"] < 10 and late["progress"] and late["progress"][-1][1] == 1
    sleeper = int(child.read_text())
    for _ in range(50):
        if not _alive(sleeper):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the late phase's child {sleeper} outlived it")

    assert aborts["exit"] < 0 and aborts["summary"].startswith("SIGABRT after ")
    assert aborts["summary"].endswith("1 of ? tests done (1 passed)")

    assert measures["exit"] == 0 and measures["cache"]["models"] == 1
    assert measures["cache"]["measuring_s_by_kind"] == {"attack": 4.0, "noise": 2.0}


def test_it_refuses_without_cuda_and_writes_nothing(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the benchmark would run")
    out = tmp_path / "gpu.json"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "gpu.py"), "--out", str(out)], capture_output=True,
                          text=True, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and "no CUDA device" in done.stdout, done.stderr
    assert not out.exists()


def test_each_phase_runs_a_script_that_takes_its_arguments(gpu, tmp_path):
    """The phases' commands name files that exist, and the benchmark scripts they start accept the options given
    (``--help`` lists each); the in-process phases find what they import."""
    todo = gpu.phases(tmp_path, tmp_path / "logs", 480.0, tmp_path / "results")
    assert [p.name for p in todo] == ["cuda", "cold", "checkpoint", "pretrained", "abort", "randaugment"]
    started = []
    for phase in todo:
        scripts = [Path(a) for a in phase.command if a.endswith(".py")]
        assert all(s.is_file() for s in scripts), phase.command
        options = [a.split("=")[0] for a in phase.command if a.startswith("--")]
        for script in (s for s in scripts if s.parent == BENCHMARKS and s.name != "gpu.py"):
            help_ = subprocess.Popen([sys.executable, str(script), "--help"], stdout=subprocess.PIPE, text=True)
            started.append((script, options, help_))
    assert len(started) == 2, "the abort's and RandAugment's scripts"
    for script, options, help_ in started:  # side by side: each imports torch
        usage, _ = help_.communicate()
        assert help_.returncode == 0 and all(o in usage for o in options), (script, options, usage)
    assert (ROOT / "property_tests" / "cuda").is_dir()
    import pretrained_224
    import run_times

    assert callable(run_times.new_checkpoint) and callable(pretrained_224.make_folder)
    assert callable(pretrained_224.make_weights)
