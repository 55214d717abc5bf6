"""Allure metadata of a claim test: labels (epic = paper, feature = section, story = claim), the title with the
verdict, and the attachments (the figure, the numbers of every part, the raw measurements a figure shows)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..claims.base import Claim
from ..claims.controls import UNCONTROLLED
from ..verdicts.outcome import ClaimOutcome
from .summary import expectation_tag, part_records

__all__ = ["allure_labels", "allure_title", "attach"]


def allure_labels(claim: Claim, model: str) -> None:
    """Epic = paper, feature = section, story = claim id, the model as a parameter, a link to the paper."""
    import allure

    allure.dynamic.epic(f"{claim.paper.title} ({claim.paper.venue})")
    allure.dynamic.feature(claim.section)
    allure.dynamic.story(claim.id)
    allure.dynamic.title(f"{claim.id} [{model}]")
    allure.dynamic.parameter("model", str(model))
    allure.dynamic.link(claim.paper.url, name=f"arXiv:{claim.paper.arxiv}")
    allure.dynamic.severity(getattr(allure.severity_level, claim.severity.upper()))
    rules = "\n".join(
        f"- **{p.name}**: {p.rule}"
        + (f" (*uncontrolled*: {UNCONTROLLED[(claim.id, p.name)]})" if (claim.id, p.name) in UNCONTROLLED else "")
        for p in claim.parts
    )
    allure.dynamic.description(
        f"{claim.statement}\n\n**Units:** {claim.units}\n\n**Decision rules** "
        f"({claim.level:.0%} intervals: over images or batches for one checkpoint, over training seeds for an "
        f"architecture; Holm's correction across the parts):\n{rules}"
    )


def allure_title(claim: Claim, model: str, verdict: str, scope: str | None = None) -> None:
    """The test's title in the report names the claim, the model, the verdict and its scope (also a tag)."""
    import allure

    allure.dynamic.title(f"{claim.id} [{model}]: {verdict}" + (f" ({scope} scope)" if scope else ""))
    if scope:
        allure.dynamic.tag(f"scope: {scope}")


def attach(
    outcome: ClaimOutcome, png: bytes, raw: Mapping[str, Any] | None = None, live: ClaimOutcome | None = None
) -> None:
    """The figure, the numbers of every part (and of this machine's weights beside an architecture verdict), the
    raw samples a figure shows (e.g. eigenvalues), and the expectation as a tag (a known failure, or a claim
    expected to stay inconclusive at this scale)."""
    import allure

    numbers = {
        "claim": outcome.claim.id,
        "model": outcome.model,
        "scope": outcome.scope,
        "about": outcome.about,
        "verdict": outcome.verdict,
        "expected": dict(outcome.expected.parts) if outcome.expected is not None else None,
        "parts": part_records(outcome),
        "live": {"about": live.about, "verdict": live.verdict, "parts": part_records(live)} if live else None,
    }
    if (tag := expectation_tag(outcome)) not in (None, "pass"):
        allure.dynamic.tag(tag)
    allure.attach(
        png, name=f"{outcome.claim.measurement} - {outcome.model}", attachment_type=allure.attachment_type.PNG
    )
    allure.attach(json.dumps(numbers, indent=2), name="numbers", attachment_type=allure.attachment_type.JSON)
    if raw:
        allure.attach(json.dumps(raw), name="raw measurements", attachment_type=allure.attachment_type.JSON)
