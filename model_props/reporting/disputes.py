"""Disagreements between papers, side by side: a claim that disputes another (``Claim.contradicts``, e.g. Bai et al.
against Park & Kim's claim 16) and the disputed claim, judged on the same model in the same session.

Per model judged on both: each side's verdict, scope, decisive value and interval and every part; which side the
evidence favours (the side whose claim is supported while the other's is not; *neither* when both are
contradicted; else *undecided*); and the training facts of the models the comparison reads (the same budget,
schedule and augmentation; learning rate and warm-up chosen per model on the validation split), since a
disagreement about architectures is often one about recipes. Written to ``summary.json`` ("disagreements"), to
``summary.md`` and, where Allure results are written, as one Allure result per disagreement.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..claims import CLAIMS

__all__ = ["disagreements", "disagreement_table", "disagreement_lines", "write_allure_disputes"]

EPIC = "Disagreements between papers"


def _verdict(record: Mapping[str, Any]) -> str:
    """The measured verdict (an expected failure keeps it in ``measured_verdict``)."""
    return str(record.get("measured_verdict") or record["verdict"])


def _side(record: Mapping[str, Any]) -> dict[str, Any]:
    claim = CLAIMS[record["claim"]]
    return {
        "claim": claim.id,
        "number": claim.number,
        "paper": f"{claim.paper.citation}, {claim.section}",
        "statement": claim.statement,
        "verdict": _verdict(record),
        "scope": record.get("scope"),
        "about": record.get("about"),
        "value": record.get("value"),
        "interval": record.get("interval"),
        "parts": [
            {k: p.get(k) for k in ("part", "rule", "verdict", "value", "interval", "level")}
            for p in record.get("parts", [])
        ],  # fmt: skip
    }


def _favours(claim: str, claim_verdict: str, disputed: str, disputed_verdict: str) -> str:
    if claim_verdict == "supported" and disputed_verdict != "supported":
        return claim
    if disputed_verdict == "supported" and claim_verdict != "supported":
        return disputed
    if claim_verdict == disputed_verdict == "contradicted":
        return "neither"
    return "both" if claim_verdict == disputed_verdict == "supported" else "undecided"


def disagreements(results: Sequence[Mapping[str, Any]], models: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """Every (disputing claim, disputed claim, model) with a measured record of both (module docstring)."""
    by = {(r["claim"], r["model"]): r for r in results if r["claim"] in CLAIMS and r.get("value") is not None}
    found = []
    for (claim_id, model), record in sorted(by.items()):
        claim = CLAIMS[claim_id]
        for disputed in claim.contradicts:
            other = by.get((disputed, model))
            if other is None:
                continue
            compared = [model, *dict.fromkeys(n for c in (claim, CLAIMS[disputed]) for n in c.named_models)]
            found.append({
                "claim": claim_id,
                "disputes": disputed,
                "model": model,
                "sides": [_side(record), _side(other)],
                "favours": _favours(claim_id, _verdict(record), disputed, _verdict(other)),
                "training": {n: models[n].get("training") for n in compared if n in models},
            })  # fmt: skip
    return found


def _cell(side: Mapping[str, Any]) -> str:
    value, interval = side["value"], side["interval"]
    number = (
        "" if value is None else f" {value:+.3g}" + (f" [{interval[0]:+.3g}, {interval[1]:+.3g}]" if interval else "")
    )
    return f"{side['verdict']}{number} ({side['scope']})"


def _training_line(training: Mapping[str, Any]) -> str:
    facts = {n: t for n, t in training.items() if t}
    if not facts:
        return ""
    shared = {k: v for k, v in next(iter(facts.values())).items() if all(t.get(k) == v for t in facts.values())}
    own = {n: {k: v for k, v in t.items() if k not in shared} for n, t in facts.items()}
    return ("shared: " + ", ".join(f"{k} {_fact(v)}" for k, v in shared.items()) + "; per model: "
            + "; ".join(f"{n} " + ", ".join(f"{k} {_fact(v)}" for k, v in o.items()) for n, o in own.items()))  # fmt: skip


def _fact(value: Any) -> str:
    return "+".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def disagreement_table(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """One Markdown row per disagreement, both verdicts with value, interval and scope (summary.md, the README)."""
    lines = ["| model | claim | verdict | disputed claim | verdict | the evidence favours | training of the models "
             "compared |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for d in found:
        a, b = d["sides"]
        lines.append(f"| {d['model']} | {a['number']} `{a['claim']}` | {_cell(a)} | {b['number']} `{b['claim']}` | "
                     f"{_cell(b)} | {d['favours']} | {_training_line(d['training'])} |")  # fmt: skip
    return lines


def disagreement_lines(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The section of summary.md (none without a disagreement)."""
    return ["", f"## {EPIC}", "", *disagreement_table(found)] if found else []


def _part_cells(side: Mapping[str, Any], part: Mapping[str, Any]) -> tuple[str, ...]:
    """A part's row of a disagreement's description: claim, part, verdict, value, interval (level), rule."""
    value, interval = part["value"], part["interval"]
    shown = "" if not interval else "[{:+.4g}, {:+.4g}] ({:.0%})".format(*interval, part["level"])
    return (f"{side['number']} {side['claim']}", part["part"], part["verdict"],
            "" if value is None else f"{value:+.4g}", shown, part["rule"])  # fmt: skip


def _html_row(cells: Sequence[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f'<{tag} style="white-space: normal">{escape(c)}</{tag}>' for c in cells) + "</tr>"


def write_allure_disputes(results_dir: Path, found: Sequence[Mapping[str, Any]]) -> None:
    """One Allure result per disagreement (epic "Disagreements between papers"): its title names both claims, the
    model and the side the evidence favours; its description sets both sides' parts side by side; a settled
    dispute is *passed*, an undecided one *unknown*. Written in Allure's result format (``*-result.json``)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    for d in found:
        a, b = d["sides"]
        cells = [_part_cells(side, part) for side in (a, b) for part in side["parts"]]
        header = ("claim", "part", "verdict", "value", "interval", "rule")
        training = _training_line(d["training"]) or "not recorded"
        description = "\n".join([
            f"**{a['statement']}** ({a['paper']})", "", f"disputes **{b['statement']}** ({b['paper']})", "",
            "| " + " | ".join(header) + " |", "|---" * len(header) + "|", *("| " + " | ".join(c) + " |" for c in cells),
            "", f"**The evidence favours:** {d['favours']}", "",
            f"**Training of the models compared:** {training}",
        ])  # fmt: skip
        description_html = (
            f"<p><b>{escape(a['statement'])}</b> ({escape(a['paper'])})</p><p>disputes <b>{escape(b['statement'])}"
            f"</b> ({escape(b['paper'])})</p><table>{_html_row(header, 'th')}{''.join(_html_row(c) for c in cells)}"
            f"</table><p><b>The evidence favours:</b> {escape(d['favours'])}</p><p><b>Training of the models "
            f"compared:</b> {escape(training)}</p>"
        )
        name = f"{a['claim']} vs {b['claim']} [{d['model']}]: the evidence favours {d['favours']}"
        result = {
            "uuid": str(uuid.uuid4()),
            "historyId": f"dispute:{a['claim']}:{b['claim']}:{d['model']}",
            "name": name,
            "fullName": f"disputes.{a['claim']}.{b['claim']}[{d['model']}]",
            "status": "passed" if d["favours"] not in ("undecided", "both") else "unknown",
            "statusDetails": {"message": f"{_cell(a)} against {_cell(b)}"},
            "description": description,
            "descriptionHtml": description_html,
            "labels": [{"name": "epic", "value": EPIC}, {"name": "feature", "value": f"{a['paper']}"},
                       {"name": "story", "value": f"{a['claim']} vs {b['claim']}"}, {"name": "tag", "value": "dispute"}],
            "parameters": [{"name": "model", "value": d["model"]}],
            "attachments": [],
            "start": now,
            "stop": now,
        }  # fmt: skip
        (results_dir / f"{result['uuid']}-result.json").write_text(json.dumps(result, indent=2))
