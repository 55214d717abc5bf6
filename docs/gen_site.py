"""Generated blocks of the quickstart (Home and getting-started), from the real runs in ``docs/quickstart-output.txt``.

The data file holds runs captured from the terminal by ``python benchmarks/quickstart.py``, each after a header line
``## run: NAME | command: ... | commit: ... | date: ... | machine: ... | cache: ... | code: ...``; a
``[trimmed: ...]`` line stands for lines left out. ``code`` is the hash of the code the runs show
(``benchmarks/provenance.py``): once the tree's differs, the stamp says so, and ``docs/generate.py --check`` is stale
until the docs say it. ``quickstart_output`` renders the default run's end (the verdict table, the models under
test and pytest's summary line); ``quickstart_failure`` renders the failure message and explains each line by its
kind. Wired into ``docs/generate.py``'s ``BLOCKS`` as ``quickstart-output`` and ``quickstart-failure``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from stamps import benchmark_provenance, code_current

DATA = Path(__file__).resolve().parent / "quickstart-output.txt"
SOURCE = "`docs/quickstart-output.txt`"
CAPTURE = "python benchmarks/quickstart.py"
# The widest output line the site shows whole: Home's and Getting started's column (the table of contents hidden)
# holds about 120 characters of code at 1280 px (docs/check_site.py checks it); wider lines are split or wrapped.
COLUMNS = 118


@dataclass(frozen=True)
class Run:
    """One run captured from the terminal: its header's fields and its lines."""

    fields: dict[str, str]
    lines: list[str]

    def stamp(self) -> str:
        """Where the output comes from: command, commit, date, machine and cache, as the header states them."""
        f = self.fields
        return (
            f"`{f['command']}` ({f['note']}) at commit `{f['commit']}` on {f['date']}, {f['machine']}, {f['cache']} cache "
            f"({SOURCE}, captured by `{CAPTURE}`; a `[trimmed: ...]` line stands for lines left out)"
        )

    def changed(self) -> str:
        """A paragraph that follows the output where the code it shows changed since it was captured (or it
        predates the code stamp); empty where the code is the same."""
        if "code" not in self.fields:
            return f"\n\nThis output predates code stamps, so whether the code it shows changed since is unknown; re-capture with `{CAPTURE}`."
        runs = tuple(benchmark_provenance().PYTEST_RUNS)  # the pytest runs benchmarks/quickstart.py starts
        return (
            ""
            if code_current(self.fields["code"], "benchmarks/quickstart.py", runs)
            else f"\n\nThe code this output shows changed since; re-capture with `{CAPTURE}`."
        )


def runs(path: Path = DATA) -> dict[str, Run]:
    """The data file's runs by name."""
    found: dict[str, Run] = {}
    for block in path.read_text().split("\n## run: ")[1:]:
        header, *lines = block.rstrip("\n").split("\n")
        name, *pairs = (part.strip() for part in header.split(" | "))
        found[name] = Run(dict(pair.split(": ", 1) for pair in pairs), lines)
    return found


def fenced(lines: list[str]) -> str:
    return "```text\n" + "\n".join(lines) + "\n```"


def split_columns(lines: list[str], width: int = COLUMNS) -> list[list[str]]:
    """An aligned text table (a first column, then columns two spaces apart, as the header line spaces them) as
    tables of the first column and as many of the others as fit in ``width`` characters, in order."""
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", lines[0])]  # where each column after the first begins
    bounds = [*starts, max(len(line) for line in lines) + 2]
    groups: list[list[int]] = [[]]
    for i in range(len(starts)):
        used = sum(bounds[j + 1] - bounds[j] for j in groups[-1])
        if groups[-1] and starts[0] + used + bounds[i + 1] - bounds[i] > width:
            groups.append([])
        groups[-1].append(i)
    return [
        [(line[: starts[0]] + "".join(line[bounds[j] : bounds[j + 1]] for j in group)).rstrip() for line in lines]
        for group in groups
    ]


def quickstart_output() -> str:
    """The default run's output from its verdict table on, stamped with its command, commit, date and machine; the
    verdict table split into tables of a few models each where it is wider than the page."""
    run = runs()["default"]
    start = next(i for i, line in enumerate(run.lines) if "model-props: claim verdicts" in line)
    end = next(i for i, line in enumerate(run.lines) if line.startswith("written to "))
    parts = split_columns(run.lines[start + 1 : end])
    said = f"What {run.stamp()} printed at its end"
    if len(parts) == 1:
        return f"{said}:\n\n" + fenced(run.lines[start:]) + run.changed()
    parts[0].insert(
        0, run.lines[start]
    )  # the section's title above the first table, pytest's last lines below the last
    parts[-1] += run.lines[end:]
    blocks = [fenced(part) for part in parts]
    return (
        f"{said} (its verdict table, one table in the terminal, is split here into {len(parts)} of a few models "
        f"each to fit the page):\n\n" + "\n\n".join(blocks) + run.changed()
    )


# Each kind of line in a claim test's failure, in the order they appear, and what it says.
EXPLAINED = [
    (
        r"^_+ test_claim\[",
        "pytest's header for the failing test: its id is the claim's id and the model's name.",
    ),
    (
        r"^\[trimmed: \d+ lines of traceback",
        "The traceback (the test, the `assert_claim` fixture, `ClaimOutcome.assert_expected`), left out here.",
    ),
    (
        r"ClaimContradicted: .* on .*: CONTRADICTED, about ",
        "The exception, the claim, the model and the verdict with its scope. `ClaimContradicted`: a part is "
        "contradicted (a part differing from the expectation snapshot raises `ExpectationMismatch` instead, a failed "
        "live check `LiveCheckFailed`). *About the architecture*: the interval is over the study's training seeds "
        "of the model's recipe, not over this run's weights ([scopes](verdicts.md#scopes)). A reference's test that "
        "the snapshot expects contradicted is a strict xfail in a default run; `--runxfail` shows its message.",
    ),
    (r"^E\s+claim: ", "The claim's statement, as the paper makes it ([the catalogue](claims.md))."),
    (
        r"^E\s+units: ",
        "What is measured: the statistic, on which units, checkpoints and images, and the models compared.",
    ),
    (
        r"^E\s+\[[\w-]+\] inconclusive: ",
        "A part found inconclusive: its decision rule (`statistic direction threshold`), the estimate, its 95 % "
        "interval over the paired seeds and how it was computed, the effect size, the minimum detectable effect "
        "(how far from the threshold a true effect would be decided with 80 % power) and about how many seeds would "
        "settle it ([verdicts and test outcomes](verdicts.md#verdicts-and-test-outcomes)).",
    ),
    (
        r"^E\s+\[[\w-]+\] contradicted: ",
        "The part that decides: the same fields, with an interval that lies wholly on the side against the claim "
        "(after Holm's correction across the claim's parts), so the claim is contradicted.",
    ),
    (
        r"^E\s+\[[\w-]+\] supported: ",
        "A part found supported: its interval lies wholly on the claim's side of the threshold.",
    ),
    (
        r"^E\s+live check: ",
        "A live check: this run's value of a statistic the verdict reads, on the live seed that the study does not "
        "hold, against the study's prediction bound for a new seed, one- or two-sided as the snapshot's verdict "
        "demands, with its p-value and the shift it would see with 80 % power. *Inside*: this run would not move "
        "the verdict ([the live seed](verdicts.md#the-live-seed-and-the-live-checks)).",
    ),
    (
        r"^\[trimmed: ",
        "Where the exception was raised, the warnings summary and the session's verdict and model tables, left out "
        "here (the run's own output above shows them).",
    ),
    (r"^FAILED ", "pytest's short test summary: the failing test's id and the start of its message."),
    (r"^\d+ failed", "pytest's summary line."),
]


def explanation(line: str) -> str:
    """What a line of a failure message says, by its kind; a line of no known kind fails the generator."""
    for pattern, said in EXPLAINED:
        if re.search(pattern, line):
            return said
    raise SystemExit(f"{DATA.name}: no explanation for the failure line {line!r}")


def opening(line: str, width: int = 60) -> str:
    """A line's start, to name it: its runs of spaces made one, cut at ``width`` characters."""
    line = re.sub(r"\s+", " ", line.strip())
    return line if len(line) <= width else line[:width].rstrip() + " ..."


def wrapped(line: str, width: int = COLUMNS) -> list[str]:
    """A line of a pytest failure cut at spaces into lines of at most ``width`` characters, each continuation
    indented under the text after the line's ``E`` prefix (as pytest prints it; a ``↪`` marks the continuation)."""
    prefix = re.match(r"E\s+", line)
    indent = " " * (prefix.end() if prefix else 0)
    return textwrap.wrap(line, width, subsequent_indent=indent + "↪ ", break_on_hyphens=False) or [line]


def quickstart_failure() -> str:
    """The real failure message, with its long lines wrapped to fit the page, then each of its lines (consecutive
    lines of one kind together) explained."""
    run = runs()["failure"]
    start = next(i for i, line in enumerate(run.lines) if line.startswith("___"))
    lines = run.lines[start:]
    items: list[tuple[list[str], str]] = []
    for line in lines:
        said = explanation(line)
        if items and items[-1][1] == said:
            items[-1][0].append(line)
        else:
            items.append(([line], said))
    numbered = []
    for first, (group, said) in enumerate(items, start=1):
        where = f"`{opening(group[0])}`" + (f" and {len(group) - 1} more like it" if len(group) > 1 else "")
        numbered.append(f"{first}. {where}: {said}")
    shown = [part for line in lines for part in wrapped(line)]
    said = f"What {run.stamp()} printed (lines wider than the page wrapped, each continuation marked `↪`)"
    return f"{said}:\n\n" + fenced(shown) + run.changed() + "\n\nLine by line:\n\n" + "\n".join(numbered)
