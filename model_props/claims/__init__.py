"""Claims: published findings as data (the catalogue).

Owns the :class:`Claim` / :class:`Part` / :class:`Dispute` dataclasses (:mod:`.base`), the catalogue (a module
per paper, and a paper with several topics also a module per topic; ids are stable) and the statistics its parts
read from measurement reports. How a claim is judged lives in :mod:`model_props.verdicts`.

May import: :mod:`model_props.measurements`, :mod:`model_props.measurements.functional`, :mod:`model_props.anatomy`,
:mod:`model_props.training` and the layers beneath them.
"""

from __future__ import annotations

import fnmatch

from ..errors import ModelPropsError, choices
from . import (
    bai2021,
    dosovitskiy2021,
    naseer2021,
    park2022_fitting,
    park2022_frequency,
    park2022_landscape,
    park2022_robustness,
    park2022_stages,
    raghu2021_attention,
    raghu2021_location,
    raghu2021_similarity,
    raghu2021_skip,
)
from .base import Claim, Dispute, Paper, Part

__all__ = [
    "Claim",
    "Paper",
    "Part",
    "Dispute",
    "CLAIMS",
    "get_claim",
    "list_claims",
    "catalogue_markdown",
    "SOURCES",
]

_MODULES = (
    park2022_landscape,
    park2022_fitting,
    park2022_frequency,
    park2022_robustness,
    park2022_stages,
    raghu2021_skip,
    raghu2021_attention,
    raghu2021_location,
    raghu2021_similarity,
    dosovitskiy2021,
    naseer2021,
    bai2021,
)
CLAIMS: dict[str, Claim] = {c.id: c for module in _MODULES for c in module.CLAIMS}
SOURCES: dict[str, str] = {c.id: module.__name__ for module in _MODULES for c in module.CLAIMS}  # where each is defined


def get_claim(claim_id: str) -> Claim:
    if claim_id not in CLAIMS:
        raise ModelPropsError(f"unknown claim {claim_id!r}; valid: {choices(CLAIMS)}")
    return CLAIMS[claim_id]


def list_claims(pattern: str = "*") -> list[Claim]:
    """Claims whose id matches a glob, in catalogue order."""
    return sorted((c for i, c in CLAIMS.items() if fnmatch.fnmatchcase(i, pattern)), key=lambda c: c.number)


def catalogue_markdown() -> str:
    """The catalogue as a Markdown table (``model-props claims``; the README carries it): number, id, paper and
    section, statement, and each part's decision rule."""
    lines = ["| # | claim | paper, section | statement | decision rules (each must hold) |", "|---|---|---|---|---|"]
    for c in list_claims():

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        rules = "<br>".join(f"`{p.name}`: {cell(p.rule)}" for p in c.parts)
        scope = f" Runs on {', '.join(c.models)}." if c.models else ""
        scope += "".join(
            f" Disputes claim {CLAIMS[d.claim].number} (`{d.claim}`), restated on `{d.part}`: {cell(d.hypothesis)}."
            for d in c.disputes
        )
        lines.append(
            f"| {c.number} | `{c.id}` | {c.paper.citation}, {cell(c.section)} | {cell(c.statement)}{scope} | {rules} |"
        )
    return "\n".join(lines) + "\n"
