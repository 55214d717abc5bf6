"""One page per claim (``docs/claims/<claim id>.md``) and the catalogue's index table (``docs/claims.md``), generated
from the claims (``model_props/claims/``), the seed study (``fixtures/smoke-seeds.json``), the expectation snapshot
(``fixtures/smoke-expectations.json``), the controls (``model_props/claims/controls.py``) and the report screenshots
(``docs/screenshots.py``). The first use of each glossary term on a page links ``docs/glossary.md``
(``docs/glossary_links.py``). ``docs/generate.py`` writes the pages and ``--check`` names a stale, missing or
orphaned one."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from glossary_links import link_first_uses  # docs/, beside this module (docs/generate.py puts it on the path)

from model_props.claims import list_claims
from model_props.claims.base import Claim
from model_props.claims.controls import CONTROLS, UNCONTROLLED
from model_props.verdicts.outcome import PartOutcome
from model_props.verdicts.snapshot import Snapshot, load_snapshot
from model_props.verdicts.study import SeedStudy, load_study

DOCS = Path(__file__).resolve().parent
PAGES = DOCS / "claims"
IMAGES = PAGES / "img"  # per claim a cropped report screenshot and shots.json: docs/screenshots.py --claims
REFERENCES = ("vit", "pit", "swin", "resnet", "alternet")
SHORT = {"supported": "ok", "contradicted": "no", "inconclusive": "?", "skipped": "-"}
PRIORITY = {"contradicted": 0, "inconclusive": 1, "supported": 2}
# The arXiv id of another paper a claim's section cites (confirmed on arxiv.org), beside the catalogue's paper.
SECTION_ARXIV = {"park2022.smoothing-helps": "2105.12639"}


def _sources() -> tuple[SeedStudy, Snapshot]:
    study, snapshot = load_study("smoke"), load_snapshot("smoke")
    if study is None or snapshot is None:
        raise SystemExit("fixtures/smoke-seeds.json or smoke-expectations.json is missing: see docs/verdicts.md")
    return study, snapshot


def page_path(claim: Claim) -> Path:
    return PAGES / f"{claim.id}.md"


def _overall(snapshot: Snapshot, claim: Claim, model: str) -> str | None:
    """The snapshot's verdict of ``claim`` on ``model``: its worst decided part; None where it has no entry."""
    expected = snapshot.expected(claim, model)
    if expected is None:
        return None
    decided = [v for v in expected.parts.values() if v != "skipped"]
    return min(decided, key=PRIORITY.__getitem__) if decided else "skipped"


def _headline(claim: Claim) -> str:
    """The statement's first sentence up to its colon (``MSAs flatten the loss landscape``)."""
    return re.split(r"\.(?:\s+(?=[A-Z])|$)", claim.statement)[0].split(": ")[0]


def _screenshots() -> dict[str, list[tuple[str, str]]]:
    """Per claim id, the report screenshots that show it: (file, the reference it is on), from docs/screenshots.py."""
    spec = importlib.util.spec_from_file_location("screenshots", DOCS / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shown: dict[str, list[tuple[str, str]]] = {}
    for file, (title, _) in module.SHOTS.items():
        ids, model = title.rsplit(" [", 1)
        for claim_id in ids.split(" vs "):
            shown.setdefault(claim_id, []).append((file, model.rstrip("]")))
    return shown


def _report_image(claim: Claim) -> list[str]:
    """The claim's cropped report screenshot, linking its whole result, captioned with the reference and the run it
    comes from (``docs/claims/img/shots.json``); nothing where it has none."""
    if not (IMAGES / f"{claim.id}.png").is_file():
        return []
    record = json.loads((IMAGES / "shots.json").read_text())
    run, shown = record["run"], record["claims"][claim.id]
    figure = f" and its figure `{shown['figure']}`" if shown["figure"] else " (it has no figure)"
    link = "the whole result" if shown["full"] else "the image at full size"
    badge = (
        " Allure files a known failure (a strict xfail: contradicted, as the expectation snapshot holds) under "
        "its *Skipped* status, in the category *Known failures*."
        if ": contradicted" in shown["result"]
        else ""
    )
    return [f"[![{claim.id} on {shown['reference']} in the HTML report](img/{claim.id}.png)]"
            f"(img/{shown['full'] or claim.id + '.png'})", "",
            f"*The test on {shown['reference']}, the first reference the seed study evaluates the claim on: "
            f"`{shown['result']}`, cropped to its verdict{figure}; it links to {link}. From the HTML report of the "
            f"default run at {run['commit']} ({run['date']}, {run['machine']}).{badge}*", ""]  # fmt: skip


def index() -> str:
    """The catalogue's index: per claim its page, paper, headline and the snapshot's verdict per reference."""
    _, snapshot = _sources()
    lines = ["| # | claim | paper | statement | verdicts |", "|---|---|---|---|---|"]
    for c in list_claims():
        verdicts = [f"{m} {SHORT[v]}" for m in REFERENCES if (v := _overall(snapshot, c, m))]
        lines.append(f"| {c.number} | [`{c.id}`](claims/{c.id}.md) | [{c.paper.citation}]({c.paper.url}) | "
                     f"{_headline(c)} | {', '.join(verdicts) or 'none'} |")  # fmt: skip
    return "\n".join(lines)


def _paper(claim: Claim) -> list[str]:
    p = claim.paper
    text = f"**The paper:** {p.citation}, *{p.title}* ({p.venue}), [arXiv:{p.arxiv}]({p.url}); {claim.section}."
    if arxiv := SECTION_ARXIV.get(claim.id):
        text = text[:-1] + f" ([arXiv:{arxiv}](https://arxiv.org/abs/{arxiv}))."
    return [text, "", f"> {claim.statement}", "", f"*Units:* {claim.units}.", ""]


def _rules(claim: Claim) -> list[str]:
    rows = [f"| `{p.name}` | {p.rule.replace('|', chr(92) + '|')} |" for p in claim.parts]
    return ["## Parts and decision rules", "", "Each part is decided on its own from its interval; the claim's verdict "
            "on a model is its worst decided part ([What a verdict means](../verdicts.md), [the rules as fixed before "
            "measuring](../design.md#decision-rules)).", "", "| part | decision rule |", "|---|---|", *rows, ""]  # fmt: skip


def _why(outcome: PartOutcome) -> str:
    """One plain sentence: why the study's part came out as it did (its interval against the rule; the minimum
    detectable effect where it is inconclusive; the reason where it was not measured)."""
    e, part = outcome.estimate, outcome.part
    if e is None or outcome.verdict == "skipped":
        return f"not measured: {outcome.reason}"
    if part.direction == "within":
        margin = f"±{abs(part.threshold):g}"
        where = {"supported": f"lies inside {margin}", "contradicted": f"lies outside {margin}"}
        side = f"overlaps the edge of {margin}"
    else:
        claimed = "above" if part.direction == "greater" else "below"
        other = "below" if claimed == "above" else "above"
        where = {"supported": f"lies {claimed} {part.threshold:g}", "contradicted": f"lies {other} {part.threshold:g}"}
        side = f"contains {part.threshold:g}"
    if outcome.verdict in where:
        return f"the interval {where[outcome.verdict]}, so {outcome.verdict}."
    mde = outcome.minimum_detectable_effect
    edge = "the margin's edge" if part.direction == "within" else f"{part.threshold:g}"
    power = f"; with 80 % power this study decides an estimate {mde:.3g} or more from {edge}" if mde is not None else ""
    return f"the interval {side}, so inconclusive{power}."


def _verdicts(claim: Claim, study: SeedStudy, snapshot: Snapshot) -> list[str]:
    rows, levels = [], set()
    for model in study.evaluated_on(claim):
        expected = snapshot.expected(claim, model)
        cell = f"{model} (**{_overall(snapshot, claim, model) or 'no entry'}**)"
        for outcome in study.evaluate(claim, model).parts:
            e, want = outcome.estimate, expected.parts.get(outcome.part.name, "none") if expected else "none"
            if e:
                levels.add(f"{e.level * 100:.0f} %")
            number = f"{e.value:+.3g} [{e.low:+.3g}, {e.high:+.3g}]" if e else outcome.reason
            now = "" if outcome.verdict == want else f" (study now: {outcome.verdict})"
            rows.append(f"| {cell} | `{outcome.part.name}` | {want}{now} | {number} | {_why(outcome)} |")
            cell = ""
    if not rows:
        return ["## Verdicts on the references", "", "The seed study evaluates it on no reference.", ""]
    level = " or ".join(sorted(levels)) + " " if levels else ""  # none where no part was measured
    return ["## Verdicts on the references", "", f"Over the seed study's {len(study.seeds)} seeds: the snapshot's "
            f"verdict (what the claim tests assert), the estimate and its {level}interval, and why.", "",
            "| reference (its verdict) | part | verdict | value [interval] | why |",
            "|---|---|---|---|---|", *rows, ""]  # fmt: skip


def _controls(claim: Claim) -> list[str]:
    lines = ["## Controls", "", "A control is a mutant of a reference on which the part must come out contradicted "
             "([Controls that control](../verdicts.md#controls-that-control)).", ""]  # fmt: skip
    for p in claim.parts:
        if control := CONTROLS.get((claim.id, p.name)):
            lines.append(f"- `{p.name}`: the mutant `{control.mutation}` in place of {control.replaced} (made from "
                         f"its {control.checkpoint} weights), in the test on {control.model}.")  # fmt: skip
        else:
            lines.append(f"- `{p.name}`: uncontrolled: {UNCONTROLLED[(claim.id, p.name)]}.")
    return [*lines, ""]


def _disputes(claim: Claim) -> list[str]:
    by_id = {c.id: c for c in list_claims()}
    lines = [f"- It disputes [{by_id[d.claim].number}. `{d.claim}`]({d.claim}.md), restated on `{d.part}`: "
             f"{d.hypothesis}." for d in claim.disputes]  # fmt: skip
    lines += [f"- [{c.number}. `{c.id}`]({c.id}.md) disputes it." for c in by_id.values() if claim.id in c.contradicts]
    return [
        "## Disputes",
        "",
        "Both papers judged on one interval ([Disputes](../design.md#disputes)):",
        "",
        *lines,
        "",
    ]


def page(claim: Claim, study: SeedStudy, snapshot: Snapshot, shots: list[tuple[str, str]]) -> str:
    """A claim's page: its paper and statement, what the paper shows, its rules, verdicts, controls and disputes,
    each glossary term's first use a link to the glossary."""
    lines = [f"# {claim.number}. {claim.id}", "", "<!-- generated by docs/generate.py from the catalogue: do not edit "
             "-->", "", *_paper(claim), "## What the paper shows", "", f"{claim.evidence}.", "", *_rules(claim),
             *_verdicts(claim, study, snapshot), *_controls(claim)]  # fmt: skip
    if claim.disputes or any(claim.id in c.contradicts for c in list_claims()):
        lines += _disputes(claim)
    others = [f"- [Another screenshot of the report, on {model}](../{file})" for file, model in shots]
    if report := _report_image(claim) + (others + [""] if others else []):
        lines += ["## In the HTML report", "", *report]
    stamp = (f"*Numbers from `fixtures/smoke-seeds.json` (seeds {', '.join(map(str, study.seeds))}, {study.date}, "
             f"{study.provenance['machine']['cpu']}) and `fixtures/smoke-expectations.json` (its study of "
             f"{snapshot.study['date']}).*")  # fmt: skip
    return link_first_uses("\n".join([*lines, stamp]), "../glossary.md") + "\n"


def pages() -> dict[Path, str]:
    """Every claim's page, by path."""
    study, snapshot = _sources()
    shots = _screenshots()
    return {page_path(c): page(c, study, snapshot, shots.get(c.id, [])) for c in list_claims()}


def differences(fresh: dict[Path, str], folder: Path = PAGES) -> list[tuple[Path, str]]:
    """Each file that differs from ``fresh`` (path -> text): ``missing``, ``stale``, or ``orphaned`` (a page in
    ``folder`` that nothing generates)."""
    found = [(p, "missing" if not p.is_file() else "stale") for p, text in fresh.items()
             if not p.is_file() or p.read_text() != text]  # fmt: skip
    return found + [(p, "orphaned") for p in sorted(folder.glob("*.md")) if p not in fresh]
