"""The documentation's tables and numbers, generated from data instead of typed by hand.

Each block of README.md and of the pages in ``docs/`` between ``<!-- generated: NAME -->`` and
``<!-- end: NAME -->`` is rewritten from its source: the claim catalogue (the code), the committed seed study (``fixtures/smoke-seeds.json``: accuracies,
architecture verdicts over its seeds, the held-out confirmation rate, the reproduction rule's calibration), the reviewed
expectation snapshot (``fixtures/smoke-expectations.json``), the controls (``model_props/claims/controls.py``), the
coverage simulation (``benchmarks/results/coverage.json``), the benchmarks' results (``benchmarks/results/``).
``property_tests/library/test_docs.py`` and ``.ci/run`` fail when a block is stale.

Each claim's page (``docs/claims/<claim id>.md``) is generated whole (``docs/claim_pages.py``).

    python docs/generate.py          # rewrite the blocks and the claim pages, remove an orphaned claim page
    python docs/generate.py --check  # exit 1 naming every stale, missing or orphaned file
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from model_props.claims import get_claim, list_claims
from model_props.claims.controls import BASE_AGAINST, BELOW_CHANCE, CONTROLS, DESIGNED, UNCONTROLLED
from model_props.reporting.disputes import disagreement_table
from model_props.reporting.disputes import disagreements as disputes
from model_props.reporting.summary import outcome_record, training_facts
from model_props.training.profiles import load_profile
from model_props.verdicts.family import default_family, default_kind, shifted_live
from model_props.verdicts.live_check import Check
from model_props.verdicts.omnibus import Omnibus
from model_props.verdicts.reproduction import (
    FAMILY_LEVEL,
    claim_checks,
    held_out,
    load_discrepancies,
    reproduce,
    run_level,
)
from model_props.verdicts.snapshot import load_snapshot
from model_props.verdicts.stats import N_BOOT
from model_props.verdicts.study import load_study

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the docs' own modules, beside this script
import claim_pages  # noqa: E402
import stamps  # noqa: E402
from gen_reference import options_cli, options_markers, options_pytest  # noqa: E402
from gen_site import quickstart_failure, quickstart_output  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _study():
    study = load_study("smoke")
    if study is None:
        raise SystemExit("fixtures/smoke-seeds.json is missing: run model-props seed-study")
    return study


def readme_scope() -> str:
    """What the references' verdicts are about: the committed study's seeds."""
    return (f"Each reference's verdict is about its architecture, over the {len(_study().seeds)} training seeds of the "
            f"committed seed study (`fixtures/smoke-seeds.json`, each seed on a measurement sample of its own, "
            f"comparisons paired by seed).")  # fmt: skip


def scope_legend() -> str:
    """The scopes the verdict table prints after a value (``reporting.summary.verdict_table``): ``a`` and the seeds
    of the study a verdict is about, ``c`` for one checkpoint."""
    k = len(_study().seeds)
    return (f"`a{k}` about the architecture, over the committed study's {k} training seeds; `c` about one "
            f"checkpoint.")  # fmt: skip


def accuracy() -> str:
    study = _study()
    lines = ["| recipe | checkpoint (step) | test accuracy, mean ± sd over seeds | per seed |", "|---|---|---|---|"]
    for name, entry in study.recipes.items():
        for checkpoint, c in entry["checkpoints"].items():
            acc = c["test_accuracy"]
            per_seed = ", ".join(f"{a:.3f}" for a in acc)
            lines.append(f"| {name} | {checkpoint} ({c['step'][0]}) | {statistics.mean(acc):.3f} ± "
                         f"{statistics.stdev(acc):.3f} | {per_seed} |")  # fmt: skip
    return "\n".join(lines) + "\n\n" + stamps.study_stamp()


def verdicts() -> str:
    """Per claim x reference: the verdict the expectation snapshot holds (what the claim tests assert), each part's
    snapshot verdict and value over every seed, and where the current study now differs from the snapshot."""
    study, snapshot = _study(), load_snapshot("smoke")
    if snapshot is None:
        raise SystemExit("fixtures/smoke-expectations.json is missing: run model-props expectations --update")
    references = ["vit", "pit", "swin", "resnet", "alternet"]
    lines = ["| claim | " + " | ".join(references) + " |", "|---|" + "---|" * len(references)]
    priority = {"contradicted": 0, "inconclusive": 1, "supported": 2}
    for claim in list_claims():
        cells = []
        for model in references:
            expected = snapshot.expected(claim, model)
            if expected is None:
                cells.append("-")
                continue
            now = {p.part.name: p for p in study.evaluate(claim, model).parts}
            parts = []
            for name, verdict in expected.parts.items():
                if verdict == "skipped" and now[name].verdict == "skipped":
                    continue
                value = f" {now[name].estimate.value:+.3g}" if now[name].estimate else ""
                if now[name].degenerate:
                    value += " (degenerate)"
                elif (mde := now[name].minimum_detectable_effect) is not None:
                    value += f" (MDE {mde:.2g})"
                differs = "" if now[name].verdict == verdict else f" (study now: {now[name].verdict})"
                parts.append(f"{name} {claim_pages.SHORT[verdict]}{value}{differs}")
            decided = [v for v in expected.parts.values() if v != "skipped"]
            overall = min(decided, key=priority.__getitem__) if decided else "-"
            cells.append(f"**{overall}**: " + "; ".join(parts) if parts else "-")  # "-": does not apply
        lines.append(f"| `{claim.id}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + stamps.study_stamp()


def disagreements() -> str:
    """Each disagreement between papers on the references: both sides on the disputing claim's statistic, from the
    study's architecture verdicts (the records the suite writes, as in summary.md)."""
    study = _study()
    profile = load_profile("smoke")
    disputed = {d.claim for c in list_claims() for d in c.disputes}  # each side's own verdict beside its restatement
    outcomes = [study.evaluate(claim, model) for claim in list_claims() if claim.disputes or claim.id in disputed
                for model in study.evaluated_on(claim)]  # fmt: skip
    records = [outcome_record(o) for o in outcomes if not o.skip_reason]
    models = {n: {"training": training_facts(profile.recipe(n))} for n in profile.references}
    return "\n".join(disagreement_table(disputes(records, models)))


def _result(name: str) -> dict:
    """A benchmark's results file (``benchmarks/results/<name>``)."""
    return json.loads((ROOT / "benchmarks" / "results" / name).read_text())


def confirmation() -> str:
    study = _study()
    found = study.confirmation(list_claims())
    return (f"**{found.inside} of {found.total} held-out estimates ({found.share:.1%}) fall inside the 95 % prediction "
            f"interval of seeds {list(study.set_seeds)}** (at least 90 % needed to write a study).")  # fmt: skip


def canaries() -> str:
    """What the committed canary record holds, and what it was recorded with."""
    from model_props.study.canaries import load_canaries
    from model_props.verdicts.canaries import margin

    record = load_canaries("smoke")
    assert record is not None, "fixtures/smoke-canaries.json is missing"
    recorded = [v for parts in record.claims.values() for models in parts.values() for v in models.values()]
    fixed = sum(margin(v) == 0 for v in recorded)
    machine, versions = record.provenance["machine"], record.provenance["versions"]
    return (f"The committed record (`fixtures/smoke-canaries.json`) holds {len(recorded)} statistics of "
            f"{len(record.claims)} claims and the training canaries of {len(record.training)} recipes, seeds "
            f"{list(record.seeds)}, for the study of {record.study['date']} (seeds {record.study['seeds']}). It was "
            f"recorded at commit `{record.provenance.get('commit', 'unknown')[:7]}`, whose code the study's own code "
            f"hashes matched, on {machine['cpu']} ({machine.get('cpu_capability', '?')}), {machine['cpu_count']} cores, "
            f"with torch {versions['torch']}, timm {versions['timm']} and numpy {versions['numpy']}. {fixed} of the "
            f"statistics take one value on all three seeds, so their margin is the float floor alone: any change of "
            f"them stales their claim.") + _canary_benchmark()  # fmt: skip


def generations() -> str:
    """How far each study generation in fixtures/studies/ is built: its seeds, where each shard was built, what a
    seed cost."""
    from model_props.config.settings import Settings
    from model_props.study.generation import generations as planned
    from model_props.verdicts.canaries import machine_kind

    lines, active = [], _study().generation
    for generation in planned(Settings(profile="smoke", progress=False), ROOT / "fixtures"):
        built = [
            f"seed {seed} on {machine_kind(shard['provenance']['machine'])} at `{shard['commit']}`"
            + (f", {shard['seconds']['estimates'] / 60:.0f} min training and measuring with "
               f"{shard['seconds']['workers']} workers" if "seconds" in shard else "")
            for seed, shard in sorted(generation.shards.items())
        ]  # fmt: skip
        lines.append(f"- {generation.status(active)}" + (": " + "; ".join(built) if built else "") + ".")
    return "In this repository now:\n\n" + "\n".join(lines) if lines else "No study generation is being built."


def _canary_benchmark() -> str:
    """What ``benchmarks/canaries.py`` measured: the canary's line coverage and its move on one torch thread."""
    if not (ROOT / "benchmarks" / "results" / "canaries.json").is_file():
        return (
            "\n\nThe canaries' line coverage and thread drift are not measured yet (`python benchmarks/canaries.py`)."
        )
    data = _result("canaries.json")
    threads, packages = data["threads"], data["coverage"]["packages"]
    rows = [f"| `{name}` | {c['executed']:,} of {c['statements']:,} | {c['executed'] / c['statements']:.0%} |"
            for name, c in packages.items()]  # fmt: skip
    total = sum(c["executed"] for c in packages.values()), sum(c["statements"] for c in packages.values())
    moved = ", ".join(threads["claims_moved"]) or "none"
    return (f"\n\nRun on {threads['threads']} torch threads instead of the record's {threads['recorded_threads']} (another "
            f"order of float sums, as another machine's kernels give), from a fresh cache, the first canary seed (every "
            f"claim's canaries, {threads['seconds'] / 60:.0f} min) reproduced {threads['identical']} of its {threads['statistics']} defined statistics bit for bit; the largest move "
            f"was {threads['largest_move_sd']:.3g} seed-SD, and the claims it would stale on the record's machine kind: {moved}. The lines of the packages "
            f"the canaries are meant to run that the first seed executes ({data['coverage']['seconds_traced']:.0f} s "
            f"under the tracer):\n\n| package | lines executed | share |\n|---|---|---|\n" + "\n".join(rows)
            + f"\n| all | {total[0]:,} of {total[1]:,} | {total[0] / total[1]:.0%} |\n" + _study_code(data["coverage"])
            + "\n\n" + stamps.entry_stamps("canaries.json", [("threads", "--threads-only"), ("coverage", "--coverage-only")]))  # fmt: skip


def _study_code(coverage: dict) -> str:
    """The canaries' line coverage of the study's own code (the modules of its code digest), where measured."""
    if "study_code" not in coverage:
        return ""
    c = coverage["study_code"]
    missed = ", ".join(f"`{m}` {n}" for m, n in c["most_missed"].items())
    return (f"| the study's code: the {c['modules']} modules of its code digest | {c['executed']:,} of "
            f"{c['statements']:,} | {c['executed'] / c['statements']:.0%} |\n\nThe modules of the study's code that "
            f"miss the most lines (lines not executed): {missed}." + _study_seed(coverage))  # fmt: skip


def _study_seed(coverage: dict) -> str:
    """The lines of the study's code that a traced shard build executed, and which of them no canary runs."""
    if "study_seed" not in coverage:
        return (" Most of these a study never runs either (other datasets and models, errors on bad input); which of "
                "the lines a study runs the canaries miss is measured by building a shard under the tracer "
                "(`python benchmarks/canaries.py --coverage-only --trace-seed K`), not yet done.")  # fmt: skip
    s = coverage["study_seed"]
    unseen = "; ".join(f"`{m}` line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))}"
                       for m, lines in s["unseen"].items()) or "none"  # fmt: skip
    return (f" Building seed {s['seed']} of the study under the tracer ({s['seconds_traced'] / 60:.0f} minutes) "
            f"executed {s['lines']:,} lines of that code; the canaries execute **{s['executed']:,} of them "
            f"({s['executed'] / s['lines']:.1%})**. The lines the study ran and no canary runs: {unseen}."
            + _rebuilt(s))  # fmt: skip


def _rebuilt(traced: dict) -> str:
    """How a committed shard built again by the code of the stamp compares with the committed one, where it was."""
    if "rebuilt" not in traced:
        return ""
    from model_props.config.settings import Settings
    from model_props.study.generation import generations as planned
    from model_props.verdicts.canaries import machine_kind

    r, seed = traced["rebuilt"], traced["seed"]
    shard = next(g.shards[seed] for g in planned(Settings(profile="smoke", progress=False), ROOT / "fixtures")
                 if seed in g.shards)  # fmt: skip
    built = f"at `{shard['commit']}` on {machine_kind(shard['provenance']['machine'])}"
    moved = ("" if r["identical"] == r["statistics"] else
             f"; the largest move was {r['largest_move_sd']:.3g} seed-SD ({r['largest_move']})")  # fmt: skip
    return (
        f" That build was of a committed shard (built {built}), in a copy of its generation: of its "
        f"{r['statistics']} claim statistics **{r['identical']} came out bit for bit**{moved}, and "
        f"{r['metrics_identical']} of its {r['metrics']} checkpoint metrics (accuracy and NLL) were the same."
    )


def _trials():
    """The default run's reproduction (the references trained live) on each study seed, predicted from the others."""
    study, profile, snapshot = _study(), load_profile("smoke"), load_snapshot("smoke")
    live = profile.references.__contains__
    return [(name, seed, held_out(study, profile, name, i, snapshot, live, default_kind))
            for name in profile.references for i, seed in enumerate(study.seeds)]  # fmt: skip


def reproduction() -> str:
    """The reproduction rule's calibration: each reference's study seeds in turn predicted from the others."""
    study, profile = _study(), load_profile("smoke")
    trials = _trials()
    failed = [f"{name} seed {seed}" for name, seed, t in trials if t.failed]
    singles = sorted(sum(isinstance(c, Check) for c in t.checks) for _, _, t in trials)
    nominal = FAMILY_LEVEL / len(profile.references)
    return (f"Calibrated by leave-one-seed-out on the study, the live procedure (the default run's, the references "
            f"trained live) on each study seed predicted from the other {len(study.seeds) - 1}: **{len(failed)} of "
            f"{len(trials)} trials fail** ({', '.join(failed) if failed else 'none'}); each trial makes "
            f"{singles[0]}-{singles[-1]} single checks of the statistics the verdicts read and one omnibus, at a "
            f"nominal {nominal:.0%} per reference, so about {nominal * len(trials):.2f} failures are expected.")  # fmt: skip


def _best_test(name: str, statistics) -> str:
    """The bound on the reference's omnibus at a broad shift of 1 (:meth:`Omnibus.best_noncentrality`), on the
    committed study."""
    found = reproduce(name, statistics, shifted_live(statistics, 0.0), load_profile("smoke"))
    (omnibus,) = [c for c in found.checks if isinstance(c, Omnibus)]
    best = omnibus.best_noncentrality()
    return "- (more statistics than seeds)" if best is None else f"{best:.2f}"


def _broad_shift(name: str, statistics) -> float | None:
    """The least broad shift, in predictive SDs on every statistic towards the side its check tests (upwards for a
    two-sided one, which the omnibus does not enter), that fails the reference's omnibus on the committed study, by
    bisection to 0.05 (the omnibus's sum grows with the shift and its reference distribution is fixed); None past 6."""
    profile = load_profile("smoke")

    def fails(shift: float) -> bool:
        return any(
            isinstance(c, Omnibus) for c in reproduce(name, statistics, shifted_live(statistics, shift), profile).failed
        )

    low, high = 0.0, 6.0
    if not fails(high):
        return None
    while high - low > 0.05:
        low, high = (low, (low + high) / 2) if fails((low + high) / 2) else ((low + high) / 2, high)
    return math.ceil(high * 20) / 20


OMNIBUS_CRITICAL = statistics.NormalDist().inv_cdf(1 - run_level(load_profile("smoke")) / 2)  # at the omnibus's level


SHIFTED_STUDY = ("vit", ["park2022.msa-lowpass", "[msa-later-half]"], 0.3)  # the study issue's case: this shift


def _shifted_study_seeds(check, k: int) -> str:
    """What the check of the shifted-study case (:data:`SHIFTED_STUDY`) detects at the study's k seeds, and the seeds
    that detect its shift with 80 % power, the study's spread and the check's level held."""
    name, (claim, part), shift = SHIFTED_STUDY
    seeds = check.seeds_to_detect(shift)
    then = (f"it detects a shift of {shift:g} now" if seeds is not None and seeds <= k
            else f"{seeds or 'over 100'} seeds would detect a shift of {shift:g}")  # fmt: skip
    return (
        f"The shifted-study case: {name}'s `{claim} {part}` check detects a shift of {check.detectable():.3g} "
        f"with 80 % power at the study's {k} seeds; {then} (the study's spread and the check's level held)."
    )


def reproduction_power() -> str:
    """Each live check's shift detected with 80 % power at its level (the first step of Holm's procedure: a lower
    bound on its power), the seeds at which a reversal of its part would fail it, and the broad shift each
    reference's omnibus detects, on the default run's families over the study's seeds."""
    study, profile, snapshot = _study(), load_profile("smoke"), load_snapshot("smoke")
    rows, each, target = [], [], ""
    for name in profile.references:
        statistics = default_family(study, profile, name, snapshot)
        mean = {s.label: _mean(s.values) for s in statistics}
        readers = {r[:2] for s in statistics for r in s.readers}
        checks = {c.what: c for claim, model in readers for c in claim_checks(claim, model, {name: statistics}, mean, profile)}  # fmt: skip
        testable = [c for c in checks.values() if c.testable]
        by_sides = {n: [c for c in testable if len(c.sides) == n] for n in (1, 2)}
        level = next(iter(checks.values())).level
        counts = ", ".join(f"{len(found)} {('one', 'two')[n - 1]}-sided" for n, found in by_sides.items() if found)
        untestable = len(checks) - len(testable)
        counts += f", {untestable} untestable" if untestable else ""
        sds = ", ".join(f"{max(c.detectable_sds for c in found):.1f} {('one', 'two')[n - 1]}-sided"
                        for n, found in by_sides.items() if found)  # fmt: skip
        broad = _broad_shift(name, statistics)
        rows.append(f"| {name} | {counts} | {level:.2g} | {sds} | {f'{broad:.2f}' if broad else 'over 6'} | "
                    f"{_best_test(name, statistics)} |")  # fmt: skip
        for c in sorted(checks.values(), key=lambda c: c.what):
            if (name, c.what.split(" ", 2)[:2]) == SHIFTED_STUDY[:2]:
                target = _shifted_study_seeds(c, len(study.seeds))
            if not c.testable:
                needs = c.seeds_to_test()
                seen = f"untestable: covers the range; testable with {needs if needs else 'over 100'} seeds"
                each.append(f"| {name} | {c.what} | {'/'.join(sorted(c.sides))} | {c.scale} | {seen} | - |")
                continue
            seeds = c.seeds_to_see_reversal()
            reversal = "-" if math.isnan(c.distance_to_null()) else (
                "now" if seeds == len(study.seeds) else f"{seeds} seeds" if seeds else "over 100 seeds")  # fmt: skip
            each.append(f"| {name} | {c.what} | {'/'.join(sorted(c.sides))} | {c.scale} | "
                        f"{c.scale.shift(c.detectable())} | {reversal} |")  # fmt: skip
    return "\n".join(["| reference | single checks | level of each (Holm's first step) | 80 % power at a shift of "
                      "(study SDs) | the omnibus fails at a broad shift of (predictive SDs) | the best test at a broad shift of 1 "
                      f"(noncentrality; {OMNIBUS_CRITICAL:.2f} to fail) |", "|---|---|---|---|---|---|",
                      *rows, "", "<details><summary>Each check's shift, in its statistic's units (a factor on the "
                      "log scale, a difference on the logit scale), and the seeds at which a live value at its part's "
                      "null (a reversal of the study's verdict) would fail it</summary>", "",
                      "| reference | statistic | rejects a live value on the side | scale | 80 % power at a shift of "
                      "| a reversal fails it with |", "|---|---|---|---|---|---|", *each, "", "</details>", "",
                      target])  # fmt: skip


def live_null() -> str:
    """The live procedure's false-failure rate under the null (``benchmarks/live_null.py``)."""
    data = _result("live_null.json")
    lines = ["| reference | statistics | false-failure rate (omnibus alone) | level | Monte Carlo error | within target |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    lines += [f"| {r['reference']} | {r['statistics']} | {r['rate']:.2%} ({r['omnibus_rate']:.2%}) | {r['level']:.0%} "
              f"| {r['mc_error']:.2%} | {'yes' if r['rate'] <= r['level'] + 2 * r['mc_error'] else 'NO'} |"
              for r in data["rows"]]  # fmt: skip
    return "\n".join(lines) + (
        f"\n\n({data['replicates']:,} simulated live seeds per reference, each omnibus's reference distribution from "
        f"{data['draws']:,} draws; target: at or below the level within 2 Monte Carlo errors.)\n\n"
        + stamps.stamp("live_null.json")
    )


def live_power() -> str:
    """The live procedure's power against a broad shift (``benchmarks/live_power.py``), at the study's seeds and at
    twice as many drawn from the same truth."""
    data = _result("live_power.json")
    shifts = data["shifts"]
    found = {(r["reference"], r["seeds"], r["shift"]): r for r in data["rows"]}
    seeds = sorted({r["seeds"] for r in data["rows"]})
    head = " | ".join(f"{k} seeds, shift {d:g}" for k in seeds for d in shifts)
    lines = [f"| reference | {head} |", "|---|" + "---|" * (len(seeds) * len(shifts))]
    for reference in dict.fromkeys(r["reference"] for r in data["rows"]):
        cells = " | ".join(f"{found[reference, k, d]['rate']:.0%}" for k in seeds for d in shifts)
        lines.append(f"| {reference} | {cells} |")
    worst = max(r["mc_error"] for r in data["rows"])
    return "\n".join(lines) + (
        f"\n\n(Shifts in predictive SDs on every statistic; {data['replicates']:,} simulated live seeds per reference "
        f"and setting, each omnibus's reference distribution from {data['draws']:,} draws; Monte Carlo error at most "
        f"{worst:.1%}.)\n\n" + stamps.stamp("live_power.json")
    )


def _mean(values) -> float:
    defined = [v for v in values if v is not None]
    return statistics.mean(defined) if defined else float("nan")


def discrepancies() -> str:
    """The known discrepancies of the live draws (``fixtures/smoke-discrepancies.json``)."""
    known = load_discrepancies(load_profile("smoke"))
    if not known:
        return "None recorded."
    lines = [
        "| model | live seed | recipe fingerprint | seen on | check that fails | extra seeds' p | why |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [f"| {k.model} | {k.seed} | `{k.recipe}` | {'; '.join(k.machines)} | {k.statistic} | "
              f"{k.extra_seeds_p:.2g} | {k.why} |" for k in known]  # fmt: skip
    return "\n".join(lines)


def uncontrolled() -> str:
    """The parts without a control that counts, and why (the claim tests still judge them): one table of the parts
    whose unmutated base goes against them on a study seed (one reason, stated once), one of the parts never
    measured, and the rest with their own reasons."""

    def order(key: tuple[str, str]) -> tuple[int, str]:
        return get_claim(key[0]).number, key[1]

    def cell(key: tuple[str, str]) -> str:
        return f"| {get_claim(key[0]).number} `{key[0]}` | `{key[1]}` |"

    against = sorted(BASE_AGAINST, key=order)
    below = sorted((k for k, why in UNCONTROLLED.items() if why.startswith(BELOW_CHANCE)), key=order)
    other = sorted(set(UNCONTROLLED) - set(against) - set(below), key=order)
    lines = [f"{len(CONTROLS)} parts are controlled; {len(UNCONTROLLED)} are not.", "",
             f"**{len(against)} parts whose unmutated base goes against them** on a seed of the committed study: its "
             "estimate lies on the rule's other side there, so on weights like those the base may be contradicted "
             "already, its mutant would prove nothing, and the control cannot count on every machine.", "",
             "| claim | part | base | its mutant | study seeds against |", "|---|---|---|---|---|"]  # fmt: skip
    lines += [f"{cell(k)} {DESIGNED[k].model} | {DESIGNED[k].mutation} | {', '.join(map(str, BASE_AGAINST[k]))} |"
              for k in against]  # fmt: skip
    lines += ["", f"**{len(below)} parts never measured**: {BELOW_CHANCE}.", "",
              "| claim | part | the model below twice chance |", "|---|---|---|"]  # fmt: skip
    lines += [f"{cell(k)} {UNCONTROLLED[k].removeprefix(BELOW_CHANCE).strip(' ()')} |" for k in below]
    lines += ["", f"**{len(other)} parts for reasons of their own:**", "", "| claim | part | why it has no control |",
              "|---|---|---|"]  # fmt: skip
    lines += [f"{cell(k)} {UNCONTROLLED[k]} |" for k in other]
    return "\n".join(lines)


def readme_uncontrolled() -> str:
    """The uncontrolled parts in one line each claim (the README's short form of :func:`uncontrolled`)."""
    parts: dict[str, list[str]] = {}
    for claim_id, part in sorted(UNCONTROLLED, key=lambda cp: (get_claim(cp[0]).number, cp[1])):
        parts.setdefault(claim_id, []).append(f"`{part}`")
    return (f"**{len(CONTROLS)} parts are controlled, {len(UNCONTROLLED)} are not:** "
            + "; ".join(f"{get_claim(c).number} {', '.join(p)}" for c, p in parts.items()) + ".")  # fmt: skip


def coverage() -> str:
    data = _result("coverage.json")
    lines = ["| seeds k | one recipe: t over seeds | two recipes: paired t over seeds | Welch on the same seeds "
             "(paired width / Welch's) | one sample shared by every seed | one seed's interval over its "
             f"{data['n']} images |", "|---|---|---|---|---|---|"]  # fmt: skip
    lines += [f"| {r['k']} | {r['architecture']:.1%} | {r['paired']:.1%} | {r['welch']:.1%} ({r['width']:.2f}) | "
              f"{r['shared_sample']:.1%} | {r['one_seed']:.1%} |" for r in data["rows"]]  # fmt: skip
    return "\n".join(lines) + (
        f"\n\n({data['reps']:,} simulated studies per row; seed-to-seed sd {data['tau']} (what a seed index gives both "
        f"recipes, and each recipe's own), per-image sd {data['image']} shared by the recipes measured on one sample and "
        f"{data['model']} of each recipe's own, {data['n']} images per sample; nominal 95 %.)\n\n"
        + _two_stage(data)
        + "\n\n"
        + stamps.stamp("coverage.json")
    )


def _two_stage(data: dict) -> str:
    """A user's k checkpoints as they are measured, each replica on a sample of its own, with effects resampled from
    the committed study's standardised residuals (coverage.json's ``two_stage`` rows)."""
    rows = data["two_stage"]
    lines = [f"A user's k checkpoints, each measured on its own sample (seed, sample and noise effects resampled from "
             f"the {rows[0]['residuals']} standardised residuals of the committed study's {rows[0]['study_seeds']} "
             f"seeds; {data['reps']:,} simulated studies per row):", "",
             "| k | t over the replicas | Welch against the study's seeds | had they shared one sample |",
             "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {r['k']} | {r['replicas']:.1%} | {r['welch']:.1%} | {r['shared_sample']:.1%} |" for r in rows]
    return "\n".join(lines)


def extra_seeds() -> str:
    """Each extra-seeds benchmark (benchmarks/results/extra-seeds-*.json): a claim's parts on seeds beyond the study."""
    lines = ["| recipe, claim [part] | study's 95 % prediction interval | extra seeds: range, outside | live seed: "
             "value, p (study; study + extra) |", "|---|---|---|---|"]  # fmt: skip
    for path in sorted((ROOT / "benchmarks" / "results").glob("extra-seeds-*.json")):
        data = json.loads(path.read_text())
        for name, part in data["parts"].items():
            (low, high), extra, live = part["prediction_interval"], list(part["extra"].values()), part["live"]
            outside = ", ".join(map(str, part["extra_outside"])) or "none"
            lines.append(f"| {data['model']}, `{data['claim']}` [{name}] | [{low:+.3f}, {high:+.3f}] | seeds "
                         f"{data['seeds'][0]}-{data['seeds'][-1]}: [{min(extra):+.3f}, {max(extra):+.3f}], outside: "
                         f"{outside} | seed {live['seed']}: {live['value']:+.3f}, p = {live['p']:.2g}; "
                         f"{live['p_from_study_and_extra']:.2g} |")  # fmt: skip
    paths = sorted((ROOT / "benchmarks" / "results").glob("extra-seeds-*.json"))
    return "\n".join(lines) + "\n\n" + " ".join(stamps.stamp(p.name) for p in paths)


def sequential() -> str:
    """The simulation of sequential against fixed checkpoint verdicts, from sequential.json."""
    data = _result("sequential.json")
    lines = ["| statistic (looks) | effect (SE) | replicates (MC error at 2.5 %) | fixed: supported / contradicted | "
             "sequential: supported / contradicted | sample used | targets met |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        f, s = r["fixed"], r["sequential"]
        met = ", ".join(k.replace("_", " ") for k, ok in r["checks"].items() if ok)
        missed = ", ".join(k.replace("_", " ") for k, ok in r["checks"].items() if not ok)
        reps = f"{r.get('reps', data['reps']):,} ({r.get('mc_error', data['mc_error_at_2.5%']):.2%})"
        lines.append(f"| {r['kind']} ({', '.join(map(str, r['looks']))}) | {r['effect']} | {reps} | {f['supported']:.1%} / "
                     f"{f['contradicted']:.2%} | {s['supported']:.1%} / {s['contradicted']:.2%} | {r['used']:.0%} "
                     f"(analytic {r['analytic_used']:.0%}) | {met}{'; **missed: ' + missed + '**' if missed else ''} |")  # fmt: skip
    return "\n".join(lines) + (
        "\n\n(Targets: false verdicts (either side at effect 0, contradicted above it) at most 2.5 % within 2 Monte Carlo "
        "errors; power within 2 points of the fixed design; at most 65 % of the sample used at 4 SE and above.)\n\n"
        + stamps.stamp("sequential.json")
    )


def false_contradictions() -> str:
    study = _study()
    tests = Counter((1 - c.level) / 2 for c in list_claims() for _ in study.evaluated_on(c))
    bound = sum(alpha * n for alpha, n in tests.items())
    per = " and ".join(f"{n} at {alpha:.1%}" for alpha, n in sorted(tests.items()))
    return (f"Each claim's contradiction is tested at the one-sided family-wise level of its own confidence, "
            f"(1 - level) / 2 (Holm's procedure across its parts): of the {sum(tests.values())} claim x reference "
            f"tests of the smoke suite, {per}. If no finding were false at all, they would show at most {bound:.1f} "
            f"false contradictions on average ({' + '.join(f'{a:.1%} x {n}' for a, n in sorted(tests.items()))}); "
            f"checkpoint-scope intervals use {N_BOOT:,} bootstrap resamples.")  # fmt: skip


def grid() -> str:
    data = json.loads((ROOT / "fixtures" / "smoke-grid.json").read_text())
    w = data["common_warmup"]
    lines = [f"Common warm-up: **{w['steps']} steps** (mean best validation accuracy "
             + ", ".join(f"{v:.4f} at {k}" for k, v in w["mean_best_val_accuracy"].items()) + ").", "",
             "| reference | lr | warm-up steps | validation accuracy | learning rates tried |", "|---|---|---|---|---|"]  # fmt: skip
    for model, chosen in data["selected"].items():
        run = next(r for r in data["runs"] if r["model"] == model and r["lr"] == chosen["lr"]
                   and r["warmup_steps"] == chosen["warmup_steps"])  # fmt: skip
        tried = ", ".join(f"{lr:g}" for lr in sorted({r["lr"] for r in data["runs"] if r["model"] == model}))
        lines.append(f"| {model} | {chosen['lr']:g} | {chosen['warmup_steps']} | {run['val_accuracy']:.4f} | {tried} |")
    variants = json.loads((ROOT / "fixtures" / "smoke-variant-grid.json").read_text())
    profile = load_profile("smoke")
    for model, chosen in variants["selected"].items():
        recipe, reference = profile.recipe(model), profile.bases[model]
        base = next(r for r in variants["runs"] if r["model"] == model and r["lr"] == profile.recipe(reference).lr)
        run = next(r for r in variants["runs"] if r["model"] == model and r["lr"] == chosen["lr"])
        lines += ["", f"Variants keep their reference's recipe unless its learning rate leaves them at chance on the "
                  f"validation split; then the same grid, at the common warm-up, picks theirs "
                  f"(`fixtures/smoke-variant-grid.md`): {model} ({recipe.description.split(' (claim')[0]}) reached "
                  f"{base['val_accuracy']:.3f} at {reference}'s lr {base['lr']:g} and takes **{chosen['lr']:g}** "
                  f"({run['val_accuracy']:.4f}; tried "
                  + ", ".join(f"{lr:g}" for lr in sorted({r['lr'] for r in variants['runs'] if r['model'] == model}))
                  + ")."]  # fmt: skip
    return "\n".join(lines)


def pretrained_224() -> str:
    """The 224-px budget: the suite per model as a user runs it, and each measurement kind's seconds, those a
    comparator adds included ("-": no claim reads it of that model, as the lesions of a model without stages)."""
    from model_props.measurements.registry import REPORT_KINDS

    data = _result("pretrained_224.json")
    models = data["models"]
    pair = data.get("pair", {}).get("kinds", {})
    kinds = [k for k in REPORT_KINDS if any(k in r["suite_kinds"] or k in r["other_kinds"] for r in models.values())]
    lines = [
        f"{data['images']} images at {data['img_size']} px, {data['cpu_threads']} CPU threads "
        f"({data['provenance']['machine']['cpu']}); seconds.",
        "",
        "| | " + " | ".join(f"`{m}`" for m in models) + " |",
        "|---|" + "---|" * len(models),
        "| the suite (wall, cold cache) | " + " | ".join(f"{r['suite']['wall_s']:.0f}" for r in models.values()) + " |",
        "| its outcome | " + " | ".join(_outcome(r["suite"]) for r in models.values()) + " |",
    ]
    for kind in kinds:
        cells = [f"{r['suite_kinds'][kind]:.0f}" if kind in r["suite_kinds"]
                 else "0 (attack's chunks cover it)" if kind in r["other_kinds"] and not r["other_kinds"][kind]["whole"]
                 else f"~{r['other_kinds'][kind]['scaled_s']:.0f}*" if kind in r["other_kinds"]
                 else "-" for r in models.values()]  # fmt: skip
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    timed = {**next(iter(models.values()))["other_kinds"], **pair}
    parts = "; ".join(f"{k} {v['measured']} of {v['whole']} {v['unit']}" for k, v in timed.items() if v["measured"])
    lines += ["", "\\* what a comparator of your own (`--claims-versus`) adds, per model: only parts that compare with "
              f"another model read it. Timed on a part of its sample and scaled linearly: {parts}."]  # fmt: skip
    if pair:
        lines[-1] += (f" The cross CKA of the pair ({' and '.join(data['pair']['models'])}), measured once for both: "
                      f"~{pair['cross']['scaled_s']:.0f} s.")  # fmt: skip
    return "\n".join(lines + ["", _sequential_224(data), "", stamps.stamp("pretrained_224.json")])


def _first_look(kind: str, whole: int) -> int:
    """The units a sequential part measures to its first look over ``whole`` (whole chunks of its kind)."""
    from model_props.measurements import attack, spectrum
    from model_props.measurements.chunks import chunk_size
    from model_props.measurements.registry import REPORT_KINDS
    from model_props.verdicts.sequential import design

    fixed = {"attack": attack.CHUNK, "spectrum": spectrum.CHUNK}  # by chunk folder (attack_test shares attack's)
    chunk = fixed.get(REPORT_KINDS[kind].chunks) or chunk_size(whole)  # else an eighth of the whole
    return min(whole, -(-design(whole).sizes[0] // chunk) * chunk)


def _sequential_224(data: dict) -> str:
    """Both models with every kind a comparison reads, measured whole against the least a sequential verdict
    measures (every part of a chunked kind decided at its first look): the bounds of the 224-px suite on 2 CPU
    cores."""
    from model_props.measurements.registry import REPORT_KINDS

    whole = best = 0.0
    fractions: dict[str, tuple[int, int, str]] = {}
    timed = [*((k, v) for r in data["models"].values() for k, v in r["other_kinds"].items()),
             *data.get("pair", {}).get("kinds", {}).items()]  # fmt: skip
    for r in data["models"].values():
        whole += sum(r["suite_kinds"].values())
    best = whole
    for kind, other in timed:
        whole += other["scaled_s"]
        if REPORT_KINDS[kind].size is None or not other["whole"]:
            best += other["scaled_s"]
            continue
        fractions[kind] = (_first_look(kind, other["whole"]), other["whole"], other["unit"])
        best += other["scaled_s"] * fractions[kind][0] / other["whole"]
    firsts = ", ".join(f"{a} of the {b} {unit} ({k})" for k, (a, b, unit) in fractions.items())
    return (f"Both models with every kind a comparison reads: ~{whole:,.0f} s ({whole / 60:.0f} min) measured whole. "
            f"Judged [sequentially](design.md#sequential-checkpoint-verdicts), a part decided at its first look "
            f"measures {firsts}: at best ~{best:,.0f} s ({best / 60:.0f} min) for the pair, the kinds measured whole "
            "as before.")  # fmt: skip


def _outcome(run: dict) -> str:
    """pytest's summary of a run, without its clock and warnings: "685 passed, 78 skipped, 19 xfailed"."""
    words = run["outcome"].split(" in ")[0].split(", ")
    return ", ".join(w for w in words if not w.endswith(("deselected", "warning", "warnings")))


def _machine(run: dict, data: dict) -> str:
    """The machine a timing was measured on, with torch's instruction set (which changes its speed several-fold)."""
    machine = run.get("provenance", data["provenance"])["machine"]
    return f"{machine['cpu']} ({machine.get('cpu_capability', 'instruction set unrecorded')}), {machine['cpu_count']} cores"


def _at(run: dict) -> str:
    """Where a timing was measured: its commit, or "an earlier tree" for entries from before commits were recorded."""
    return f"commit `{run['commit']}`" if run.get("commit") else "an earlier tree (commit not recorded)"


# run_times.json's entries and the ``benchmarks/run_times.py`` arguments that measure each (for its stamp).
RUN_TIMES_ARGS = {"cold": "cold", "warm": "warm", "train": "train", "cold_all": "cold-all",
                  "new_checkpoint": "checkpoint", "new_checkpoint_all_warm": "cold-all checkpoint-all",
                  "lacking": "lacking"}  # fmt: skip


def _run_stamps(*entries: str) -> str:
    """The stamps of run_times.json's ``entries`` (:func:`stamps.entry_stamps`, with :data:`RUN_TIMES_ARGS`)."""
    return stamps.entry_stamps("run_times.json", tuple((e, RUN_TIMES_ARGS[e]) for e in entries))


def run_times() -> str:
    """The Test section's numbers, from the last ``run_times.py cold warm train`` (run_times.json): the commit, the
    date and the machine of each, the cold run's own outcome, and the full live run's where it was measured."""
    data = _result("run_times.json")
    cold, warm = data["cold"], data["warm"]
    on, warm_on = _machine(cold, data), _machine(warm, data)
    where = (f"both at {_at(warm)} on {warm.get('date', 'an unrecorded date')}"
             if cold.get("commit") == warm.get("commit") and cold.get("commit")
             else f"cold at {_at(cold)} on {cold.get('date', 'an unrecorded date')}, warm at {_at(warm)} on "
                  f"{warm.get('date', 'an unrecorded date')}"
                  + ("" if warm_on == on else f" on {warm_on}"))  # fmt: skip
    text = (f"On {on}, the default run took **{cold['seconds'] / 60:.1f} minutes cold** ({cold['seconds']:,.0f} s from "
            f"a fresh cache: \"{_outcome(cold)}\") and **{warm['seconds']:.0f} s warm** (\"{_outcome(warm)}\"), "
            f"{where}")  # fmt: skip
    if "train" in data:
        text += f"; `model-props train` took **{data['train']['seconds'] / 60:.1f} minutes** on a fresh cache"
    if "cold_all" in data:
        every = data["cold_all"]
        text += (f"; the full live run (`--claims-live=all`) took **{every['seconds'] / 60:.1f} minutes cold** "
                 f"(\"{_outcome(every)}\", {_at(every)}"
                 + (", red: what failed, and since when it passes, is in `benchmarks/RESULTS.md`)" if every["exit"]
                    else ")"))  # fmt: skip
    else:
        text += "; the full live run (`--claims-live=all`) is not measured yet (`run_times.py cold-all`)"
    return text + ". " + _run_stamps("cold", "warm", "train", "cold_all")


# The everyday loop's targets on two cores (the new-checkpoint issue), fixed before measuring: run_times.json's entry,
# what it times, the target in seconds (None: measured, no target).
RUN_TIME_TARGETS = (
    ("cold", "the default `pytest` from a fresh cache", 20 * 60),
    ("warm", "the default `pytest` again, warm", 90),
    ("train", "`model-props train` from a fresh cache", 10 * 60),
    ("new_checkpoint", "a new checkpoint of the smoke ViT, on the cache a default run left", 60),
    ("cold_all", "the full live run (`--claims-live=all`) from a fresh cache", None),
    ("new_checkpoint_all_warm", "a new checkpoint of the smoke ViT, on the cache the full live run left", None),
)


def run_time_targets() -> str:
    """The everyday loop's figures against their targets (:data:`RUN_TIME_TARGETS`), from run_times.json."""
    data = _result("run_times.json")
    rows = ["| what | measured | target | met | where the time goes |", "|---|---|---|---|---|"]
    for entry, what, target in RUN_TIME_TARGETS:
        run = data.get(entry)
        if run is None:
            rows.append(f"| {what} | not measured yet | {_seconds(target)} | - | - |")
            continue
        met = "-" if target is None else ("yes" if run["seconds"] <= target else "**no**")
        rows.append(f"| {what} | {_seconds(run['seconds'])} ({_at(run)}) | {_seconds(target)} | {met} | "
                    f"{_where_time_goes(run)} |")  # fmt: skip
    return "\n".join(rows) + "\n\n" + _run_stamps(*(entry for entry, _, _ in RUN_TIME_TARGETS))


def _where_time_goes(run: dict) -> str:
    """A timed run's largest costs as its entry records them: training and measuring ahead of the tests (a cold
    run's phases), or the seconds per measurement kind (a new checkpoint's); "-" where it records neither."""
    phases = run.get("phases")
    if phases:
        ahead = phases["training_ahead_s"] + (phases.get("measuring_ahead_s") or 0.0)
        return (f"training ahead {_seconds(phases['training_ahead_s'])} ({phases['models']} model entries), measuring "
                f"ahead {_seconds(phases.get('measuring_ahead_s'))}, the tests the other "
                f"{_seconds(run['seconds'] - ahead)}{_by_layer(run, '; of the tests: ')}")  # fmt: skip
    if "tests_s_by_layer" in run:
        return _by_layer(run, "the tests: ")
    kinds = sorted((run.get("per_kind_seconds") or {}).items(), key=lambda kv: -kv[1])
    return ", ".join(f"{kind} {seconds:.0f} s" for kind, seconds in kinds[:4]) or "-"


def _by_layer(run: dict, lead: str) -> str:
    """A timed pytest run's tests by layer (run_times.json's ``tests_s_by_layer``: each test's setup, call and
    teardown) and its slowest library test; "" where the entry predates the split."""
    layers = run.get("tests_s_by_layer")
    if not layers:
        return ""
    names = {"claims": "the claim tests", "library": "the library's own tests", "cuda": "the cuda layer"}
    slowest = next((t for t in run.get("slowest_tests", ()) if ".library." in t[0]), None)
    text = lead + ", ".join(f"{names.get(layer, layer)} {_seconds(seconds)}" for layer, seconds in layers.items())
    if slowest:
        text += f"; the slowest library test `{slowest[0].rsplit('.', 1)[-1]}` {_seconds(slowest[1])}"
    return text


def _seconds(seconds: float | None) -> str:
    """A duration as the targets state it: seconds below 2 minutes, minutes above; "-" for none."""
    if seconds is None:
        return "-"
    return f"{seconds:,.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def cold_phases() -> str:
    """Where the last cold run's time went (run_times.json's phases)."""
    cold = _result("run_times.json")["cold"]
    phases = cold["phases"]
    kinds = phases["measuring_s_by_kind"]
    trained = phases["training_ahead_s"]
    ahead = phases.get("measuring_ahead_s")
    then = (f"; then measuring ahead, on the same two workers, what the reproduction tests read: {ahead / 60:.1f} min"
            if ahead else "")  # fmt: skip
    return (f"The cold run at {_at(cold)}: {cold['seconds']:,.0f} s, \"{_outcome(cold)}\". Training ahead of the tests "
            f"{trained / 60:.1f} min ({phases['models']} model entries){then}; the tests took the rest. Measuring "
            f"{sum(kinds.values()):,.0f} s by the cache's records, summed over the processes that measured (so more than "
            "the wall time where two measured at once): "
            + ", ".join(f"{k} {v:.0f} s" for k, v in kinds.items() if v >= 1) + ". "
            + stamps.stamp("run_times.json", "cold", args="cold"))  # fmt: skip


def warm_lacking() -> str:
    """A warm run whose measurement cache is empty (run_times.json's ``lacking``): the reports its reproduction
    tests read measured ahead on the local workers against by the tests in the session's process."""
    run = _result("run_times.json").get("lacking")
    if run is None:
        return "Not measured yet: `python benchmarks/run_times.py lacking`, on a warm cache."
    rows = [
        "| the reports measured | wall time | of it, the tests | reports written | outcome |",
        "|---|---|---|---|---|",
    ]
    for label, how in (("in_session", "by each test, in the session's process (`--claims-workers=1`)"),
                       ("on_workers", "ahead of the tests, on the local workers (the default)")):  # fmt: skip
        each = run[label]
        tests = sum(each.get("tests_s_by_layer", {}).values())
        rows.append(
            f"| {how} | {_seconds(each['seconds'])} | {_seconds(tests)} | {each['reports']} | {_outcome(each)} |"
        )
    return ("\n".join(rows) + f"\n\nWorkers over session: **{run['ratio_workers_over_session']:.2f}** "
            f"(`pytest {' '.join(run['args'])}`, each on a copy of the warm cache without its measurements). "
            + _run_stamps("lacking"))  # fmt: skip


def _checkpoint_run(run: dict) -> str:
    """One new-checkpoint run of run_times.json: its time, the attacks' share, what sequential parts read, whether
    it trained a model in the test process, and its tests' outcome."""
    kinds = run["per_kind_seconds"]
    attacks = sum(kinds.get(k, 0.0) for k in ("attack", "attack_test")) / run["seconds"]
    parts = run.get("sequential_parts", [])
    totals: dict[str, list[int]] = {}  # per sampling unit: used, whole
    for p in parts:
        total = totals.setdefault(p.get("sampling", "images"), [0, 0])
        total[0], total[1] = total[0] + p["used"], total[1] + p["sample"]
    read = " and ".join(f"{used:,} of their {whole:,} {unit}" for unit, (used, whole) in totals.items())
    looked = (f"; the {len(parts)} parts judged sequentially read {read} (" + ", ".join(
        f"{p['part']} {p['used']} of {p['sample']}" for p in parts) + ")") if parts else ""  # fmt: skip
    trained = run.get("models_trained")
    said = "" if trained is None else (f"; it trained {len(trained)} models in the test process" if trained else
                                       "; it trained no model")  # fmt: skip
    outcome = (f'; its tests: "{_outcome(run)}" (on a model of yours a claim that is not supported fails its test, an '
               "inconclusive one included)") if run.get("outcome") else ""  # fmt: skip
    return (f"it took **{run['seconds']:.0f} s** for new weights of the smoke ViT on 2 CPU cores ({_at(run)}), "
            f"{attacks:.0%} of it the adversarial attacks{looked}{said}{outcome}")  # fmt: skip


def new_checkpoint() -> str:
    """The In-your-own-project sentences on a new checkpoint's wait, from run_times.json: on the cache a default
    run left (what a user meets first), and on the cache a full live run (``--claims-live=all``) warmed, where
    measured."""
    data = _result("run_times.json")
    text = "With the references cached by a default run, " + _checkpoint_run(data["new_checkpoint"]) + "."
    if "new_checkpoint_all_warm" in data:
        text += (" On the cache a full live run (`--claims-live=all`) warmed, every variant cached too, "
                 + _checkpoint_run(data["new_checkpoint_all_warm"]) + ".")  # fmt: skip
    return (
        text
        + " Where the time goes: `benchmarks/RESULTS.md`. "
        + _run_stamps("new_checkpoint", "new_checkpoint_all_warm")
    )


def evidence() -> str:
    """What each claim's paper shows, from the catalogue (the evidence a claim cites where it does not replicate)."""
    return "\n".join(
        f"- **{c.number}** `{c.id}` ({c.paper.citation}, {c.section}): {c.evidence}." for c in list_claims()
    )


def readme_verdicts() -> str:
    """The README's small table: per claim x reference, the verdict the expectation snapshot holds."""
    snapshot = load_snapshot("smoke")
    if snapshot is None:
        raise SystemExit("fixtures/smoke-expectations.json is missing: run model-props expectations --update")
    references = ["vit", "pit", "swin", "resnet", "alternet"]
    priority = {"contradicted": 0, "inconclusive": 1, "supported": 2}
    lines = ["| # | claim | " + " | ".join(references) + " |", "|---|---|" + "---|" * len(references)]
    for claim in list_claims():
        cells = []
        for model in references:
            expected = snapshot.expected(claim, model)
            decided = [v for v in expected.parts.values() if v != "skipped"] if expected else []
            cells.append(min(decided, key=priority.__getitem__) if decided else "-")  # "-": does not apply
        lines.append(f"| {claim.number} | `{claim.id}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _gpu_phase_cache(run: dict) -> str:
    """Where a gpu.py phase's time went, from the cache it filled (``cache``: ``run_times.phases``): training ahead,
    and the three kinds that measured longest; "-" for a phase that records none (before gpu.py read its cache)."""
    cache = run.get("cache")
    if not cache:
        return "-"
    kinds = list(cache["measuring_s_by_kind"].items())[:3]
    measured = ", ".join(f"{kind} {seconds:.0f} s" for kind, seconds in kinds) or "nothing measured"
    return f"training ahead {cache['training_ahead_s']:.0f} s ({cache['models']} models); {measured}"


def gpu() -> str:
    """The On-a-GPU page's times, from the last ``python benchmarks/gpu.py`` (gpu.json); "not measured yet" without it."""
    if not (ROOT / "benchmarks" / "results" / "gpu.json").is_file():
        return "Not measured yet: no GPU has run `python benchmarks/gpu.py` on this tree (benchmarks/results/gpu.json)."
    data = _result("gpu.json")
    labels = {"cuda": "`pytest -m cuda`", "cold": "cold default `pytest --claims-device cuda`",
              "checkpoint": "references trained on CUDA, then a new checkpoint of the smoke ViT",
              "pretrained": f"224-px ViT-Tiny + ResNet-18 comparator, {data['pretrained_images']} images",
              "abort": "the ResNet spectrum's abort bisected (`cuda_hessian_abort.py`)",
              "randaugment": "RandAugment grouped against one image at a time (`randaugment.py --device cuda`)"}  # fmt: skip
    rows = ["| run | wall time | outcome | where its time went (from its cache) |", "|---|---|---|---|"]
    for name, run in data["phases"].items():
        outcome = run.get("timed_out") or run.get("summary") or f"exit {run.get('exit')}"
        rows.append(f"| {labels.get(name, name)} | {run['wall_s']:.0f} s | {outcome} | {_gpu_phase_cache(run)} |")
    new = data.get("new_checkpoint")
    if new:
        rows.append(f"| of which the new checkpoint's suite | {new['seconds']:.0f} s | {new['outcome']} | - |")
    return (
        f"At commit `{data.get('commit', 'unknown')}` on {data.get('date', 'an unrecorded date')}, on {data['device']} "
        f"(torch {data['torch']}, CUDA {data['cuda']}, timm {data['timm']}, {data['cpu_count']} "
        f"cores; TF32 in matmuls {data['tf32_matmul']}, in cuDNN convolutions {data['tf32_cudnn']}), all phases side "
        f"by side within a deadline of {data['deadline_s']:.0f} s:\n\n"
        + "\n".join(rows)
        + "\n\n"
        + stamps.stamp("gpu.json")
    )


def layout_walk() -> str:
    """The walk of the model store from ``check_claim`` to a verdict (benchmarks/layout_walk.py)."""
    walk = _result("layout_walk.json")["main"]
    tree = walk["call_tree"]
    return (f"One claim test (`{walk['test']}`, the tiny profile) holds the session's model store in "
            f"**{walk['stays']} calls in {walk['files']} files, with {walk['moves']} moves between packages and "
            f"{walk['climbs']} back up a layer** (target: under 45 calls and 20 moves); its route: "
            f"{' > '.join(f'`{p}`' for p in walk['route'])}. Beneath it, the whole call tree of the test makes "
            f"{tree['calls']:,} calls in {tree['files']} files, with {tree['moves']} moves between packages.\n\n"
            + stamps.stamp("layout_walk.json", "main", "--entry main"))  # fmt: skip


def randaugment_speed() -> str:
    """RandAugment grouped by operation and sign against torchvision's loop over the images
    (``benchmarks/randaugment.py``): the CPU's file, and each device's beside it."""
    rows, stamped = [], []
    for path in sorted((ROOT / "benchmarks" / "results").glob("randaugment*.json")):
        data = _result(path.name)
        device = data["provenance"]["machine"].get("gpu") or data["provenance"]["machine"]["cpu"]
        rows += [f"| {label} | {device} | {r['per_image_s'] * 1e3:.1f} ms | {r['grouped_s'] * 1e3:.1f} ms | "
                 f"{r['speed_up']:.1f}x |" for label, r in data["batches"].items()]  # fmt: skip
        stamped.append(f"(best of {data['repeats']}) " + stamps.stamp(path.name))
    return ("| batch | on | torchvision, one image at a time | grouped by operation and sign | ratio |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n" + " ".join(stamped))  # fmt: skip


BLOCKS: dict[str, Callable[[], str]] = {
    "run-times": run_times,
    "cold-phases": cold_phases,
    "warm-lacking": warm_lacking,
    "run-time-targets": run_time_targets,
    "new-checkpoint": new_checkpoint,
    "grid": grid,
    "accuracy": accuracy,
    "verdicts": verdicts,
    "readme-verdicts": readme_verdicts,
    "readme-scope": readme_scope,
    "scope-legend": scope_legend,
    "disagreements": disagreements,
    "confirmation": confirmation,
    "canaries": canaries,
    "generations": generations,
    "reproduction": reproduction,
    "reproduction-power": reproduction_power,
    "live-null": live_null,
    "live-power": live_power,
    "discrepancies": discrepancies,
    "uncontrolled": uncontrolled,
    "readme-uncontrolled": readme_uncontrolled,
    "coverage": coverage,
    "randaugment": randaugment_speed,
    "sequential": sequential,
    "extra-seeds": extra_seeds,
    "false-contradictions": false_contradictions,
    "pretrained-224": pretrained_224,
    "gpu": gpu,
    "evidence": evidence,
    "layout-walk": layout_walk,
    "claim-index": claim_pages.index,
    "options-pytest": options_pytest,
    "options-cli": options_cli,
    "options-markers": options_markers,
    "quickstart-output": quickstart_output,
    "quickstart-failure": quickstart_failure,
}
BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(?:.*?\n)?(<!-- end: \2 -->)", re.S)


def documents() -> list[Path]:
    """Every file that holds generated blocks: the README, the documentation's pages and the benchmarks' results."""
    return [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "RESULTS.md"]


def render(text: str, made: dict[str, str]) -> str:
    """``text`` with every generated block rewritten (``made``: the blocks made so far, each made once)."""

    def body(match: re.Match) -> str:
        name = match.group(2)
        if name not in BLOCKS:
            raise SystemExit(f"no generator for block {name!r}; known: {', '.join(BLOCKS)}")
        if name not in made:
            made[name] = BLOCKS[name]()
        return match.group(1) + made[name] + "\n" + match.group(3)

    return BLOCK.sub(body, text)


def generated() -> dict[Path, str]:
    """Every generated file's text as the data makes it: each document with its blocks rewritten, and each claim's
    page (``docs/claims/``)."""
    made: dict[str, str] = {}
    fresh = {path: render(path.read_text(), made) for path in documents()}
    unused = sorted(set(BLOCKS) - set(made))
    if unused:
        sys.exit(f"generated blocks no document holds: {', '.join(unused)}")
    return fresh | claim_pages.pages()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 naming every stale file")
    args = p.parse_args()
    fresh = generated()
    differ = claim_pages.differences(fresh)
    named = [f"{path.relative_to(ROOT).as_posix()} ({why})" for path, why in differ]
    if args.check and differ:
        sys.exit(f"stale generated files: {', '.join(named)}: run python docs/generate.py")
    for path, why in differ:  # (--check has exited where any differs)
        if why == "orphaned":
            path.unlink()
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(fresh[path])
    print(("stale: " if args.check else "rewrote: ") + (", ".join(named) if named else "nothing"))


if __name__ == "__main__":
    main()
