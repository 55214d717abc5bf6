"""Benchmark: wall time of the default ``pytest`` run, cold against warm, and serial against ``-n 2``.

Every variant runs in a subprocess from the repository root, side by side in one invocation of this script,
and is timed from outside. ``cold`` uses a fresh cache (datasets, models and measurements); ``warm`` runs
again on it; ``remeasure`` keeps the trained models and measures everything again (a cold measurement cache).
Writes ``benchmarks/results/run_times.json``; RESULTS.md quotes it.

    python benchmarks/run_times.py cold warm          # the first cold run trains everything (tens of minutes)
    python benchmarks/run_times.py parallel           # -n 0 vs -n 2 (loadgroup) on a warm cache
    python benchmarks/run_times.py remeasure --subset EXPR   # -n 0 vs -n 2, measuring EXPR's claims afresh
    python benchmarks/run_times.py startup study      # executor start-up; a tiny study in-process vs 2 workers
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from model_props.provenance import provenance

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "run_times.json"


def run(args: list[str], cache: Path) -> dict:
    env = {**os.environ, "MODEL_PROPS_CACHE": str(cache)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    print(f"{' '.join(args) or '(default)'}: {seconds:.1f} s, exit {proc.returncode}: {tail}", flush=True)
    return {"args": args, "seconds": round(seconds, 1), "exit": proc.returncode, "outcome": tail}


def startup() -> dict:
    """Seconds to start an executor, run one task per worker that imports torch, and close it: a 2-worker
    Dask LocalCluster against the spawn-started 2-process pool that trained several models before it."""
    import functools
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from model_props.execution import executor

    out = {}
    for label in ("process_pool", "local_cluster"):
        start = time.perf_counter()
        task = functools.partial(_torch_threads, 1)
        if label == "process_pool":
            with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
                list(pool.map(task, range(2)))
        else:
            with executor(workers=2, threads=1) as runner:
                list(runner.map(task, range(2)))
        out[label] = round(time.perf_counter() - start, 1)
        print(f"{label}: {out[label]} s", flush=True)
    out["ratio_cluster_over_pool"] = round(out["local_cluster"] / out["process_pool"], 2)
    return out


def _torch_threads(threads: int, _: int) -> int:
    import torch

    torch.set_num_threads(threads)
    return torch.get_num_threads()


def study(cache: Path) -> dict:
    """Wall time of a seed study of the tiny profile (two recipes, seeds 0-1; the test's) in this process and on
    a 2-worker local cluster, each on a fresh cache that holds only the generated data."""
    import contextlib
    import io
    import shutil

    from model_props.session.settings import Settings
    from model_props.session.study import run_study
    from model_props.training.profiles import RecipeSource

    sys.path.insert(0, str(ROOT / "property_tests" / "library"))
    from test_execution import TINY  # the recipes the executor test runs

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tiny.toml").write_text(TINY)
        for label, workers in (("in_process", 1), ("local_cluster_2", 2)):
            shutil.copytree(cache / "data", Path(tmp) / label / "data")
            settings = Settings(profile="tiny", recipes=RecipeSource(Path(tmp)), cache_dir=Path(tmp) / label,
                                progress=False, workers=workers)  # fmt: skip
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                run_study(settings, seeds=[0, 1, 2, 3], out=Path(tmp) / f"study-{label}")
            out[label] = round(time.perf_counter() - start, 1)
            print(f"study {label}: {out[label]} s", flush=True)
    out["ratio_cluster_over_in_process"] = round(out["local_cluster_2"] / out["in_process"], 2)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", nargs="+", choices=["cold", "warm", "parallel", "remeasure", "startup", "study"])
    p.add_argument(
        "--cache", type=Path, default=None, help="default: a fresh temporary folder for cold, else $MODEL_PROPS_CACHE"
    )
    p.add_argument("--subset", default="", help="a -k expression to time a part of the suite")
    args = p.parse_args()
    results = json.loads(OUT.read_text()) if OUT.is_file() else {}
    cache = args.cache or (
        Path(tempfile.mkdtemp(prefix="model-props-bench-"))
        if "cold" in args.what
        else Path(os.environ.get("MODEL_PROPS_CACHE", Path.home() / ".cache" / "model-props"))
    )
    subset = ["-k", args.subset] if args.subset else []
    if "cold" in args.what:
        results["cold"] = run(subset, cache)
    if "warm" in args.what:
        results["warm"] = run(subset, cache)
        if "cold" in results:
            results["cold_over_warm"] = round(results["cold"]["seconds"] / results["warm"]["seconds"], 1)
    for label, extra in (("parallel", []), ("remeasure", ["--claims-remeasure"])):
        if label in args.what:
            serial = run([*subset, *extra, "-n", "0"], cache)
            parallel = run([*subset, *extra, "-n", "2", "--dist", "loadgroup"], cache)
            results[label] = {
                "serial": serial,
                "n2": parallel,
                "ratio_n2_over_serial": round(parallel["seconds"] / serial["seconds"], 2),
            }
    if "startup" in args.what:
        results["startup"] = startup()
    if "study" in args.what:
        results["study"] = study(cache)
    results["provenance"] = provenance()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
