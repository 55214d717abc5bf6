"""Reports: every measurement kind, computed once per model and checkpoint and cached beside the models.

A report holds one measurement kind's samples; claims read it through ``Part`` statistics
``(report, resampled indices) -> number`` over the report's sampling units:

=========  ==============================  ==========================================================
kind       report                          sampling units
=========  ==============================  ==========================================================
units      :class:`~.measures.UnitReport`  ``images`` (Fourier, variance, skip, attention), ``batches`` (CKA)
spectrum   :class:`~.measures.SpectrumReport`  ``batches`` (Hessian mini-batches of the training split)
fit        :class:`~.measures.FitReport`   ``images`` (test), ``train_images``
noise      ``NoiseReport``                 ``images`` (clean, white noise, 9 frequency bands)
corruption ``CorruptionReport``            ``images`` (clean, 8 corruptions x 5 severities)
attack     ``AttackReport``                ``images`` (clean, FGSM and PGD at each eps)
lesion     ``LesionReport``                ``images`` (intact, each removable unit lesioned)
=========  ==============================  ==========================================================

The cache entry of a report is ``<cache>/measurements/<kind>/<key>.npz`` plus a JSON sidecar, where the key
hashes the model's identity (its checkpoint's sha256, plus the mutation for a mutant), the measurement's
settings, the seed, and the source of the measurement code (and the torch/numpy versions). Entries are
written atomically under a lock and verified by sha256 when read; a damaged entry is measured again, and
``--claims-remeasure`` ignores the cache. A model without an identity (built in memory) is never cached.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .anatomy import Anatomy
from .cache import atomic_write, entry_lock, sha256_file
from .data import Split
from .errors import MeasurementError, choices
from .recipes import MeasurementSettings

__all__ = ["ReportKind", "REPORT_KINDS", "MeasureInput", "measure", "measurement_key", "measurement_code_hash"]

ReportKind = Literal["units", "spectrum", "fit", "noise", "corruption", "attack", "lesion"]
_CODE = ("measures", "capture.py", "anatomy.py", "mutants.py", "measurements.py", "data", "zoo")


@dataclass(frozen=True)
class MeasureInput:
    """Everything a measurement reads about one model."""

    name: str
    model: Any  # a Classifier in eval mode
    anatomy: Anatomy
    identity: str | None  # checkpoint sha256 (+ "+mutation"); None: not cacheable
    test: Split
    train: Split  # the model's own training split (for the Hessian batches and the training NLL)
    loss: Any  # measures.TrainingLoss
    dataset: str


@functools.lru_cache(maxsize=1)
def measurement_code_hash() -> str:
    import torch

    root = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{torch.__version__}|{np.__version__}".encode())
    for name in _CODE:
        for f in sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]:
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _units(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures import measure_units

    return measure_units(inp.model, inp.anatomy, inp.test, n_images=m.n_images, batch_size=m.batch_size, seed=seed,
                         device=device)


def _spectrum(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures import hessian_spectrum

    return hessian_spectrum(inp.model, inp.train, inp.loss, n_batches=m.hessian_batches, batch_size=m.hessian_batch_size,
                            k=m.hessian_top_k, tol=m.hessian_tol, seed=seed, device=device, name=repr(inp.name))


def _fit(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures import fit_report

    return fit_report(inp.model, inp.test, inp.train, n_images=m.fit_images, seed=seed, device=device)


def _noise(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures.noise import noise_report

    return noise_report(inp.model, inp.test, n_images=m.noise_images, seed=seed, device=device)


def _corruption(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures.corruptions import corruption_report

    return corruption_report(inp.model, inp.test, n_images=m.corruption_images, seed=seed, device=device)


def _attack(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures.adversarial import attack_report

    return attack_report(inp.model, inp.test, n_images=m.attack_images, epsilons=m.attack_epsilons,
                         pgd_steps=m.pgd_steps, seed=seed, device=device, name=repr(inp.name))


def _lesion(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str):
    from .measures.lesion import lesion_report

    return lesion_report(inp.model, inp.anatomy, inp.test, n_images=m.lesion_images, seed=seed, device=device)


def _report_class(kind: str):
    from . import measures
    from .measures.adversarial import AttackReport
    from .measures.corruptions import CorruptionReport
    from .measures.lesion import LesionReport
    from .measures.noise import NoiseReport

    return {"units": measures.UnitReport, "spectrum": measures.SpectrumReport, "fit": measures.FitReport,
            "noise": NoiseReport, "corruption": CorruptionReport, "attack": AttackReport, "lesion": LesionReport}[kind]


@dataclass(frozen=True)
class _Kind:
    compute: Callable[[MeasureInput, MeasurementSettings, int, str], Any]
    settings: tuple[str, ...]  # the MeasurementSettings fields it reads
    uses_loss: bool = False


REPORT_KINDS: dict[str, _Kind] = {
    "units": _Kind(_units, ("n_images", "batch_size")),
    "spectrum": _Kind(_spectrum, ("hessian_batches", "hessian_batch_size", "hessian_top_k", "hessian_tol"), uses_loss=True),
    "fit": _Kind(_fit, ("fit_images",)),
    "noise": _Kind(_noise, ("noise_images",)),
    "corruption": _Kind(_corruption, ("corruption_images",)),
    "attack": _Kind(_attack, ("attack_images", "attack_epsilons_255", "pgd_steps")),
    "lesion": _Kind(_lesion, ("lesion_images",)),
}


def measurement_key(kind: str, inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> str:
    spec = {"kind": kind, "model": inp.identity, "dataset": inp.dataset, "settings": m.select(*REPORT_KINDS[kind].settings),
            "seed": seed, "device": device.split(":")[0], "code": measurement_code_hash(),
            "loss": repr(inp.loss) if REPORT_KINDS[kind].uses_loss else None}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:20]


def _read(path: Path, sidecar: Path, kind: str, anatomy: Anatomy):
    """The cached report, or None if the entry is absent, damaged or does not fit."""
    try:
        meta = json.loads(sidecar.read_text())
        if not path.is_file() or meta.get("sha256") != sha256_file(path):
            return None
        with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        return _report_class(kind).from_arrays(arrays, anatomy.spatial_units)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None


def _write(report: Any, path: Path, sidecar: Path, kind: str, inp: MeasureInput, seconds: float) -> None:
    def save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **report.to_arrays())

    atomic_write(path, save)
    meta = {"kind": kind, "model": inp.name, "identity": inp.identity, "sha256": sha256_file(path),
            "seconds": round(seconds, 2), "code": measurement_code_hash()}
    atomic_write(sidecar, lambda tmp: tmp.write_text(json.dumps(meta, indent=2)))


def measure(kind: str, inp: MeasureInput, m: MeasurementSettings, *, seed: int, device: str = "cpu",
            cache_dir: Path | None = None, remeasure: bool = False) -> Any:
    """The ``kind`` report of a model: from the measurement cache, or measured now (and cached)."""
    import time

    if kind not in REPORT_KINDS:
        raise MeasurementError(f"unknown measurement kind={kind!r}; valid: {choices(REPORT_KINDS)}")
    compute = REPORT_KINDS[kind].compute
    if cache_dir is None or inp.identity is None:
        return compute(inp, m, seed, device)
    key = measurement_key(kind, inp, m, seed, device)
    path = cache_dir / "measurements" / kind / f"{key}.npz"
    sidecar = path.with_name(f"{key}.json")
    with entry_lock(path):
        if not remeasure and (report := _read(path, sidecar, kind, inp.anatomy)) is not None:
            return report
        start = time.perf_counter()
        report = compute(inp, m, seed, device)
        _write(report, path, sidecar, kind, inp, time.perf_counter() - start)
        return report
