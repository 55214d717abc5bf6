"""What can be checked about a user's inputs before the first test (and before anything trains): every user model
(its name or factory, its anatomy, each --checkpoint and whether it fits), a pretrained model's image folder (its layout,
the mapping of its class folders onto the labels of the model and of every comparator) and whether the folder's
images are enough for the statistics of the selected claims. A bad folder is one line at session start, not a
traceback in every test; a part whose statistic needs more images than ``--claims-images`` gives is skipped, and the
session says once which value would run it.

Every statistic declares its minimum sample (``Part.min_samples``, in its sampling unit); :func:`images_needed`
says how many images of the folder give that many units: CKA's mini-batches take ``batch_size`` images each (the last
may be partial, but the unbiased HSIC needs 4), the location probe scores half of its images, and the bootstrap over
images needs as many images as units.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..claims.base import Claim, Part
from ..store.model_store import ModelStore
from ..training.recipes import MeasurementSettings
from ..zoo.pretrained import parse_pretrained

__all__ = ["images_needed", "too_few", "check_pretrained", "check_user_models"]


def images_needed(part: Part, m: MeasurementSettings) -> int | None:
    """The fewest images of a folder that give ``part`` its minimum sample (None: no folder count does, e.g. the
    Hessian's batches, which are drawn from train/ whatever its size once it holds one batch)."""
    if part.sampling == "batches" and part.report in ("units", "cross"):
        return part.min_samples * m.batch_size
    if part.sampling == "images":
        return 2 * part.min_samples if part.report == "probe" else part.min_samples
    return None


def too_few(part: Part, m: MeasurementSettings, images: int) -> str | None:
    """Why ``part`` cannot run on ``images`` images (with the option value that would run it), or None."""
    needed = images_needed(part, m)
    if needed is None or images >= needed:
        return None
    unit = f"CKA mini-batches of {m.batch_size} images" if part.sampling == "batches" else part.sampling
    return (f"'{part.statistic_name}' needs at least {part.min_samples} {unit}, and --claims-images {images} gives "
            f"fewer; run with --claims-images {needed} or more")  # fmt: skip


def check_pretrained(store: ModelStore, claims: Iterable[Claim]) -> list[str]:
    """Load every pretrained model under test and every comparator on the folder (a bad folder, an unknown label,
    a missing weights file raise their one-line error now), and list the parts of ``claims`` that their images are
    too few for."""
    s = store.settings
    specs = [n for n in (*s.models, *s.versus.values()) if parse_pretrained(n) is not None]
    short: dict[str, None] = {}
    for spec in specs:
        tested = store.get(spec)
        images = len(store.dataset(tested.dataset).test)
        for claim in claims:
            for part in claim.parts:
                why = too_few(part, store.measurement_settings(tested), images)
                if part.applies(tested.anatomy) is None and why:
                    short[f"{claim.id} [{part.name}] on {spec}: {why}"] = None
    return list(short)


def check_user_models(store: ModelStore) -> None:
    """Build every user model under test and every user comparator, before any reference trains: an unknown timm
    name, a factory that cannot be imported or built, a model that cannot be mapped into units, and a --checkpoint
    that is missing, unreadable or made for another architecture raise their one-line error now. A checkpoint is
    loaded here once and kept for the tests; a model without one is built untrained (nothing is trained)."""
    s = store.settings
    for spec in dict.fromkeys((*s.models, *s.versus.values())):
        if parse_pretrained(spec) is not None:
            continue  # pretrained weights: check_pretrained
        if spec in s.checkpoints:  # a user model's, or a reference's, weights
            store.replicas(spec)
        elif spec not in store.profile.recipes:  # a reference without weights is trained: nothing to check
            store.architecture(spec)
