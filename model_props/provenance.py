"""Where a number comes from: package versions and a description of the machine (issue: provenance).

Each trained model's cache entry (its manifest and its weights' metadata) and ``summary.json`` record
:func:`provenance`, so that a number can be traced and a gate's baseline checked for comparability (same package,
torch, timm and numpy versions); a measurement's manifest records the host, process and device that produced it.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib import metadata
from typing import Any

__all__ = ["versions", "machine", "provenance", "commit", "checkpoint_versions", "VERSIONED"]
__not_in_cache_keys__ = "describes versions and the machine; computes no cached value"

VERSIONED = ("model-props", "torch", "timm", "numpy")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    """Installed versions of the packages that determine a trained model or a measurement."""
    return {name: _version(name) for name in VERSIONED}


@functools.lru_cache(maxsize=1)
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(device: str = "cpu") -> dict[str, Any]:
    """The machine a number was produced on: OS, CPU model and the instruction set torch dispatches to, cores, torch
    threads and the device; on CUDA the GPU, the CUDA version and the TF32 and cuDNN settings the run had."""
    import torch

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        # the instruction set torch's CPU kernels dispatch to (e.g. AVX512, AVX2): machines that differ in it train
        # the same recipe to other weights
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": device,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
        info["cuda"] = torch.version.cuda
        # the numerics a CUDA run had: TF32 in matmuls and cuDNN convolutions, cuDNN's autotuner and determinism
        info["tf32"] = {"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn": torch.backends.cudnn.allow_tf32}
        info["cudnn"] = {
            "benchmark": torch.backends.cudnn.benchmark,
            "deterministic": torch.backends.cudnn.deterministic,
        }
    return info


def provenance(device: str = "cpu") -> dict[str, Any]:
    return {"versions": versions(), "machine": machine(device)}


def commit(folder: Any) -> str | None:
    """The git commit ``folder`` is at (``+dirty`` where its tracked files differ from it); None outside a git
    repository or without git."""
    git = ["git", "-C", str(folder)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def checkpoint_versions(path: Any) -> dict[str, str] | None:
    """The versions a model-props checkpoint was produced with (its safetensors header), None if unrecorded."""
    if not str(path).endswith(".safetensors"):
        return None
    import json

    try:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as fh:
            recorded = json.loads((fh.metadata() or {}).get("model_props", "{}")).get("versions", {})
    except Exception:  # not a safetensors file we can read, or not one of ours: nothing recorded
        return None
    found = {k: str(recorded[k]) for k in VERSIONED if recorded.get(k) is not None}
    return found or None
