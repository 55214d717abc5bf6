"""One prepared command for a lent GPU (issue 47): the CUDA tests, the cold default run, a new checkpoint of the
smoke ViT, the 224-px pretrained suite with a comparator, the bisection of the ResNet spectrum's CUDA abort and
RandAugment's speed, side by side within one deadline; writes benchmarks/results/gpu.json (docs/gpu.md generates its
times from it).

Phases, each a subprocess with its own timeout and a log written as it goes (under ``$OUT`` when set, else
benchmarks/results/gpu-logs/), started together (the GPU has room for all six; 16 cores):

- ``cuda``: ``pytest -m cuda -v`` (property_tests/cuda/);
- ``cold``: ``pytest --claims-device cuda -v`` on an empty cache, as a new user runs the default suite;
- ``checkpoint``: the references trained on CUDA (``model-props train --device cuda``), then
  ``run_times.new_checkpoint`` (the suite on the smoke ViT's weights plus noise) with ``--claims-device cuda``;
- ``pretrained``: a seeded timm ViT-Tiny with a seeded timm ResNet-18 comparator (``--claims-versus``) on 500
  images of 10 synsets (``pretrained_224.make_folder`` / ``make_weights``), at 224 px on CUDA;
- ``abort``: ``cuda_hessian_abort.py``, the variants of the ResNet spectrum report that bisect its CUDA abort,
  written beside the JSON (``cuda_hessian_abort.json``);
- ``randaugment``: ``randaugment.py --device cuda``, RandAugment grouped by operation against torchvision's loop over
  the images, on the GPU, written beside the JSON (``randaugment-cuda.json``).

At the deadline (``--deadline``, 480 s) whatever still runs is killed and recorded as "timed out after N s, M of T
tests done" from its -v log, so the JSON is always written; each phase's tests done are sampled every 15 s
(``progress``), and where its time went is read from the cache it filled (``cache``: when training ahead ended, the
model entries written, the seconds each measurement kind's entries record: ``run_times.phases``), so that a phase cut
short shows where its time went. Without CUDA it refuses and writes nothing.

    python benchmarks/gpu.py
    MODEL_PROPS_COMMIT=<sha> python benchmarks/gpu.py   # on a copy of the tree whose git history is not this one's
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "gpu.json"
IMAGES = 500  # of the 224-px folder: 10 synsets x 50
OUTCOME = re.compile(r" (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b")
SUMMARY = re.compile(r"^=+ (.+ in [\d.]+s.*?) =+$")
# a task of the work ahead of the tests that killed every worker that ran it (model_props/store/lost.py): a native
# abort on CUDA, which the tests that need it then report as failed
LOST = re.compile(r"^model-props: ((?:training|measuring) .+? killed every worker that ran it) \((\w+)\)", re.MULTILINE)
DEADLINE_S = 480.0  # a lent GPU's command runs at most 10 minutes, the install and the JSON included
PROGRESS_S = 15  # a phase's tests done are sampled this often, so that a run cut short shows where its time went
COLLECTED = re.compile(r"collected (\d+) items?(?: / (\d+) deselected)?")


@dataclass
class Phase:
    name: str
    command: list[str]
    cwd: Path
    env: dict[str, str]
    timeout_s: float
    log: Path
    proc: subprocess.Popen | None = None
    start: float = 0.0
    began: float = 0.0  # its start as a time stamp (time.time()), for the cache entries' times
    result: dict = field(default_factory=dict)
    progress: list[tuple[float, int]] = field(default_factory=list)  # (seconds since its start, tests done)


def pytest_counts(log: str) -> dict:
    """From a ``pytest -v`` log: tests collected (selected), done, per outcome, the summary line, and the tasks ahead
    of the tests that killed every worker that ran them (``lost``: what and the error, e.g. ``KilledWorker``)."""
    outcomes: dict[str, int] = {}
    for found in OUTCOME.finditer(log):
        outcomes[found[1].lower()] = outcomes.get(found[1].lower(), 0) + 1
    collected = COLLECTED.findall(log)
    total = sum(int(n) - int(d or 0) for n, d in collected) if collected else None
    summary = [m[1] for line in log.splitlines() if (m := SUMMARY.match(line.strip()))]
    return {"collected": total, "done": sum(outcomes.values()), "outcomes": outcomes,
            "summary": summary[-1] if summary else None,
            "lost": [f"{what} ({error})" for what, error in LOST.findall(log)]}  # fmt: skip


def _phase_args(phase: str, work: Path) -> None:
    """Runs inside a phase's subprocess: ``checkpoint`` (after the references are trained) or ``pretrained``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    if phase == "checkpoint":
        from run_times import new_checkpoint

        (work / "new_checkpoint.json").write_text(json.dumps(new_checkpoint(Path(os.environ["MODEL_PROPS_CACHE"]))))
        return
    from pretrained_224 import make_folder, make_weights

    make_folder(work / "images", per_class=IMAGES // 10)
    for name in ("vit_tiny_patch16_224", "resnet18"):
        make_weights(name, work / f"{name}.safetensors")
    (work / "project").mkdir(exist_ok=True)
    command = [sys.executable, "-m", "pytest", "--pyargs", "model_props.suite", "-v", "-p", "no:cacheprovider",
               f"--model=timm:vit_tiny_patch16_224@pretrained={work / 'vit_tiny_patch16_224.safetensors'}",
               f"--claims-versus=resnet=timm:resnet18@pretrained={work / 'resnet18.safetensors'}",
               f"--claims-data-root={work / 'images'}", f"--claims-images={IMAGES}", "--claims-device=cuda"]  # fmt: skip
    print("$", " ".join(command), flush=True)
    start = time.perf_counter()
    code = subprocess.run(command, cwd=work / "project").returncode
    print(f"suite: {time.perf_counter() - start:.1f} s, exit {code}", flush=True)
    sys.exit(code)


def phases(work: Path, logs: Path, deadline: float, results: Path) -> list[Phase]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "TORCH_SHOW_CPP_STACKTRACES": "1"}
    me = [sys.executable, str(Path(__file__).resolve())]
    pytest = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider"]

    def cache(name: str) -> dict[str, str]:
        return {**env, "MODEL_PROPS_CACHE": str(work / f"cache-{name}")}

    (work / "checkpoint").mkdir()
    train = f"{sys.executable} -m model_props train --device cuda && PYTEST_ADDOPTS=--claims-device=cuda "
    return [
        Phase("cuda", [*pytest, "-m", "cuda", f"--alluredir={work / 'allure-cuda'}", "property_tests/cuda"], ROOT,
              cache("cuda"), 300, logs / "cuda.log"),
        Phase("cold", [*pytest, "--claims-device", "cuda", f"--alluredir={work / 'allure-cold'}"], ROOT,
              cache("cold"), deadline, logs / "cold.log"),
        Phase("checkpoint", ["bash", "-c", train + " ".join([*me, "--phase", "checkpoint", str(work / "checkpoint")])],
              ROOT, cache("checkpoint"), deadline, logs / "checkpoint.log"),
        Phase("pretrained", [*me, "--phase", "pretrained", str(work / "pretrained")], ROOT, cache("pretrained"),
              deadline, logs / "pretrained.log"),
        Phase("abort", [sys.executable, str(ROOT / "benchmarks" / "cuda_hessian_abort.py"), "--out",
                        str(results / "cuda_hessian_abort.json")], ROOT, cache("abort"), 300, logs / "abort.log"),
        Phase("randaugment", [sys.executable, str(ROOT / "benchmarks" / "randaugment.py"), "--device", "cuda", "--out",
                              str(results / "randaugment-cuda.json")], ROOT, cache("randaugment"), 120,
              logs / "randaugment.log"),
    ]  # fmt: skip


def _stop(phase: Phase) -> None:
    assert phase.proc is not None
    try:
        os.killpg(phase.proc.pid, signal.SIGKILL)  # its own session: the phase and every child it started
    except ProcessLookupError:
        pass
    phase.proc.wait()


def run_all(todo: list[Phase], deadline: float) -> None:
    """Start every phase, poll until each ends, is past its timeout or the deadline passes; record each."""
    began = time.perf_counter()
    for phase in todo:
        phase.log.parent.mkdir(parents=True, exist_ok=True)
        handle = phase.log.open("w")
        phase.start, phase.began = time.perf_counter(), time.time()
        phase.proc = subprocess.Popen(phase.command, cwd=phase.cwd, env=phase.env, stdout=handle,
                                      stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        print(f"[{phase.name}] started: {' '.join(phase.command)}", flush=True)
    running = list(todo)
    while running:
        time.sleep(1.0)
        now = time.perf_counter()
        for phase in list(running):
            assert phase.proc is not None
            if now - phase.start >= PROGRESS_S * (len(phase.progress) + 1):
                done = len(OUTCOME.findall(phase.log.read_text(errors="replace")))
                phase.progress.append((round(now - phase.start), done))
            limit = min(phase.timeout_s, deadline - (phase.start - began))
            late = phase.proc.poll() is None and now - phase.start > limit
            if late:
                _stop(phase)
            if phase.proc.poll() is not None:
                running.remove(phase)
                record(phase, now - phase.start, late)


def record(phase: Phase, seconds: float, late: bool) -> None:
    assert phase.proc is not None
    counts = pytest_counts(phase.log.read_text(errors="replace"))
    code = phase.proc.returncode
    phase.result = {"wall_s": round(seconds, 1), "exit": code, **counts, "log": str(phase.log),
                    "progress": phase.progress}  # fmt: skip
    from run_times import phases as cache_phases  # benchmarks/ is this script's folder

    cache = Path(phase.env["MODEL_PROPS_CACHE"])
    if (cache / "models").is_dir() or (cache / "measurements").is_dir():
        phase.result["cache"] = cache_phases(cache, phase.began, phase.proc.pid)
    total = counts["collected"] if counts["collected"] is not None else "?"
    if late:
        phase.result["timed_out"] = f"timed out after {seconds:.0f} s, {counts['done']} of {total} tests done"
    elif code < 0:  # killed by a signal (an abort in a native library): pytest wrote no summary
        phase.result["summary"] = (f"{signal.Signals(-code).name} after {seconds:.0f} s, {counts['done']} of {total} "
                                   f"tests done ({', '.join(f'{n} {o}' for o, n in counts['outcomes'].items())})")  # fmt: skip
    elif code not in (0, 1):  # a usage error or an interrupted session: the summary line does not say so
        phase.result["summary"] = f"exit {code}: {counts['summary'] or 'no tests ran'}"
    print(f"[{phase.name}] {phase.result.get('timed_out') or phase.result['summary']} ({seconds:.1f} s, exit "
          f"{phase.proc.returncode})", flush=True)  # fmt: skip


def environment() -> dict:
    import timm
    import torch

    return {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "timm": timm.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "cpu_count": os.cpu_count(),
        # what the runs use: torch's defaults, which model-props leaves as they are (docs/gpu.md)
        "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "tf32_cudnn": torch.backends.cudnn.allow_tf32,
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--deadline", type=float, default=DEADLINE_S, help="seconds after which every phase still running is killed"
    )
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--phase", nargs=2, metavar=("NAME", "DIR"), help=argparse.SUPPRESS)  # inside a phase's subprocess
    args = p.parse_args()
    if args.phase:
        _phase_args(args.phase[0], Path(args.phase[1]))
        return 0
    import torch
    from provenance import PYTEST_RUNS, record

    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU (nothing written)")
        return 0
    logs = Path(os.environ["OUT"]) / "gpu-logs" if os.environ.get("OUT") else ROOT / "benchmarks/results/gpu-logs"
    start = time.perf_counter()
    again = "python benchmarks/gpu.py" + (f" --deadline {args.deadline:g}" if args.deadline != DEADLINE_S else "")
    stamp = record(__file__, device="cuda", runs=PYTEST_RUNS, command=again)  # not --out: a lent machine's $OUT
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        todo = phases(Path(tmp), logs, args.deadline, args.out.parent)
        run_all(todo, args.deadline)
        checkpoint = Path(tmp) / "checkpoint" / "new_checkpoint.json"
        new = json.loads(checkpoint.read_text()) if checkpoint.is_file() else None
    result = {**environment(), "commit": stamp["commit"], "date": stamp["date"], "provenance": stamp,
              "deadline_s": args.deadline, "pretrained_images": IMAGES, "wall_s": round(time.perf_counter() - start, 1),
              "phases": {ph.name: ph.result for ph in todo}, "new_checkpoint": new}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
