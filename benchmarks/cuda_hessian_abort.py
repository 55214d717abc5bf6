"""Which part of the spectrum report aborts the process on CUDA (docs/gpu.md, known CUDA limits; issue 47).

On an H200 (torch 2.11, cuDNN 9.19) the tiny ResNet's training-loss Hessian ended the process with SIGABRT in its
first ``torch.autograd.grad(..., create_graph=True)``, with cuDNN on and off, while a plain Lanczos spectrum of the
same ResNet (class targets, no weight decay, un-augmented images) agreed with the CPU. Each variant below changes one
thing of the report's computation and runs in its own child process (an abort ends only it), with C++ stack traces
on; the exit, the seconds and the head and tail of each child's output (Python frames left out) are written to
``--out``. On an H100 (torch 2.11, cuDNN 9.19, 2026-12-05) every variant but ``pytest-child`` (then not yet a
variant) passed, while the cuda layer's test still aborted in its child pytest.

    python benchmarks/cuda_hessian_abort.py --out abort.json            # on a GPU; --device cpu: every variant passes
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "property_tests" / "cuda"))  # the cuda layer's helpers (tiny_models.py)
from tiny_models import reason_lines  # type: ignore[import-not-found]  # noqa: E402

TEST = "property_tests/cuda/test_cuda_measurements.py::test_a_kind_measured_on_cuda_agrees_with_the_cpu"
VARIANTS = {
    "report": "the spectrum report as the registry measures it (the case that aborted)",
    "cpu-then-cuda": "the report on a CPU copy first, then on CUDA, in one process (as the cuda layer's test does)",
    "pytest-child": "the cuda layer's test itself, in the child pytest it runs in (the case that aborted on an H100)",
    "report-blocking": "the report with CUDA_LAUNCH_BLOCKING=1 (the failing kernel named where it fails)",
    "report-no-cudnn": "the report under torch.backends.cudnn.flags(enabled=False)",
    "grad-only": "the report's first batch, loss and weight decay: one create_graph gradient, no Lanczos",
    "class-targets": "the report's first batch, class targets (the tiny recipe mixes none), no weight decay",
    "soft-targets": "the report's first batch, its labels as soft targets smoothed by 0.1, no weight decay",
    "weight-decay": "the report's first batch, class targets plus the weight-decay term",
    "float64": "the report's first batch, class targets and weight decay, the model and the batch in float64",
    "plain-batch": "un-augmented training images, class targets, no weight decay (the case that passed)",
    "vit-report": "the ViT's spectrum report (it passed)",
}


def _variant(name: str, device: str) -> None:
    """Runs in the child: the variant ``name`` on ``device``; an exception exits 1, an abort kills the child."""
    import torch
    from tiny_models import LIBRARY, on_device, tiny_input

    from model_props.config.settings import Settings
    from model_props.measurements.functional.spectrum import hessian_operator, lanczos_top_k, trainable_size
    from model_props.measurements.registry import measure
    from model_props.measurements.spectrum import spectrum_batches
    from model_props.store.model_store import ModelStore
    from model_props.training.loss import TrainingLoss
    from model_props.training.profiles import RecipeSource, load_profile

    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    tiny = load_profile("tiny", RecipeSource(user_dir=LIBRARY))
    data = ModelStore(Settings()).dataset()  # the dataset the cuda layer's fixture gives (tests/cuda/conftest.py)
    on_cpu = tiny_input(tiny, "vit" if name == "vit-report" else "resnet", data)
    settings = tiny.measurement
    if name == "cpu-then-cuda":  # the order of the cuda layer's test: the CPU model measured, then copied to CUDA
        cpu = measure("spectrum", on_cpu, settings, seed=0, device="cpu")
        print("on the CPU", cpu.to_arrays()["eigenvalues"].tolist(), flush=True)
    inp = on_device(on_cpu, device)
    if name in ("report", "report-blocking", "report-no-cudnn", "vit-report", "cpu-then-cuda"):
        with torch.backends.cudnn.flags(enabled=name != "report-no-cudnn"):
            report = measure("spectrum", inp, settings, seed=0, device=device)
        print("eigenvalues", report.to_arrays()["eigenvalues"].tolist())
        return
    x, target = spectrum_batches(inp.train, inp.loss, 1, settings.hessian_batch_size, data.num_classes, seed=0)[0]
    labels = target.argmax(1) if target.ndim == 2 else target
    if name == "plain-batch":
        x, labels = inp.train.batch(torch.arange(settings.hessian_batch_size))
    wd = inp.loss.weight_decay + inp.loss.shift
    soft = torch.nn.functional.one_hot(labels, data.num_classes).float() * 0.9 + 0.1 / data.num_classes
    target, decay = {"grad-only": (target, wd), "class-targets": (labels, 0.0), "soft-targets": (soft, 0.0),
                     "weight-decay": (labels, wd), "plain-batch": (labels, 0.0), "float64": (target, wd)}[name]  # fmt: skip
    model, dtype = inp.model, torch.float32
    if name == "float64":
        model, dtype = model.double(), torch.float64
        x, target = x.double(), (target.double() if target.is_floating_point() else target)
    print(f"batch {tuple(x.shape)}, target {tuple(target.shape)} {target.dtype}, weight decay {decay}", flush=True)
    with hessian_operator(model, x.to(device), target.to(device), nll=TrainingLoss.nll, weight_decay=decay) as hvp:
        if name == "grad-only":
            print("gradient graph built")
            return
        top = lanczos_top_k(hvp, trainable_size(model), 5, seed=0, device=device, dtype=torch.float64)
    print("eigenvalues", top.eigenvalues.tolist(), dtype)


def _child(name: str, device: str) -> dict:
    env = {**os.environ, "TORCH_SHOW_CPP_STACKTRACES": "1", "PYTHONFAULTHANDLER": "1"}
    if name == "report-blocking":
        env["CUDA_LAUNCH_BLOCKING"] = "1"
    start = time.perf_counter()
    command = [sys.executable, __file__, "--variant", name, "--device", device]
    if name == "pytest-child":
        env["MODEL_PROPS_CUDA_CHILD"] = "1"  # the test runs in this process (property_tests/cuda/)
        command = [sys.executable, "-m", "pytest", f"{TEST}[resnet-spectrum]", "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    code = proc.returncode
    lines = reason_lines(proc.stdout + proc.stderr)
    return {"variant": name, "what": VARIANTS[name], "exit": code,
            "signal": signal.Signals(-code).name if code < 0 else None,
            "seconds": round(time.perf_counter() - start, 1), "head": lines[:15], "tail": lines[-40:]}  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--device", default="cuda")
    p.add_argument("--only", nargs="*", choices=VARIANTS, help="these variants alone")
    p.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # inside a child
    args = p.parse_args()
    if args.variant:
        _variant(args.variant, args.device)
        return 0
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda name: _child(name, args.device), args.only or VARIANTS))
    for r in results:
        print(f"{r['variant']:16s} exit {r['exit']:>4} {r['signal'] or '':8s} {r['seconds']:6.1f} s  "
              f"{r['tail'][-1] if r['tail'] else ''}", flush=True)  # fmt: skip
    if args.out:
        from provenance import record  # benchmarks/ is this script's folder

        stamp = record(
            __file__, device=args.device, runs=["model_props.measurements", "model_props.measurements.functional"]
        )
        args.out.write_text(json.dumps({"provenance": stamp, "device": args.device, "variants": results}, indent=1)
                            + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
