"""The reference pages cannot drift from the code: docs/options.md holds what ``docs/gen_reference.py`` makes of the
option declarations and names every pytest option, ``[tool.model_props]`` key, ``model-props`` subcommand and flag;
every command the FAQ and the glossary write exists; the glossary defines the terms the other pages use, and each
page's first prose use of a term links it (``docs/glossary_links.py``)."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from model_props.cli import _parser
from model_props.config.options import OPTIONS
from model_props.plugin.hooks import MARKERS
from model_props.verdicts.study import load_study, regenerate

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PYTEST_OWN = {"--pyargs", "--collect-only"}  # pytest's own options the pages use


def _module(name: str = "gen_reference"):
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}


def _declared() -> list[str]:
    """Every name a reader may look up, taken from the declarations themselves (not from the generator)."""
    names = [o.pytest for o in OPTIONS if o.pytest] + [f"`{o.name}`" for o in OPTIONS if o.table]
    for name, parser in _subcommands().items():
        names += [f"model-props {name}", *sorted(_flags(parser))]
    return list(dict.fromkeys(names))


def _missing(page: str) -> list[str]:
    """The declared names that ``page`` does not hold as a whole word (``--cache`` is not in ``--claims-cache``)."""
    return [n for n in _declared() if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", page)]


OPTIONS_PAGE = (DOCS / "options.md").read_text()


@pytest.mark.parametrize("block", ["options-pytest", "options-cli", "options-markers"])
def test_an_options_block_is_what_the_generator_makes(block):
    found = re.search(rf"<!-- generated: {block} -->\n(.*?)\n<!-- end: {block} -->", OPTIONS_PAGE, re.S)
    assert found, f"docs/options.md: no block {block!r}"
    assert found.group(1) == getattr(_module(), block.replace("-", "_"))(), f"stale: regenerate {block}"


def test_the_options_page_names_every_declared_option_and_flag():
    assert _missing(OPTIONS_PAGE) == []
    assert {"--claims-img-size", "--claims-recipes"} <= set(re.findall(r"--[\w-]+", OPTIONS_PAGE))


def test_the_check_finds_an_option_the_page_lacks():
    lacking = OPTIONS_PAGE.replace("--claims-img-size", "").replace("`--out ", "`")
    assert _missing(lacking) == ["--claims-img-size", "--out"]


def _commands(page: str) -> str:
    """The page's code: inline spans and fenced blocks."""
    return "\n".join(a or b for a, b in re.findall(r"```\w*\n(.*?)```|`([^`\n]+)`", page, re.S))


@pytest.mark.parametrize("page", ["faq.md", "glossary.md"])
def test_every_command_a_page_writes_exists(page):
    code = _commands((DOCS / page).read_text())
    subcommands = _subcommands()
    used = re.findall(r"model-props ([a-z-]+)", code)
    assert used and set(used) <= set(subcommands), f"{page}: unknown subcommands {set(used) - set(subcommands)}"
    flags = set().union(*map(_flags, subcommands.values()), {o.pytest for o in OPTIONS if o.pytest}, PYTEST_OWN)
    assert set(re.findall(r"(?<![\w-])--[a-z][\w-]*", code)) - flags == set()
    assert set(re.findall(r"-m (\w+)", code)) <= set(MARKERS)


def test_the_faq_gives_the_command_that_regenerates_the_study():
    study = load_study("smoke")
    assert study is not None and regenerate("smoke", study.seeds) in (DOCS / "faq.md").read_text()


TERMS = ["msa", "live-seed", "seed-study", "part", "degenerate", "control", "mutant", "expectation-snapshot",
         "reference", "variant", "independent-run", "inconclusive", "supported", "contradicted", "sequential-verdict",
         "known-discrepancy", "family", "gate"]  # fmt: skip


def test_the_glossary_has_a_heading_per_term():
    headings = re.findall(r"^## (.+)$", (DOCS / "glossary.md").read_text(), re.M)
    anchors = [re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings]
    assert set(TERMS) - set(anchors) == set()
    assert anchors == sorted(anchors), "the glossary is in alphabetical order"


NAV = re.findall(r"^\s*- [^\n]*?:\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
NOT_CHECKED = {"glossary.md": "it defines the terms; its entries link each other where it helps"}
LINKED_PAGES = [f"docs/{p}" for p in NAV if p not in NOT_CHECKED] + ["README.md"]


@pytest.mark.parametrize("page", LINKED_PAGES)
def test_each_glossary_terms_first_use_on_a_page_links_the_glossary(page):
    """Prose only: generated blocks, code, headings and other links' text are not searched (docs/glossary_links.py);
    a claim page's links come from docs/claim_pages.py."""
    assert _module("glossary_links").unlinked((ROOT / page).read_text()) == []


def test_the_readmes_glossary_links_point_at_the_docs_file():
    targets = re.findall(r"\]\(([^)\s]*glossary\.md#[\w-]+)\)", (ROOT / "README.md").read_text())
    terms = _module("glossary_links").terms()
    assert targets and {t.split("#")[0] for t in targets} == {"docs/glossary.md"}
    assert {t.split("#")[1] for t in targets} <= set(terms)


def test_the_glossary_check_finds_an_unlinked_first_use_and_skips_code_and_generated_blocks():
    links = _module("glossary_links")
    assert len(NAV) >= 40 and "glossary.md" in NAV, NAV
    assert links.unlinked("A seed control (an independent run)\nis no control of a mutant.\n") == [
        'control (line 2: "control")', 'independent-run (line 1: "independent run")', 'mutant (line 2: "mutant")']  # fmt: skip
    quiet = (
        "`part`, <!-- generated: x -->part<!-- end: x -->\n```\npart\n```\n## Parts\n[parts](glossary.md#part); a part"
    )
    assert links.unlinked(quiet) == []
    assert links.link_first_uses("Each part and its parts; MSAs, msa.") == (
        "Each [part](glossary.md#part) and its parts; [MSAs](glossary.md#msa), msa.")  # fmt: skip
    index = (DOCS / "index.md").read_text()
    unlinked = re.sub(r"\[([^]]*)\]\(glossary\.md#live-seed\)", r"\1", index, count=1)
    assert [u.split()[0] for u in links.unlinked(unlinked)] == ["live-seed"]
