"""Allure metadata of a claim test: labels (epic = paper, feature = section, story = claim), the title with the
verdict, and the attachments (the figure, the numbers of every part, the raw measurements a figure shows)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..claims.base import Claim
from ..claims.evaluation import ClaimOutcome

__all__ = ["allure_labels", "allure_title", "attach"]


def allure_labels(claim: Claim, model: str, expected: str | None = None) -> None:
    """Epic = paper, feature = section, story = claim id, the model as a parameter, a link to the paper, and
    the seed study's expectation (known failure / seed-dependent) as a tag."""
    import allure

    allure.dynamic.epic(f"{claim.paper.title} ({claim.paper.venue})")
    allure.dynamic.feature(claim.section)
    allure.dynamic.story(claim.id)
    allure.dynamic.title(f"{claim.id} [{model}]")
    allure.dynamic.parameter("model", str(model))
    allure.dynamic.link(claim.paper.url, name=f"arXiv:{claim.paper.arxiv}")
    allure.dynamic.severity(getattr(allure.severity_level, claim.severity.upper()))
    if expected is not None:
        allure.dynamic.tag(expected)
    rules = "\n".join(f"- **{p.name}**: {p.rule}" for p in claim.parts)
    allure.dynamic.description(
        f"{claim.statement}\n\n**Units:** {claim.units}\n\n**Decision rules** "
        f"({claim.level:.0%} percentile bootstrap):\n{rules}"
    )


def allure_title(claim: Claim, model: str, verdict: str) -> None:
    """The test's title in the report names the claim, the model and the verdict."""
    import allure

    allure.dynamic.title(f"{claim.id} [{model}]: {verdict}")


def attach(outcome: ClaimOutcome, png: bytes, raw: Mapping[str, Any] | None = None) -> None:
    """The figure, the numbers of every part, and the raw samples a figure shows (e.g. eigenvalues)."""
    import allure

    numbers = {
        "claim": outcome.claim.id,
        "model": outcome.model,
        "verdict": outcome.verdict,
        "parts": [p.to_json() for p in outcome.parts],
    }
    allure.attach(
        png, name=f"{outcome.claim.measurement} - {outcome.model}", attachment_type=allure.attachment_type.PNG
    )
    allure.attach(json.dumps(numbers, indent=2), name="numbers", attachment_type=allure.attachment_type.JSON)
    if raw:
        allure.attach(json.dumps(raw), name="raw measurements", attachment_type=allure.attachment_type.JSON)
