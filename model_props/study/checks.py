"""What a seed study must pass before it is written: it holds no seed of a live run, its held-out seeds confirm its
setting seeds (at least 90 % of their estimates inside the setting seeds' prediction intervals), and what ``--add``
names exists and extends a study of the same seeds and recipes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..claims import list_claims
from ..config.settings import Settings
from ..errors import StudyError, choices
from ..store.pairs import CONTROL_SEED_OFFSET
from ..verdicts.study import SCHEMA_VERSION, SeedStudy, recipe_fingerprint, regenerate

__all__ = ["forbidden_seeds", "check_seeds", "confirm", "claim_ids", "study_to_extend"]


def forbidden_seeds(settings: Settings) -> dict[int, str]:
    """The seeds a study may not use, each with why: the seeds the profile's recipes train with in a session (the
    live seed) and their independent runs (seed + 1000), and the seeds whose own independent runs would be one of
    those."""
    profile = settings.profile_data
    live = sorted({r.seed for r in profile.recipes.values()})
    found: dict[int, str] = {}
    for seed in live:
        found[seed] = f"the live seed of profile {profile.name!r} (the seed a session trains with)"
        found[seed + CONTROL_SEED_OFFSET] = f"the seed of the live seed {seed}'s independent runs"
        found[seed - CONTROL_SEED_OFFSET] = f"its independent runs would train with the live seed {seed}"
    return found


def check_seeds(settings: Settings, seeds: Sequence[int]) -> None:
    """A :class:`StudyError` naming every seed of ``seeds`` a study may not use (:func:`forbidden_seeds`)."""
    forbidden = forbidden_seeds(settings)
    if bad := [s for s in seeds if s in forbidden]:
        raise StudyError(
            "a seed study holds no seed of a live run: "
            + "; ".join(f"seed {s} is {forbidden[s]}" for s in bad)
            + f"; choose others (e.g. --seeds {' '.join(map(str, [s for s in range(100) if s not in forbidden][: len(seeds)]))})"
        )


def confirm(data: dict[str, Any], path: Path) -> SeedStudy:
    """The study about to be written, if its held-out seeds confirm its setting seeds (module docstring); else a
    :class:`StudyError` naming the estimates outside their prediction interval. What each part's held-out seeds
    did (confirmed, decided with more seeds, did not replicate) is printed either way."""
    study = SeedStudy.from_json(data, str(path))
    claims = [c for c in list_claims() if c.id in study.claims]
    if len(study.confirm_seeds) == 0:
        return study
    counts: dict[str, list[str]] = {}
    for claim in claims:
        for model in study.evaluated_on(claim):
            for part, replication in study.replication(claim, model).items():
                counts.setdefault(replication.category, []).append(f"{claim.id} [{part}] on {model}")
    for category, parts in sorted(counts.items()):
        print(f"{category}: {len(parts)} parts" + ("" if category == "confirmed" else ": " + "; ".join(parts)),
              flush=True)  # fmt: skip
    found = study.confirmation(claims)
    print(f"held-out confirmation: {found.inside} of {found.total} ({found.share:.1%}) held-out estimates inside the "
          f"setting seeds' 95 % prediction intervals", flush=True)  # fmt: skip
    if not found.enough:
        raise StudyError(
            f"the held-out seeds {list(study.confirm_seeds)} confirm only {found.share:.1%} of the setting seeds' "
            f"predictions (at least 90 % needed), so no study is written to {path}; outside: "
            + "; ".join(found.outside)
        )
    return study


def claim_ids(patterns: Sequence[str]) -> list[str]:
    """The ids of the claims that match the globs, in catalogue order; a glob that matches none is an error."""
    matched: set[str] = set()
    for pattern in patterns:
        found = {c.id for c in list_claims(pattern)}
        if not found:
            raise StudyError(f"--add {pattern!r} matches no claim; valid: {choices(c.id for c in list_claims())}")
        matched |= found
    return [c.id for c in list_claims() if c.id in matched]


def study_to_extend(path: Path, seeds: Sequence[int], settings: Settings, names: Sequence[str]) -> dict[str, Any]:
    """The study at ``path`` that ``--add`` extends: the same seeds, and every recipe it holds that the added
    claims read still as it was trained."""
    if not path.is_file():
        raise StudyError(f"--add extends an existing study, and there is none at {path}; run the whole study first: "
                         f"{regenerate(settings.profile)}")  # fmt: skip
    base = json.loads(path.read_text())
    if base.get("schema_version") != SCHEMA_VERSION or list(base["seeds"]) != list(seeds):
        raise StudyError(f"{path} has seeds {base['seeds']} and schema {base.get('schema_version')}; --add measures "
                         f"with the study's own seeds (--seeds {' '.join(map(str, base['seeds']))}) and schema "
                         f"{SCHEMA_VERSION}")  # fmt: skip
    profile = settings.profile_data
    stale = [n for n in names if n in base["recipes"] and base["recipes"][n]["fingerprint"] != recipe_fingerprint(profile, n)]  # fmt: skip
    if stale:
        raise StudyError(f"the study's recipes {', '.join(stale)} no longer match the recipes or the training code; "
                         f"an added claim cannot join it: {regenerate(settings.profile)}")  # fmt: skip
    return base
