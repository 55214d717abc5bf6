"""Disagreements between papers, on one statistic: a claim that disputes another (``Claim.disputes``, e.g. Bai et
al. against Park & Kim's claim 16) restates the disputed claim's hypothesis on one of its own parts' statistic, so
that both sides are judged on the same estimate (the same report, eps set and images), each at its own claim's level
and correction (:mod:`~model_props.verdicts.disputed`: Bai et al.'s at 90 %, Park & Kim's at 95 % with Holm's
first step over claim 16's parts and the restatement).

Per model the disputing claim was measured on: the statistic's value and interval, each side's hypothesis and
verdict on it, the disputed claim's own verdict on that model where the results hold it (it reads its own
statistics: a restatement supported on one statistic is not the claim supported), and which side the evidence
favours on the shared statistic: a side only when the other is contradicted (*both*
when both hold, *neither* when both are contradicted, else *undecided*); and the training facts of the models the
comparison reads (the same budget, schedule and augmentation; learning rate and warm-up chosen per model on the
validation split), since a disagreement about architectures is often one about recipes. Written to
``summary.json`` ("disagreements"), to ``summary.md`` and, where Allure results are written, as one Allure result
per disagreement.
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
from ..claims.base import Claim, Dispute

__all__ = ["disagreements", "disagreement_table", "disagreement_lines", "write_allure_disputes"]

EPIC = "Disagreements between papers"


def _favours(claim: str, claim_verdict: str, disputed: str, disputed_verdict: str) -> str:
    """A side only when the other is contradicted (module docstring)."""
    if claim_verdict == disputed_verdict:
        return {"supported": "both", "contradicted": "neither"}.get(claim_verdict, "undecided")
    if disputed_verdict == "contradicted" and claim_verdict == "supported":
        return claim
    if claim_verdict == "contradicted" and disputed_verdict == "supported":
        return disputed
    return "undecided"


def _title(d: Mapping[str, Any]) -> str:
    """The Allure title's tail: the side favoured, or in words why none is."""
    words = {"both": "both sides hold", "neither": "both sides are contradicted", "undecided": "undecided"}
    return words.get(d["favours"], f"the evidence favours {d['favours']}")


def _side(claim: Claim, hypothesis: str, rule: str, verdict: str, own: str | None = None) -> dict[str, Any]:
    """One side: ``own``, the disputed claim's own verdict on the model (None: not in the results, or the disputing
    side)."""
    return {"claim": claim.id, "number": claim.number, "paper": f"{claim.paper.citation}, {claim.section}",
            "statement": claim.statement, "hypothesis": hypothesis, "rule": rule, "verdict": verdict,
            "claim_verdict": own}  # fmt: skip


def _dispute(record: Mapping[str, Any], claim: Claim, dispute: Dispute,
             results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:  # fmt: skip
    """Both sides of ``dispute`` on the disputing claim's part in ``record`` (None where the part was not measured),
    the disputed side as the judge restated it (``disputed`` in the part's record)."""
    part = next((p for p in record.get("parts", []) if p["part"] == dispute.part), None)
    side = next((s for s in (part or {}).get("disputed") or () if s["claim"] == dispute.claim), None)
    if part is None or part.get("interval") is None or side is None:
        return None
    low, high = part["interval"]
    disputed = CLAIMS[dispute.claim]
    own = next(p for p in claim.parts if p.name == dispute.part)
    op = {"less": "<", "greater": ">"}.get(dispute.direction, "within ±")
    alpha = (1 - side["level"]) / 2
    theirs = next((r.get("verdict") for r in results if r["claim"] == disputed.id and r["model"] == record["model"]
                   and r.get("scope") == record.get("scope") and r.get("value") is not None), None)  # fmt: skip
    sides = [
        _side(claim, claim.statement, f"{part['rule']} at {part['level']:.0%}", part["verdict"]),
        _side(disputed, dispute.hypothesis, f"{own.label} {op} {dispute.threshold:g} at {side['level']:.0%} "
              f"[{side['low']:+.3g}, {side['high']:+.3g}], contradicted only past {alpha:.1%} / {side['family']} "
              "(Holm's first step)", side["verdict"], theirs),
    ]  # fmt: skip
    return {
        "claim": claim.id,
        "disputes": disputed.id,
        "model": record["model"],
        "part": dispute.part,
        "statistic": own.label,
        "value": part["value"],
        "interval": [low, high],
        "level": part["level"],
        "scope": record.get("scope"),
        "about": record.get("about"),
        "sides": sides,
        "favours": _favours(claim.id, sides[0]["verdict"], disputed.id, sides[1]["verdict"]),
    }


def disagreements(results: Sequence[Mapping[str, Any]], models: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """Every (disputing claim, disputed claim, model) with a measured record of the disputing claim."""
    found = []
    for record in sorted(results, key=lambda r: (r["claim"], r["model"])):
        claim = CLAIMS.get(record["claim"])
        if claim is None or record.get("value") is None:
            continue
        for dispute in claim.disputes:
            if (d := _dispute(record, claim, dispute, results)) is not None:
                compared = [record["model"], *dict.fromkeys(claim.named_models + CLAIMS[dispute.claim].named_models)]
                d["training"] = {n: models[n].get("training") for n in compared if n in models}
                found.append(d)
    return found


def _statistic(d: Mapping[str, Any]) -> str:
    low, high = d["interval"]
    return f"{d['value']:+.3g} [{low:+.3g}, {high:+.3g}] ({d['level']:.0%}, {d['scope']})"


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
    """One Markdown row per disagreement: the shared statistic and interval, each side's rule and verdict on it."""
    lines = ["| model | statistic (both sides) | value [interval] | claim: rule, verdict | disputed claim: rule, verdict "
             "| the evidence favours | training of the models compared |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for d in found:
        a, b = d["sides"]
        lines.append(f"| {d['model']} | {d['statistic']} | {_statistic(d)} | {a['number']} `{a['claim']}`: "
                     f"{a['rule']}, **{a['verdict']}** | {b['number']} `{b['claim']}`: {b['rule']}, **{b['verdict']}** "
                     f"on this statistic{_own(b, d['model'])} | {d['favours']} | {_training_line(d['training'])} |")  # fmt: skip
    return lines


def _own(side: Mapping[str, Any], model: str) -> str:
    """The disputed claim's own verdict on ``model``, beside its restatement's (empty where not in the results)."""
    own = side.get("claim_verdict")
    return f"; claim {side['number']} itself on {model} (its own parts): **{own}**" if own else ""


def disagreement_lines(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The section of summary.md (none without a disagreement)."""
    return ["", f"## {EPIC}", "", *disagreement_table(found)] if found else []


def _html_row(cells: Sequence[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f'<{tag} style="white-space: normal">{escape(c)}</{tag}>' for c in cells) + "</tr>"


def write_allure_disputes(results_dir: Path, found: Sequence[Mapping[str, Any]]) -> None:
    """One Allure result per disagreement (epic "Disagreements between papers"): its title names both claims, the
    model and the side the evidence favours; its description sets both hypotheses on the shared statistic side by
    side; a settled dispute is *passed*, an undecided one *unknown*. Written in Allure's result format
    (``*-result.json``)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    for d in found:
        a, b = d["sides"]
        header = ("claim", "hypothesis", "rule on the shared statistic", "verdict")
        cells = [(f"{s['number']} {s['claim']}", s["hypothesis"], s["rule"], s["verdict"]) for s in (a, b)]
        training = _training_line(d["training"]) or "not recorded"
        shared = f"{d['part']}, {d['statistic']}: {_statistic(d)}"
        description = "\n".join([
            f"**{a['statement']}** ({a['paper']})", "", f"disputes **{b['statement']}** ({b['paper']})", "",
            f"**Both judged on one statistic:** {shared}", "",
            "| " + " | ".join(header) + " |", "|---" * len(header) + "|", *("| " + " | ".join(c) + " |" for c in cells),
            "", f"**The evidence favours:** {d['favours']} (a side only when the other is contradicted)", "",
            f"**Training of the models compared:** {training}",
        ])  # fmt: skip
        description_html = (
            f"<p><b>{escape(a['statement'])}</b> ({escape(a['paper'])})</p><p>disputes <b>{escape(b['statement'])}"
            f"</b> ({escape(b['paper'])})</p><p><b>Both judged on one statistic:</b> {escape(shared)}</p><table>"
            f"{_html_row(header, 'th')}{''.join(_html_row(c) for c in cells)}</table><p><b>The evidence favours:</b> "
            f"{escape(d['favours'])} (a side only when the other is contradicted)</p><p><b>Training of the models "
            f"compared:</b> {escape(training)}</p>"
        )
        name = f"{a['claim']} vs {b['claim']} [{d['model']}]: {_title(d)}"
        result = {
            "uuid": str(uuid.uuid4()),
            "historyId": f"dispute:{a['claim']}:{b['claim']}:{d['model']}",
            "name": name,
            "fullName": f"disputes.{a['claim']}.{b['claim']}[{d['model']}]",
            "status": "passed" if d["favours"] not in ("undecided", "both") else "unknown",
            "statusDetails": {"message": f"{shared}: {a['verdict']} against {b['verdict']}"},
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
