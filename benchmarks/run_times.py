"""Benchmark: wall time of the default ``pytest`` run, cold against warm, and serial against ``-n 2``; of the full
live run (``--claims-live=all``) cold; and of ``model-props train`` cold.

Every variant runs in a subprocess from the repository root, side by side in one invocation of this script,
and is timed from outside. ``cold`` uses a fresh cache (datasets, models and measurements); ``warm`` runs
again on it; ``remeasure`` keeps the trained models and measures everything again (a cold measurement cache).
Writes ``benchmarks/results/run_times.json`` at the end; RESULTS.md quotes it. After each entry it writes
``run_times.partial.json`` beside it (not tracked), so that a long invocation stopped part-way keeps what it
finished, without changing the tracked file (and so the generated docs) under the runs that are still to come.

    python benchmarks/run_times.py cold warm          # the first cold run trains everything it reads live
    python benchmarks/run_times.py cold warm cold-all train   # and, each on a fresh cache of its own, the full live
                                                      # run (--claims-live=all) and ``model-props train``
    python benchmarks/run_times.py parallel           # -n 0 vs -n 2 (loadgroup) on a warm cache
    python benchmarks/run_times.py remeasure --subset EXPR   # -n 0 vs -n 2, measuring EXPR's claims afresh
    python benchmarks/run_times.py startup study pretrain   # executor start-up; a tiny study and two smoke
                                                            # trainings in this process vs on 2 workers
    python benchmarks/run_times.py checkpoint         # the claim suite on a new ViT checkpoint, references warm
    python benchmarks/run_times.py cold checkpoint    # ... right after a cold default run, on its cache (what a
                                                      # user meets first; it must train no model)
    python benchmarks/run_times.py cold warm train checkpoint cold-all checkpoint-all   # the five figures of the
                        # docs: cold, warm, train, a new checkpoint on the default run's cache and on the full live run's
    python benchmarks/run_times.py lacking            # a warm run whose measurement cache is empty, its reports
                        # measured ahead on the workers against by the tests in this process (--claims-workers=1)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

from provenance import PYTEST_RUNS, record

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "run_times.json"
PARTIAL = OUT.with_name("run_times.partial.json")  # what a part-way invocation finished (untracked)
WHAT = (
    "cold",
    "warm",
    "cold-all",
    "train",
    "parallel",
    "remeasure",
    "startup",
    "study",
    "pretrain",
    "checkpoint",
    "checkpoint-all",
    "lacking",
)


def run(args: list[str], cache: Path, pids: list[int] | None = None) -> dict:
    """One pytest run in a subprocess, timed from outside; its process id is appended to ``pids`` (the cache's
    manifests name the process that wrote each entry)."""
    env = {**os.environ, "MODEL_PROPS_CACHE": str(cache)}
    with tempfile.TemporaryDirectory(prefix="model-props-junit-") as tmp:
        junit = Path(tmp) / "run.xml"
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stdout, _ = proc.communicate()
        seconds = time.perf_counter() - start
        by_layer = tests_time(junit)
    if pids is not None:
        pids.append(proc.pid)
    tail = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    print(f"{' '.join(args) or '(default)'}: {seconds:.1f} s, exit {proc.returncode}: {tail}", flush=True)
    return {
        "args": args,
        "seconds": round(seconds, 1),
        "exit": proc.returncode,
        "outcome": tail,
        **by_layer,
    }


def tests_time(junit: Path) -> dict:
    """Where a run's time went by test layer, from its JUnit XML (each test's setup, call and teardown; pytest's
    ``junit_duration_report`` default): the seconds of the claim tests, of the library's own tests and of the cuda
    layer, and the ten slowest tests; what the run took beyond them is collection, the session's start, training and
    measuring ahead, and the summary."""
    if not junit.is_file():
        return {}
    layers: dict[str, float] = {}
    each: list[tuple[float, str]] = []
    for case in ElementTree.parse(junit).iter("testcase"):
        seconds = float(case.get("time", 0.0))
        layer = case.get("classname", "").split(".")[1:2] or ["other"]
        layers[layer[0]] = layers.get(layer[0], 0.0) + seconds
        each.append((seconds, f"{case.get('classname')}::{case.get('name')}"))
    slowest = [[name, round(seconds, 1)] for seconds, name in sorted(each, reverse=True)[:10]]
    return {"tests_s_by_layer": {k: round(v, 1) for k, v in sorted(layers.items(), key=lambda kv: -kv[1])},
            "slowest_tests": slowest}  # fmt: skip


def phases(cache: Path, start: float, pid: int) -> dict:
    """Where a cold run's time went, from the cache it filled: when training ahead of the tests ended (the last
    model entry written before the first measurement entry: tests write small models of their own later), how
    long measuring ahead took after it (until the test process ``pid`` wrote its first entry), how many model
    entries the run wrote, and per measurement kind the seconds its entries record (summed over the processes that
    measured: the test process, the two workers measuring ahead on one thread each, and the library tests'
    subprocess runs that share the cache, so that they add up to more than the wall time)."""
    models = [m.stat().st_mtime for m in (cache / "models").rglob("manifest.json")]
    measurements = list((cache / "measurements").rglob("manifest.json"))
    first_measured = min((m.stat().st_mtime for m in measurements), default=math.inf)
    kinds: dict[str, float] = {}
    first_in_tests = math.inf
    for manifest in measurements:
        meta = json.loads(manifest.read_text())
        kinds[meta["kind"]] = round(kinds.get(meta["kind"], 0.0) + meta["seconds"], 1)
        if meta["produced_by"]["pid"] == pid:
            first_in_tests = min(first_in_tests, manifest.stat().st_mtime)
    trained = max((t for t in models if t <= first_measured), default=start)
    ahead = max(0.0, min(first_in_tests, time.time()) - trained) if first_measured < first_in_tests else 0.0
    return {"training_ahead_s": round(trained - start, 1), "measuring_ahead_s": round(ahead, 1), "models": len(models),
            "measuring_s_by_kind": dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}  # fmt: skip


def train() -> dict:
    """Wall time of ``model-props train`` (the README's main job: the references, two at a time on 2 cores) on a
    fresh cache, generating the data too, with the time it said beforehand that it would take."""
    with tempfile.TemporaryDirectory(prefix="model-props-train-") as tmp:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "model_props.cli", "train", f"--cache={tmp}"], cwd=ROOT,
                              capture_output=True, text=True)  # fmt: skip
        seconds = round(time.perf_counter() - start, 1)
    said = next((line for line in proc.stderr.splitlines() if " at a time" in line), "")
    print(f"model-props train: {seconds} s, exit {proc.returncode}; it said: {said}", flush=True)
    return {"seconds": seconds, "exit": proc.returncode, "said": said}


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
    """Wall time of a seed study of the tests' tiny profile (two recipes, seeds 0-3) in this process and on
    a 2-worker local cluster, each on a fresh cache that holds only the generated data."""
    import contextlib
    import io
    import shutil

    from model_props.config.settings import Settings
    from model_props.study.run import run_study
    from model_props.training.profiles import RecipeSource

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(ROOT / "property_tests" / "library" / "tiny.toml", Path(tmp) / "tiny.toml")  # the tests' profile
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


def pretrain(cache: Path) -> dict:
    """Wall time to train the smoke ViT and ResNet to their warm-up checkpoint (200 steps) on fresh caches: in
    this process one after the other (torch's default threads), on a spawn-started 2-process pool of one thread
    each (how a cold session trained several models before Dask), and on a 2-worker Dask LocalCluster."""
    import functools
    import shutil
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from model_props.execution import executor
    from model_props.training.parallel import train_until
    from model_props.training.profiles import load_profile

    profile = load_profile("smoke")
    recipes = [profile.recipes[n] for n in ("vit", "resnet")]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("in_process", "process_pool_2", "local_cluster_2"):
            fresh = Path(tmp) / label
            shutil.copytree(cache / "data", fresh / "data")
            task = functools.partial(train_until, fresh, None, {r.name: "warmup" for r in recipes}, "cpu")
            start = time.perf_counter()
            if label == "in_process":
                steps = [task(r)["step"] for r in recipes]
            elif label == "process_pool_2":
                with ProcessPoolExecutor(2, mp_context=get_context("spawn"), initializer=_torch_threads,
                                         initargs=(1, 0)) as pool:  # fmt: skip
                    steps = [m["step"] for m in pool.map(task, recipes)]
            else:
                with executor(workers=2, threads=1) as runner:
                    steps = [m["step"] for _, m in runner.map(task, recipes)]
            out[label] = round(time.perf_counter() - start, 1)
            print(f"pretrain {label}: {out[label]} s (steps {steps})", flush=True)
    out["ratio_cluster_over_pool"] = round(out["local_cluster_2"] / out["process_pool_2"], 2)
    out["ratio_cluster_over_in_process"] = round(out["local_cluster_2"] / out["in_process"], 2)
    return out


def new_checkpoint(cache: Path) -> dict:
    """Wall time of the claim suite on a new checkpoint of the smoke ViT with the references warm, run as a user
    runs it: ``pytest --pyargs model_props.suite --model vit --checkpoint=FILE`` from an empty folder. The file
    is the cached ViT's final weights plus seeded Gaussian noise (std 1e-4), so that none of its reports is
    cached; per measurement kind, the seconds its cache entry records."""
    import torch
    from safetensors.torch import load_file, save_file

    from model_props.training.checkpoints import get_trained
    from model_props.training.profiles import load_profile

    vit = load_profile("smoke").recipes["vit"]
    reference = get_trained(vit, cache_dir=cache, progress=False)  # the references are warm: this loads
    assert reference.path is not None
    state = load_file(str(reference.path))
    gen = torch.Generator().manual_seed(int(time.time()))
    state = {
        k: v + 1e-4 * torch.randn(v.shape, generator=gen) if v.is_floating_point() else v for k, v in state.items()
    }
    with tempfile.TemporaryDirectory() as tmp:
        weights = Path(tmp) / "user-vit.safetensors"
        save_file(state, str(weights))
        (Path(tmp) / "project").mkdir()
        before = set((cache / "measurements").rglob("manifest.json"))
        models_before = set((cache / "models").rglob("manifest.json"))
        env = {**os.environ, "MODEL_PROPS_CACHE": str(cache)}
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "model_props.suite",
             "--model", "vit", f"--checkpoint={weights}"],
            cwd=Path(tmp) / "project", env=env, capture_output=True, text=True,
        )  # fmt: skip
        seconds = round(time.perf_counter() - start, 1)
        trained = sorted(m.parent.name for m in set((cache / "models").rglob("manifest.json")) - models_before)
        summary = Path(tmp) / "project" / "reports" / "summary.json"
        results = json.loads(summary.read_text())["results"] if summary.is_file() else []
    sequential = [
        {"claim": r["claim"], "part": p["part"], "verdict": p["verdict"], "used": p["n"], "sample": p["sample"],
         "sampling": p["sampling"]}
        for r in results for p in r.get("parts", []) if p.get("sample")
    ]  # fmt: skip
    kinds: dict[str, float] = {}
    for manifest in set((cache / "measurements").rglob("manifest.json")) - before:
        meta = json.loads(manifest.read_text())
        kinds[meta["kind"]] = round(kinds.get(meta["kind"], 0.0) + meta["seconds"], 1)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    print(f"new checkpoint: {seconds} s, exit {proc.returncode}: {tail}; per kind {kinds}; models trained "
          f"{trained or 'none'}", flush=True)  # fmt: skip
    for p in sequential:
        print(f"  {p['claim']} [{p['part']}] {p['verdict']} on {p['used']} of {p['sample']} {p['sampling']}",
              flush=True)  # fmt: skip
    return {"seconds": seconds, "exit": proc.returncode, "outcome": tail, "per_kind_seconds": kinds,
            "sequential_parts": sequential, "models_trained": trained}  # fmt: skip


def lacking(cache: Path, subset: list[str]) -> dict:
    """Wall time of a warm run whose measurement cache is empty (what a change to the measurement code leaves: every
    model cached, no report), each run on a copy of the warm ``cache`` without its measurements: with the reports
    that the reproduction tests read measured ahead of the tests on the local workers (the default), against each
    measured by its test in the session's process (``--claims-workers=1``, torch's threads on every core). The
    runs are the reproduction tests only, which read those reports (``subset``, a -k expression, names others)."""
    import shutil

    chosen = subset or ["-k", "reproduces_the_seed_study"]
    out: dict = {"args": chosen}
    with tempfile.TemporaryDirectory(prefix="model-props-lacking-") as tmp:
        for label, extra in (("in_session", ["--claims-workers=1"]), ("on_workers", [])):
            copy = Path(tmp) / label
            shutil.copytree(cache, copy, ignore=lambda folder, _: ["measurements"] if Path(folder) == cache else [])
            out[label] = run([*chosen, *extra], copy)
            out[label]["reports"] = len(list((copy / "measurements").rglob("manifest.json")))
            shutil.rmtree(copy)
    out["ratio_workers_over_session"] = round(out["on_workers"]["seconds"] / out["in_session"]["seconds"], 2)
    print(f"lacking: workers / session {out['ratio_workers_over_session']}", flush=True)
    return out


def stamped(entry: dict, stamp: dict) -> dict:
    """An entry with the stamp of the run that measured it (``benchmarks/provenance.py``), its commit and date also
    at its top level, where the docs read them: a partial rerun keeps older entries, each with its own stamp."""
    return {**entry, "commit": stamp["commit"], "date": stamp["date"], "provenance": stamp}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", nargs="+", choices=WHAT)
    p.add_argument(
        "--cache", type=Path, default=None, help="default: a fresh temporary folder for cold, else $MODEL_PROPS_CACHE"
    )
    p.add_argument("--subset", default="", help="a -k expression to time a part of the suite")
    args = p.parse_args()
    if "cold" in args.what and args.cache is not None and args.cache.is_dir() and any(args.cache.iterdir()):
        p.error(f"cold starts from a fresh cache, and --cache {args.cache} holds one: name an empty or new folder")
    results = json.loads(OUT.read_text()) if OUT.is_file() else {}
    for name, entry in results.items():  # an entry from before entries carried stamps keeps the file's machine then
        if name != "provenance" and isinstance(entry, dict) and "provenance" not in entry and "provenance" in results:
            entry["provenance"] = {"machine": results["provenance"]["machine"]}
    stamp = record(__file__, runs=PYTEST_RUNS)  # the tree as the runs start; a partial rerun keeps older entries
    cache = args.cache or (
        Path(tempfile.mkdtemp(prefix="model-props-bench-"))
        if "cold" in args.what
        else Path(os.environ.get("MODEL_PROPS_CACHE", Path.home() / ".cache" / "model-props"))
    )
    subset = ["-k", args.subset] if args.subset else []
    if "cold" in args.what:
        start = time.time()
        pids: list[int] = []
        results["cold"] = stamped(run(subset, cache, pids), stamp)
        results["cold"]["phases"] = phases(cache, start, pids[0])
        print(f"cold phases: {results['cold']['phases']}", flush=True)
        save(results, stamp)
    if "warm" in args.what:
        results["warm"] = stamped(run(subset, cache), stamp)
        if "cold" in results:
            results["cold_over_warm"] = round(results["cold"]["seconds"] / results["warm"]["seconds"], 1)
        save(results, stamp)
    if "checkpoint" in args.what:  # right after the default runs, on their cache: what a user meets first
        results["new_checkpoint"] = stamped(new_checkpoint(cache), stamp)
        save(results, stamp)
    if "train" in args.what:
        results["train"] = stamped(train(), stamp)
        save(results, stamp)
    if "cold-all" in args.what:  # every variant and independent run live too, on a fresh cache of its own
        every = Path(tempfile.mkdtemp(prefix="model-props-bench-all-"))
        start = time.time()
        pids_all: list[int] = []
        results["cold_all"] = stamped(run([*subset, "--claims-live=all"], every, pids_all), stamp)
        results["cold_all"]["phases"] = phases(every, start, pids_all[0])
        print(f"cold --claims-live=all phases: {results['cold_all']['phases']}", flush=True)
        save(results, stamp)
    for label, extra in (("parallel", []), ("remeasure", ["--claims-remeasure"])):
        if label in args.what:
            serial = run([*subset, *extra, "-n", "0"], cache)
            parallel = run([*subset, *extra, "-n", "2", "--dist", "loadgroup"], cache)
            ratio = round(parallel["seconds"] / serial["seconds"], 2)
            results[label] = stamped({"serial": serial, "n2": parallel, "ratio_n2_over_serial": ratio}, stamp)
    if "startup" in args.what:
        results["startup"] = stamped(startup(), stamp)
    if "study" in args.what:
        results["study"] = stamped(study(cache), stamp)
    if "pretrain" in args.what:
        results["pretrain"] = stamped(pretrain(cache), stamp)
    if "lacking" in args.what:  # on a copy of the warm cache, without its measurements
        results["lacking"] = stamped(lacking(cache, subset), stamp)
        save(results, stamp)
    if "checkpoint-all" in args.what:  # on the cache a full live run warmed: every variant and independent run
        if "cold-all" not in args.what:
            raise SystemExit("checkpoint-all measures on the cold-all run's cache: give cold-all with it")
        results["new_checkpoint_all_warm"] = stamped(new_checkpoint(every), stamp)
    save(results, stamp, final=True)


def save(results: dict, stamp: dict, final: bool = False) -> None:
    """Write the results as they stand, the stamp of this invocation at their top (each entry carries its own): to
    the untracked partial file while runs remain, to the results file at the end (module docstring)."""
    results["provenance"] = stamp
    OUT.parent.mkdir(parents=True, exist_ok=True)
    (OUT if final else PARTIAL).write_text(json.dumps(results, indent=1) + "\n")
    if final:
        PARTIAL.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
