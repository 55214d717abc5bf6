"""The quickstart outputs the docs show on Home and Getting started, run for real: the README's ``pytest`` on a warm
cache, and one claim test's failure message from a folder outside the checkout (``--runxfail`` shows a reference's
known failure). Writes ``docs/quickstart-output.txt`` with the stamp of the code they show (``provenance.record``:
commit, date, machine, code hash); ``docs/gen_site.py`` renders it, and ``python docs/generate.py --check`` goes
stale once that code changes, as for every benchmark. A red default run is refused: the docs show a green one.

    python benchmarks/quickstart.py        # on the cache $MODEL_PROPS_CACHE names; run pytest once first (warm)

Only the first two lines of progress dots, the traceback above a failure's message and the slowest-durations table
are left out, each where it stood as one ``[trimmed: ...]`` line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from provenance import PYTEST_RUNS, record

from model_props.verdicts.canaries import machine_kind

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "quickstart-output.txt"
FAILING = "park2022.msa-reduces-variance-pit"  # a reference's known failure: the snapshot holds it contradicted
PROGRESS = re.compile(r"^(\S+\.py )?[.sxXIEFf]+\s*\[\s*\d+%\]$")  # a test file's first line names it
SECTION = re.compile(r"^=+ (.*?) =+$")


def pytest(args: list[str], cwd: Path) -> tuple[int, list[str], bool]:
    """Exit status, stdout lines (paths relative to ``cwd``) and whether the run trained anything (it says so on
    stderr)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True)  # fmt: skip
    print(f"pytest {' '.join(args)}: exit {proc.returncode}: {proc.stdout.strip().splitlines()[-1:]}", flush=True)
    lines = [line.replace(f"{cwd}/", "") for line in proc.stdout.splitlines()]  # as the reader's folder shows them
    return proc.returncode, lines, "model-props: training" in proc.stderr + proc.stdout


def default_run(lines: list[str]) -> list[str]:
    """The README's run: two lines of progress, then everything from the verdict table on, less the durations."""
    progress = [i for i, line in enumerate(lines) if PROGRESS.match(line)]
    verdicts = next(i for i, line in enumerate(lines) if "model-props: claim verdicts" in line)
    kept = [lines[i] for i in progress[:2]]
    kept.append(f"[trimmed: {verdicts - progress[2]} more lines of progress dots and the warnings summary]")
    tail = lines[verdicts:]
    start = next(i for i, line in enumerate(tail) if "slowest 60 durations" in line)
    end = next(i for i in range(start + 1, len(tail)) if SECTION.match(tail[i]) or i == len(tail) - 1)
    return kept + tail[:start] + ["[trimmed: the slowest 60 durations]"] + tail[end:]


def failure_run(lines: list[str]) -> list[str]:
    """A failure: its header, its message and pytest's closing lines, with the traceback and the sections between
    (the warnings, the verdict table, the models) each one trimmed line."""
    header = next(i for i, line in enumerate(lines) if line.startswith("___") and "test_claim[" in line)
    message = next(i for i in range(header, len(lines)) if lines[i].startswith("E "))
    end = next(i for i in range(message, len(lines)) if not lines[i].startswith("E "))
    closing = [line for line in lines if line.startswith("FAILED ")] + lines[-1:]
    return [
        lines[header],
        f"[trimmed: {message - header - 1} lines of traceback: the test, assert_claim and ClaimOutcome.assert_expected]",
        *lines[message:end],
        "[trimmed: the exception's location, the warnings summary, the verdict table and the models under test]",
        *closing,
    ]


def header(name: str, command: str, note: str, stamp: dict, trained: bool) -> str:
    machine = stamp["machine"]
    fields = {"command": command, "note": note, "commit": stamp["commit"], "date": stamp["date"],
              "machine": f"{machine_kind(machine)}, {machine.get('cpu_count', '?')} cores",
              "cache": "cold" if trained else "warm", "code": stamp["code"]}  # fmt: skip
    return f"## run: {name} | " + " | ".join(f"{k}: {v}" for k, v in fields.items())


def main() -> None:
    stamp = record(__file__, runs=PYTEST_RUNS)
    status, lines, trained = pytest(["--durations=60", "-p", "no:cacheprovider"], ROOT)
    if status != 0:
        raise SystemExit(f"the default run exited {status}; the docs show a green run: fix it first")
    with tempfile.TemporaryDirectory(prefix="model-props-quickstart-") as outside:
        args = ["--pyargs", "model_props.suite", "-p", "no:cacheprovider", "--runxfail", "-k", FAILING, "-q"]
        failed, failure, failure_trained = pytest(args, Path(outside))
    if failed != 1:
        raise SystemExit(f"{FAILING} exited {failed} under --runxfail, not 1 (a failure): pick a known failure")
    text = [
        '# model-props quickstart output: real runs, captured by benchmarks/quickstart.py; a "[trimmed: ...]" line '
        "stands for lines left out. Rendered by docs/gen_site.py.",
        header(
            "default",
            "pytest --durations=60",
            "the README's pytest; its slowest-durations table is trimmed",
            stamp,
            trained,
        ),  # fmt: skip
        *default_run(lines),
        header(
            "failure",
            f'MODEL_PROPS_CACHE=<the warm cache> pytest {" ".join(args[:-3])} -k "{FAILING}" -q',
            "from a folder outside the checkout",
            stamp,
            failure_trained,
        ),  # fmt: skip
        *failure_run(failure),
    ]
    OUT.write_text("\n".join(text) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}; run python docs/generate.py")


if __name__ == "__main__":
    main()
