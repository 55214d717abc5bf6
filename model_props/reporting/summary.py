"""The session summary: one record per claim test, ``reports/summary.{json,md}`` and the verdict table.

``summary.json`` is a stable contract for CI tools (schema 4: every test's outcome as pytest counted it, the run's
start, commit and exit status; scopes, per-seed estimates, the expectation snapshot's entries and each claim test's
outcome, inconclusive apart from passed)::

    {
      "schema_version": 4,
      "profile": "smoke", "seed": 0, "train_seed": null,
      "run": {"started": "2026-11-28T17:00:00+00:00", "commit": "187769e", "exit_status": 0},
      "outcomes": {"passed": 880, "failed": 0, "errors": 0, "skipped": 146, "xfailed": 17, "xpassed": 0,
                   "inconclusive": 31},
      "claim_outcomes": {"passed": 46, "inconclusive": 25, "xfailed": 7, "failed": 0, "skipped": 2},
      "provenance": {"versions": {...}, "machine": {...}},
      "models": {"vit": {"accuracy": 0.8, "nll": 0.5, "parameters": 683242, "checkpoint_sha256": "...",
                         "recipe": "vit", "recipe_fingerprint": "...", "train_seed": 0, "provenance": {...}}},
      "results": [{"claim": "park2022.msa-lowpass", "model": "vit",
                   "scope": "architecture" | "checkpoint", "k": 10, "seeds": [0, 1, ..., 9],
                   "about": "about the architecture (its recipe over 10 training seeds; interval over seeds)",
                   "verdict": "supported" | "contradicted" | "inconclusive" | "skipped" | "xfailed",
                   "outcome": "passed" | "inconclusive" | "failed" | "xfailed" | "skipped",
                   "expected": "pass" | "known-failure" | "inconclusive" | null,
                   "expectation": {"parts": {"msa-later-half": "supported"},
                                   "source": "fixtures/smoke-expectations.json"},
                   "statistic": "...", "value": -0.12, "interval": [-0.2, -0.05], "reason": "...",
                   "parts": [{"part": "...", "verdict": "...", "value": ..., "interval": [...], "method": "...",
                              "per_seed": {"vit": [...]}, "p_contradiction": ...,
                              "minimum_detectable_effect": ..., ...}],
                   "live": {"scope": "checkpoint", "verdict": "...", "parts": [...]}}]
    }

``value``/``interval`` are null for skipped records; ``per_seed`` and ``expectation`` where the scope has them.
``outcomes`` counts every test of the session (pytest's own closing line), ``claim_outcomes`` the claim tests' records
only; a run with an error, or a non-zero ``exit_status``, did not pass whatever the claims say.
``gate_decision`` (a run of a release gate, with gating claims or tolerances; null otherwise): ``{"passed": false,
"decision": "refused: 1 error"}``, passed only with every tolerance held, no failed test, no error and exit status 0
(a gating claim that is not judged supported on the candidate, skipped or inconclusive included, fails its test).
``live`` is this machine's own weights of a reference, at checkpoint scope, beside its architecture verdict.
``disagreements`` sets a claim that disputes another beside it on each model judged on both
(:mod:`.disputes`); ``models[...]["training"]`` holds the recipe facts they compare.
For ``xfailed`` records the measured verdict is kept in ``measured_verdict``. ``outcome`` is what the test
reported: ``inconclusive`` is its own outcome (a claim neither supported nor contradicted, as its expectation
says or as ``--claims-inconclusive report`` allows), never counted as passed; ``outcomes`` counts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..claims.base import Claim
from ..claims.controls import CONTROLS
from ..verdicts.outcome import ClaimOutcome
from .disputes import disagreement_lines, disagreements

__all__ = ["SCHEMA_VERSION", "OUTCOMES", "outcome_record", "part_records", "judgement_record", "skip_record",
           "model_facts", "training_facts", "gate_decision", "write_summary", "verdict_table"]  # fmt: skip

SCHEMA_VERSION = 4  # 4: outcomes are pytest's, over every test; claim_outcomes; run
OUTCOMES = ("passed", "inconclusive", "failed", "xfailed", "skipped")
TRAINING_FACTS = ("dataset", "subset", "steps", "batch_size", "augment", "optimizer", "lr", "warmup_steps")
SHORT = {"supported": "ok", "contradicted": "CONTRA", "inconclusive": "incon", "skipped": "-", "xfailed": "xfail"}
MISMATCH = "differs"  # a verdict table cell whose test failed on the expectation snapshot


def outcome_record(outcome: ClaimOutcome) -> dict[str, Any]:
    d = outcome.decisive
    e = d.estimate
    if e is None:  # never: the decisive part is one that was measured
        raise ValueError(f"{outcome.claim.id}: the decisive part {d.part.name!r} has no estimate")
    return {
        "claim": outcome.claim.id,
        "model": outcome.model,
        "scope": outcome.scope,
        "k": len(outcome.seeds) if outcome.seeds is not None else None,
        "seeds": list(outcome.seeds) if outcome.seeds is not None else None,
        "about": outcome.about,
        "verdict": outcome.verdict,
        "statistic": f"{d.part.name}: {d.part.label}",
        "value": e.value,
        "interval": [e.low, e.high],
        "reason": outcome.message(),
        "parts": part_records(outcome),
    }


def part_records(outcome: ClaimOutcome) -> list[dict[str, Any]]:
    """Every part's numbers, each with whether a positive control shows that it can fail (``controlled``: a mutant
    on which it is contradicted while the unmutated model is not; ``model_props.claims.controls``)."""
    return [{**p.to_json(), "controlled": (outcome.claim.id, p.part.name) in CONTROLS} for p in outcome.parts]


def expectation_tag(outcome: ClaimOutcome) -> str | None:
    """The expectation in one word (None without one: a user's model): a known failure (a part expected
    contradicted), inconclusive (a part expected inconclusive), or pass."""
    if outcome.expected is None:
        return None
    wanted = set(outcome.expected.parts.values())
    return "known-failure" if "contradicted" in wanted else "inconclusive" if "inconclusive" in wanted else "pass"


def judgement_record(outcome: ClaimOutcome, live_outcome: ClaimOutcome | None = None) -> dict[str, Any]:
    """The summary record of a claim test: the verdict at its scope, the expectation, and the live weights."""
    record = outcome_record(outcome)
    record["expected"] = expectation_tag(outcome)
    record["expectation"] = (
        {"parts": dict(outcome.expected.parts), "source": outcome.expected.source} if outcome.expected else None
    )
    record["mismatches"] = [p.part.name for p, _ in outcome.mismatches()]
    if live_outcome is not None:
        live = outcome_record(live_outcome)
        record["live"] = {k: live[k] for k in ("scope", "about", "verdict", "statistic", "value", "interval", "parts")}
    return record


def model_facts(tested: Any) -> dict[str, Any]:
    """What summary.json says of a model under test: fit, size, weights and where they came from."""
    recipe = tested.recipe
    return {
        "accuracy": tested.metrics["test_accuracy"],
        "nll": tested.metrics.get("test_nll"),
        "parameters": tested.parameters,
        "checkpoint_sha256": tested.checkpoint_sha256,
        "checkpoint": str(tested.checkpoint) if tested.checkpoint else None,
        "recipe": recipe.name if recipe else None,
        "recipe_fingerprint": recipe.fingerprint() if recipe else None,
        "train_seed": recipe.seed if recipe else None,
        "training": training_facts(recipe) if recipe else None,
        "provenance": tested.provenance or None,
    }


def training_facts(recipe: Any) -> dict[str, Any]:
    """What a recipe trains with, as summary.json records it: the facts a disagreement between papers compares."""
    return {k: getattr(recipe, k) for k in TRAINING_FACTS}


def skip_record(claim: Claim, model: str, reason: str) -> dict[str, Any]:
    return {
        "claim": claim.id,
        "model": model,
        "verdict": "skipped",
        "statistic": None,
        "value": None,
        "interval": None,
        "reason": reason,
        "parts": [],
    }


def verdict_table(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """Claims x models, each cell the verdict (``differs``: a part differs from the expectation snapshot), the
    decisive value and the scope (``a<k>``: architecture over a study of k seeds, ``c``: checkpoint), ``-`` where
    the claim does not apply (its test skipped), as aligned text lines."""
    results = list(results)
    models = list(dict.fromkeys(r["model"] for r in results))
    claims = list(dict.fromkeys(r["claim"] for r in results))
    cell = {(r["claim"], r["model"]): r for r in results}

    def fmt(r):
        if r is None:
            return "-"  # the claim does not apply (its test was skipped, so nothing was recorded)
        scope = {"architecture": f" a{r.get('k')}", "checkpoint": " c"}.get(r.get("scope") or "", "")
        word = MISMATCH if r.get("mismatches") else SHORT[r["verdict"]]
        return word + (f" {r['value']:+.3g}{scope}" if r.get("value") is not None else "")

    width = max([len(c) for c in claims] + [5])
    cols = [max([len(m)] + [len(fmt(cell.get((c, m)))) for c in claims]) for m in models]
    lines = [f"{'claim':{width}s}  " + "  ".join(f"{m:{w}s}" for m, w in zip(models, cols))]
    for c in claims:
        lines.append(f"{c:{width}s}  " + "  ".join(f"{fmt(cell.get((c, m))):{w}s}" for m, w in zip(models, cols)))
    return lines


def gate_decision(gate: Sequence[Mapping[str, Any]], tests: Mapping[str, int], run: Mapping[str, Any],
                  gated: bool = False) -> dict[str, Any] | None:  # fmt: skip
    """The release gate's decision on a run of a gate (``gated``: it has gating claims or tolerances) or with
    tolerance records (None otherwise): passed only where every tolerance holds and the run has no failed test, no
    error and exit status 0 (a gating claim not judged supported fails its test); else refused, saying why."""
    if not (gate or gated):
        return None
    why = [
        f"{n} {'error' if (k, n) == ('errors', 1) else k}" for k, n in tests.items() if k in ("failed", "errors") and n
    ]
    why += [f"the {g['statistic']} tolerance is exceeded" for g in gate if not g["passed"]]
    if run.get("exit_status", 0) not in (0, None):
        why.append(f"exit status {run['exit_status']}")
    return {"passed": not why, "decision": "passed" if not why else "refused: " + "; ".join(why)}


def write_summary(
    directory: Path,
    *,
    profile: str,
    seed: int,
    models: Mapping[str, Mapping[str, Any]],
    results: Sequence[Mapping[str, Any]],
    train_seed: int | None = None,
    provenance: Mapping[str, Any] | None = None,
    gate: Sequence[Mapping[str, Any]] | None = None,
    gated: bool = False,
    outcomes: Mapping[str, int] | None = None,
    run: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Write ``summary.json`` and ``summary.md``; the disagreements between papers they hold (:mod:`.disputes`).
    ``outcomes``: pytest's count of every test of the session (the claim records' own counts where not given);
    ``run``: its start, commit and exit status; ``gated``: a release gate ran (:func:`gate_decision`)."""
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r["claim"], r["model"]))
    found = disagreements(ordered, models)
    counts = {k: sum(r.get("outcome") == k for r in ordered) for k in OUTCOMES}
    tests = dict(outcomes) if outcomes is not None else dict(counts)
    summary = {
        "schema_version": SCHEMA_VERSION,
        "profile": profile,
        "seed": seed,
        "train_seed": train_seed,
        "run": dict(run or {}),
        "outcomes": tests,
        "claim_outcomes": counts,
        "provenance": dict(provenance or {}),
        "models": dict(models),
        "results": ordered,
        "gate": list(gate or []),
        "gate_decision": (decision := gate_decision(gate or [], tests, run or {}, gated)),
        "disagreements": found,
    }
    (directory / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    status = f" (exit status {run['exit_status']})" if run and "exit_status" in run else ""
    lines = [
        f"# model-props verdicts (profile `{profile}`, seed {seed})",
        "",
        "Tests: "
        + (", ".join(f"{n} {'error' if (k, n) == ('errors', 1) else k}" for k, n in tests.items() if n) or "none")
        + status,  # fmt: skip
        "",
        "Claim tests: " + (", ".join(f"{n} {k}" for k, n in counts.items() if n) or "none"),
        "",
        *([f"Release gate: {decision['decision']}", ""] if decision else []),
        "```",
        *verdict_table(ordered),
        "```",
        "",
        "| claim | model | verdict | test outcome | statistic | value | interval |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in ordered:
        val = "" if r["value"] is None else f"{r['value']:.4g}"
        ival = "" if r["interval"] is None else f"[{r['interval'][0]:.4g}, {r['interval'][1]:.4g}]"
        lines.append(f"| {r['claim']} | {r['model']} | {r['verdict']} | {r.get('outcome', '')} | "
                     f"{r['statistic'] or r['reason']} | {val} | {ival} |")  # fmt: skip
    lines += disagreement_lines(found)
    (directory / "summary.md").write_text("\n".join(lines) + "\n")
    return found
