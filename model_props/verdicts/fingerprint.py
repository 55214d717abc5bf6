"""What a seed study's entries were computed from, so that an entry whose sources changed is stale: per claim its
rules, its statistics' source (the catalogue modules it imports, transitively), and per report kind it reads the
measurement code and settings; per recipe its fields, its model's source (a factory's) and the training code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..cache import source_hash
from ..cache.source import ROOT
from ..claims.base import Claim
from ..errors import StudyError
from ..measurements.registry import code_hash
from ..training.checkpoints import code_hash as training_code_hash
from ..training.profiles import Profile

__all__ = ["CATALOGUE", "statistics_hash", "claim_fingerprint", "recipe_fingerprint"]

CATALOGUE = "model_props.claims"


def statistics_hash(claim: Claim, root: Path = ROOT) -> str:
    """The source of a claim's statistics: the import closure, within the catalogue, of the module that declares it
    (every catalogue module it takes a helper from, transitively, and the claim base; not the catalogue's
    ``__init__``, which imports every claim). The measures the statistics call belong to the measurement code.
    ``root``: the package's folder (another copy of it in tests)."""
    from ..claims import SOURCES

    if claim.id not in SOURCES:
        raise StudyError(f"claim {claim.id!r} is not in the catalogue; a study holds only the catalogue's claims")
    return source_hash(SOURCES[claim.id], root=root, within=CATALOGUE)


def claim_fingerprint(claim: Claim, profile: Profile) -> dict[str, Any]:
    """What a study entry's per-seed estimates were computed from, beside the recipes: the claim's rules, the
    source of its statistics (:func:`statistics_hash`), and per report kind it reads the measurement code's source
    hash and the profile's measurement settings."""
    from ..measurements.registry import REPORT_KINDS

    kinds = sorted({p.report for p in claim.parts})
    fingerprint = {
        "rules": claim.fingerprint(),
        "statistics": statistics_hash(claim),
        "measurement": {k: code_hash(k) for k in kinds},
        "settings": {k: profile.measurement.select(*REPORT_KINDS[k].settings) for k in kinds},
    }
    return json.loads(json.dumps(fingerprint))  # as the study stores it (tuples become lists)


def recipe_fingerprint(profile: Profile, name: str) -> str:
    return f"{profile.recipe(name).fingerprint()}/{training_code_hash()}"
