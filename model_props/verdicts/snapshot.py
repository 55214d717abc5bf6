"""The expectation snapshot: the reviewed, committed verdict per (claim, reference, part) that the claim tests assert.

Like a syrupy snapshot, it is written only by an explicit command (``model-props expectations --update``), which
prints its diff for review, and read by everything else: collection takes its marks from it (a reference whose
snapshot holds a contradicted part is a strict ``xfail(raises=ClaimContradicted)``) and a claim test asserts that
each part's verdict over the study's seeds equals its entry. Nothing computes an expectation from the data a test
checks: a study whose verdicts move (a regenerated study, a changed statistic) fails the tests that move, naming
the part, until the snapshot is updated and its diff reviewed.

The file, ``<profile>-expectations.json`` beside the study (the user's recipes folder first, then the built-in
data), holds where the verdicts came from (the study file, its seeds and date) and one entry per line::

    {"claim": "park2022.msa-lowpass", "model": "vit", "part": "msa-later-half", "expected": "supported"},
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..claims.base import Claim
from .outcome import Expected, PartVerdict
from .study import SeedStudy, read_fixture

__all__ = ["SCHEMA_VERSION", "Snapshot", "snapshot_name", "update_command", "load_snapshot",
           "snapshot_of_study", "render", "diff", "changed_parts"]  # fmt: skip

SCHEMA_VERSION = 1


def snapshot_name(profile: str) -> str:
    return f"{profile}-expectations.json"


def update_command(profile: str) -> str:
    return f"model-props expectations --update --profile {profile}"


@dataclass(frozen=True)
class Snapshot:
    """The expectation snapshot of one profile (module docstring)."""

    profile: str
    study: Mapping[str, Any]  # where the verdicts came from: file, seeds, date
    entries: Mapping[tuple[str, str], Mapping[str, PartVerdict]]  # (claim, model) -> part -> verdict
    source: str = ""

    def expected(self, claim: Claim, model: str) -> Expected | None:
        """The claim's expected verdicts on ``model`` (None where the snapshot has none: not a reference it covers)."""
        parts = self.entries.get((claim.id, model))
        if parts is None:
            return None
        return Expected(parts, self.source or snapshot_name(self.profile), update_command(self.profile))

    def covers(self, model: str) -> bool:
        return any(m == model for _, m in self.entries)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> Snapshot:
        entries: dict[tuple[str, str], dict[str, PartVerdict]] = {}
        for e in data["entries"]:
            entries.setdefault((e["claim"], e["model"]), {})[e["part"]] = e["expected"]
        return cls(data["profile"], data["study"], entries, source)


def snapshot_of_study(study: SeedStudy, claims: Sequence[Claim]) -> Snapshot:
    """The verdict of every part of every claim on every reference the study evaluates it on, over all its seeds."""
    entries: dict[tuple[str, str], dict[str, PartVerdict]] = {}
    for claim in claims:
        for model in study.evaluated_on(claim):
            outcome = study.evaluate(claim, model)
            entries[(claim.id, model)] = {p.part.name: p.verdict for p in outcome.parts}
    where = {"file": Path(study.source).name, "seeds": list(study.seeds), "date": study.date}
    return Snapshot(study.profile, where, entries)


def render(snapshot: Snapshot, written: str | None = None) -> str:
    """The file's text: a header of a few lines, then one entry per line, so that a changed verdict is a one-line
    diff."""
    head = {"schema_version": SCHEMA_VERSION, "profile": snapshot.profile, "update": update_command(snapshot.profile)}
    rows = [
        json.dumps({"claim": claim, "model": model, "part": part, "expected": verdict})
        for (claim, model), parts in snapshot.entries.items()
        for part, verdict in parts.items()
    ]
    lines = [
        json.dumps(head)[:-1] + ",",
        f' "study": {json.dumps(dict(snapshot.study))},',
        f"{WRITTEN}{json.dumps(written or date.today().isoformat())},",
        ' "entries": [',
        *(f"  {row}," for row in rows[:-1]),
        *(f"  {row}" for row in rows[-1:]),
        "]}",
    ]
    return "\n".join(lines) + "\n"


WRITTEN = ' "written": '  # the line of the date a snapshot was written on, left out of its diff


def diff(old: str, new: str, name: str) -> list[str]:
    """A unified diff of two snapshot texts (without context lines), leaving out the date each was written on."""

    def lines(text: str) -> list[str]:
        return [line.rstrip(",") for line in text.splitlines() if line.strip() and not line.startswith(WRITTEN)]

    return list(difflib.unified_diff(lines(old), lines(new), f"{name} (committed)", f"{name} (from the study)",
                                     lineterm="", n=0))  # fmt: skip


def load_snapshot(profile: str, user_dir: Path | None = None) -> Snapshot | None:
    """The profile's expectation snapshot (the user's recipes folder first, then the built-in data), or None where
    there is none."""
    read = read_fixture(snapshot_name(profile), user_dir, SCHEMA_VERSION, f"rewrite it: {update_command(profile)}")
    return None if read is None else Snapshot.from_json(*read)


def changed_parts(old: Snapshot | None, new: Snapshot) -> list[str]:
    """``claim [part] on model: old -> new`` for every entry that differs (added or removed included)."""
    before = {(c, m, p): v for (c, m), parts in (old.entries if old else {}).items() for p, v in parts.items()}
    after = {(c, m, p): v for (c, m), parts in new.entries.items() for p, v in parts.items()}
    return [f"{c} [{p}] on {m}: {before.get((c, m, p), 'none')} -> {after.get((c, m, p), 'none')}"
            for c, m, p in sorted(before.keys() | after.keys()) if before.get((c, m, p)) != after.get((c, m, p))]  # fmt: skip
