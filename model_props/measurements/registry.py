"""Report kinds, and :func:`measure`: a model's report of one kind, from the measurement cache or measured now.

A report holds one measurement kind's samples; claims read it through ``Part`` statistics
``(report, resampled indices) -> number`` over the report's sampling units:

===========  ==========================================  ================================================
kind         report                                      sampling units
===========  ==========================================  ================================================
units        :class:`~.units.UnitReport`                 ``images`` (Fourier, variance, skip, attention), ``batches`` (CKA)
spectrum     :class:`~.spectrum.SpectrumReport`          ``batches`` (Hessian mini-batches of the training split; in chunks)
fit          :class:`~.fit.FitReport`                    ``images`` (test), ``train_images``
noise        :class:`~.noise.NoiseReport`                ``images`` (clean, white noise, 9 frequency bands; in chunks)
corruption   :class:`~.corruption.CorruptionReport`      ``images`` (clean, 8 corruptions x 5 severities; in chunks)
attack       :class:`~.attack.AttackReport`              ``images`` (clean, FGSM and PGD at each eps; in chunks)
attack_test  :class:`~.attack.AttackReport`              ``images`` (every test image: attack's chunks at the smallest eps)
lesion       :class:`~.lesion.LesionReport`              ``images`` (intact, each removable unit lesioned)
position     :class:`~.position.PositionReport`          ``positions`` (query positions of the token grid)
occlusion    :class:`~.occlusion.OcclusionReport`        ``images`` (clean, half of the 8x8 cells occluded; in chunks)
probe        :class:`~.probe.ProbeReport`                ``images`` (scored half; a location probe per unit)
cross        :class:`~.cross.CrossReport` (of a pair)    ``batches`` (CKA of every unit of A against every unit of B)
===========  ==========================================  ================================================

A *pair* kind (``cross``) is measured on two models (``measure(..., other=...)``) and keyed by both identities.
A *chunked* kind (``spectrum``, ``attack``, ``attack_test``, ``noise``, ``corruption``, ``occlusion``) is measured in
chunks of a seeded order, each its own cache entry (:mod:`.chunks`; the Hessian's also keyed by the training loss),
and ``measure(..., upto=n)`` gives its report on the first n units: the looks of a sequential verdict, and two kinds
that share their chunks.

A cache entry is the folder ``<cache>/measurements/<kind>/<key>/`` (``report.npz`` and a manifest), published
and verified through the shared entry protocol (:class:`~model_props.cache.CacheEntry`). The key hashes the model's identity (its
checkpoint's sha256, plus the mutation of a mutant), the dataset, the kind's settings, the seed, the device
type, the training loss (for the Hessian), and the source hash of the code the report was computed by: the
import closure of the kind's module, of the anatomy's mapping for the kinds that read units, and of the
mutants' module for a mutant (:func:`code_hash`). ``remeasure`` ignores the cache. A model without an
identity (built in memory) is never cached.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..cache import source_hash
from ..errors import MeasurementError, choices
from ..training.recipes import MeasurementSettings
from .attack import AttackReport, attack_kind_report, attack_test_report
from .cache import load_report, report_entry, save_report
from .chunks import Chunks, cached_chunks
from .corruption import CorruptionReport, corruption_kind_report
from .cross import CrossReport, cross_report
from .fit import FitReport, fit_kind_report
from .inputs import MeasureInput
from .lesion import LesionReport, lesion_kind_report
from .noise import NoiseReport, noise_kind_report
from .occlusion import OcclusionReport, occlusion_kind_report
from .position import PositionReport, position_kind_report
from .probe import ProbeReport, probe_kind_report
from .spectrum import SpectrumReport, spectrum_report
from .units import UnitReport, units_report

__all__ = [
    "ReportKind",
    "Kind",
    "REPORT_KINDS",
    "MeasureInput",
    "measure",
    "NotCached",
    "chunk_key",
    "measurement_key",
    "code_modules",
    "code_hash",
]

ReportKind = Literal["units", "spectrum", "fit", "noise", "corruption", "attack", "attack_test", "lesion", "position",
                     "occlusion", "cross", "probe"]  # fmt: skip
ANATOMY_CODE = "model_props.anatomy.mapping"  # which units a model has
MUTANT_CODE = "model_props.mutation.mutants"  # how a mutant was made (named, not imported: it is a layer above)
CACHE_CODE = "model_props.measurements.cache"  # how a report is stored


Compute = Callable[..., Any]  # (input, settings, seed, device) -> report; a pair kind also takes the other input


@dataclass(frozen=True)
class Kind:
    compute: Compute
    report: type  # the report class: ``from_arrays(arrays, units)`` and ``to_arrays()``
    module: str  # the module that computes it (its import closure keys the cache)
    settings: tuple[str, ...]  # the MeasurementSettings fields it reads
    reads_anatomy: bool = False
    uses_loss: bool = False
    pair: bool = False  # measured on two models (``measure(..., other=...)``)
    # measured in chunks of a seeded order (:mod:`.chunks`): the whole report's size; a report on its first ``upto``
    # units is then a prefix of it (the looks of a sequential verdict), and ``chunks`` names the folder they share
    size: Callable[[MeasureInput, MeasurementSettings], int] | None = None
    chunks: str = ""


def _test_images(setting: str | None) -> Callable[[MeasureInput, MeasurementSettings], int]:
    """A chunked kind's whole sample of test images: the profile's ``setting`` of them (every one where None), at
    most the test split."""

    def size(inp: MeasureInput, m: MeasurementSettings) -> int:
        return len(inp.test) if setting is None else min(getattr(m, setting), len(inp.test))

    return size


def _hessian_batches(inp: MeasureInput, m: MeasurementSettings) -> int:
    """The spectrum's whole sample: the profile's ``hessian_batches`` (drawn with replacement across passes of the
    training split, so never fewer)."""
    return m.hessian_batches


_M = "model_props.measurements."
REPORT_KINDS: dict[str, Kind] = {
    "units": Kind(units_report, UnitReport, _M + "units", ("n_images", "batch_size"), reads_anatomy=True),
    "spectrum": Kind(
        spectrum_report,
        SpectrumReport,
        _M + "spectrum",
        ("hessian_batches", "hessian_batch_size", "hessian_top_k", "hessian_tol"),
        uses_loss=True,
        size=_hessian_batches,
        chunks="spectrum",
    ),
    "fit": Kind(fit_kind_report, FitReport, _M + "fit", ("fit_images",)),
    "noise": Kind(
        noise_kind_report,
        NoiseReport,
        _M + "noise",
        ("noise_images",),
        size=_test_images("noise_images"),
        chunks="noise",
    ),
    "corruption": Kind(
        corruption_kind_report,
        CorruptionReport,
        _M + "corruption",
        ("corruption_images",),
        size=_test_images("corruption_images"),
        chunks="corruption",
    ),  # fmt: skip
    "attack": Kind(
        attack_kind_report,
        AttackReport,
        _M + "attack",
        ("attack_images", "attack_epsilons_255", "pgd_steps"),
        size=_test_images("attack_images"),
        chunks="attack",
    ),  # fmt: skip
    "attack_test": Kind(
        attack_test_report,
        AttackReport,
        _M + "attack",
        ("attack_epsilons_255", "pgd_steps"),
        size=_test_images(None),
        chunks="attack",
    ),  # the same chunks, continued  # fmt: skip
    "lesion": Kind(lesion_kind_report, LesionReport, _M + "lesion", ("lesion_images",), reads_anatomy=True),
    "position": Kind(position_kind_report, PositionReport, _M + "position", (), reads_anatomy=True),
    "occlusion": Kind(
        occlusion_kind_report,
        OcclusionReport,
        _M + "occlusion",
        ("corruption_images",),
        size=_test_images("corruption_images"),
        chunks="occlusion",
    ),  # fmt: skip
    "cross": Kind(cross_report, CrossReport, _M + "cross", ("n_images", "batch_size"), reads_anatomy=True, pair=True),
    "probe": Kind(probe_kind_report, ProbeReport, _M + "probe", ("n_images", "batch_size"), reads_anatomy=True),
}


def code_modules(kind: str, mutant: bool = False) -> tuple[str, ...]:
    """The modules whose import closure a ``kind`` report's cache key hashes (see the module docstring)."""
    spec = REPORT_KINDS[kind]
    return (
        spec.module,
        CACHE_CODE,
        *([ANATOMY_CODE] if spec.reads_anatomy else []),
        *([MUTANT_CODE] if mutant else []),
    )


def code_hash(kind: str, mutant: bool = False) -> str:
    """The source hash of the code a ``kind`` report is computed by."""
    return source_hash(*code_modules(kind, mutant))


def measurement_key(
    kind: str, inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, other: MeasureInput | None = None
) -> str:
    spec = REPORT_KINDS[kind]
    key: dict[str, Any] = {
        "kind": kind,
        "model": inp.identity,
        "dataset": inp.dataset,
        "settings": m.select(*spec.settings),
        "seed": seed,
        "device": device.split(":")[0],
        "code": code_hash(kind, inp.is_mutant),
        "loss": repr(inp.loss) if spec.uses_loss else None,
    }
    if other is not None:  # a pair: both identities and datasets, and the mutants' code if either is one
        key.update(model=[inp.identity, other.identity], dataset=[inp.dataset, other.dataset],
                   code=code_hash(kind, inp.is_mutant or other.is_mutant))  # fmt: skip
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def chunk_key(kind: str, inp: MeasureInput, seed: int, device: str) -> dict[str, Any]:
    """What every chunk of a chunked ``kind``'s report of ``inp`` is keyed by, beside its own label (which holds the
    settings it is measured with): the model, dataset, sample seed, device type, code and, for the Hessian, the
    training loss."""
    key: dict[str, Any] = {"model": inp.identity, "dataset": inp.dataset, "seed": seed,
                           "device": device.split(":")[0], "code": code_hash(kind, inp.is_mutant)}  # fmt: skip
    if REPORT_KINDS[kind].uses_loss:
        key["loss"] = repr(inp.loss)
    return key


class NotCached(LookupError):
    """A report asked for from the cache only (``measure(..., cached_only=True)``) that it lacks, whole or in part."""


def _recalled_only(chunks: Chunks) -> Chunks:
    """``chunks`` that recall a kept chunk and raise :class:`NotCached` for any other instead of computing it."""

    def not_cached() -> Any:
        raise NotCached("a chunk of the report is not in the measurement cache")

    return lambda label, compute: chunks(label, not_cached)


def measure(
    kind: str,
    inp: MeasureInput,
    m: MeasurementSettings,
    *,
    seed: int,
    device: str = "cpu",
    cache_dir: Path | None = None,
    remeasure: bool = False,
    other: MeasureInput | None = None,
    upto: int | None = None,
    cached_only: bool = False,
) -> Any:
    """The ``kind`` report of a model (of the pair ``inp``, ``other`` for a pair kind): from the measurement
    cache, or measured now (and cached). A chunked kind's report is on its first ``upto`` units (default: all),
    each chunk cached on its own. ``cached_only``: from the cache or not at all (:class:`NotCached`, measuring
    nothing; so too where the report is not cached, or measured again, ``remeasure``)."""
    if kind not in REPORT_KINDS:
        raise MeasurementError(f"unknown measurement kind={kind!r}; valid: {choices(REPORT_KINDS)}")
    spec = REPORT_KINDS[kind]
    if spec.pair != (other is not None):
        raise MeasurementError(f"kind={kind!r} is measured on {'two models' if spec.pair else 'one model'}")
    args = (inp, m, seed, device, *([other] if other is not None else []))
    never = inp.identity is None or (other is not None and other.identity is None)  # a model built in memory
    kept = None if never else cache_dir  # the folder the report is kept in, if any
    if cached_only and (kept is None or remeasure):
        raise NotCached(f"the {kind} report of {inp.name} is {'measured again' if remeasure else 'never cached'}")
    if spec.size is not None:
        whole = spec.size(inp, m)
        upto = whole if upto is None else min(upto, whole)
        if kept is None:
            return spec.compute(*args, upto=upto)
        key = chunk_key(kind, inp, seed, device)
        meta = {"kind": spec.chunks, "model": inp.name, "identity": inp.identity, "code": key["code"]}
        chunks = cached_chunks(kept, spec.chunks, key, meta, device=device, remeasure=remeasure)
        return spec.compute(*args, upto=upto, chunks=_recalled_only(chunks) if cached_only else chunks)
    if upto is not None:
        raise MeasurementError(f"kind={kind!r} is measured whole, not on its first {upto} units")
    if kept is None:
        return spec.compute(*args)
    entry = report_entry(kept, kind, measurement_key(kind, inp, m, seed, device, other))
    with entry.locked():
        cached = None if remeasure else load_report(entry, spec.report, inp.anatomy.spatial_units)
        if cached is not None:
            return cached
        if cached_only:
            raise NotCached(f"the {kind} report of {inp.name} is not in the measurement cache")
        start = time.perf_counter()
        report = spec.compute(*args)
        meta = {
            "kind": kind,
            "model": inp.name if other is None else [inp.name, other.name],
            "identity": inp.identity if other is None else [inp.identity, other.identity],
            "seconds": round(time.perf_counter() - start, 2),
            "code": code_hash(kind, inp.is_mutant or (other is not None and other.is_mutant)),
        }
        entry.write({"report": save_report(report)}, meta, device=device)
        return report
