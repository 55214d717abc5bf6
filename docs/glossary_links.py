"""The glossary's terms on a page: where each is first used in prose, whether that use links ``glossary.md``, and
the page with its first uses linked.

A term is a ``## heading`` of ``docs/glossary.md``; it matches as a whole word, in any case (all capitals stay
capitals: ``MSA``, ``MSAs``), singular or plural, its words joined by a space or a hyphen (``checkpoint-scope``),
plus the aliases in ``ALIASES``. Prose is what is left of the markdown once its generated blocks
(``<!-- generated: NAME -->`` to ``<!-- end: NAME -->``), comments, fenced code, headings, admonition titles,
mkdocstrings directives (``::: module``), code spans, HTML tags, images and links are blanked, and the phrases in
``NOT_THE_TERM`` (the same word in its everyday sense). Blanking keeps every offset, so a match's offset is the
page's. A term's first use is linked when a glossary link to its anchor (``[parts](glossary.md#part)``) comes
before any unlinked prose use.

Used by ``docs/claim_pages.py`` (the generated claim pages link their first uses) and checked on every page by
``property_tests/library/test_docs_reference.py``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parent / "glossary.md"
ALIASES = {
    "expectation-snapshot": [r"snapshots?"],  # "the snapshot" is the expectation snapshot on every page
    "log-amplitude": [r"Δlog(?:A|-amplitudes?)"],  # the symbol the papers and the claims write
}
NOT_THE_TERM = [  # the same word in its everyday sense, never linked
    r"(?:real|negative|positive)\s+part",  # of a complex number, of a spectrum (papers.md)
    r"seed\s+controls?",  # a second training run read beside a model: an independent run, not a mutant's control
    r"(?:exception|model|timm's(?:\s+and\s+torchvision's)?|torchvision's)\s+famil(?:y|ies)",  # architectures, exceptions
]
BLANKED = [  # what is not prose, in the order it is blanked (dot matches newline, ^ and $ match at lines)
    r"<!-- generated: ([\w-]+) -->.*?<!-- end: \1 -->",
    r"<!--.*?-->",
    r"^([ \t]*)(```|~~~).*?^\1\2[^\n]*$",
    r"^(?:#+ |::: |!!! |\?\?\?\+? )[^\n]*",
    r"(`+)[^\n]+?\1",
]
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]*)(?:\s+\"[^\"]*\")?\)")
GLOSSARY_TARGET = re.compile(r"(?:^|/)glossary\.md#([\w-]+)$")


def anchor(heading: str) -> str:
    """A heading's anchor as the site makes it: lower case, words joined by hyphens (``live-seed``)."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def _pattern(words: list[str]) -> str:
    """The words joined by a space or hyphen, the last singular or plural (``y`` -> ``ies``)."""
    last = words[-1]
    last = re.escape(last[:-1]) + "(?:y|ies)" if last.endswith("y") else re.escape(last) + "s?"
    return r"[\s-]+".join([*map(re.escape, words[:-1]), last])


@functools.cache
def terms(glossary: Path = GLOSSARY) -> dict[str, re.Pattern[str]]:
    """Per anchor, the pattern of the term's prose uses, from the glossary's ``##`` headings."""
    found = {}
    for heading in re.findall(r"^## (.+)$", glossary.read_text(), re.M):
        body = "|".join([_pattern(heading.split()), *ALIASES.get(anchor(heading), [])])
        found[anchor(heading)] = re.compile(rf"(?<![\w./-])(?:{body})(?![\w-])", 0 if heading.isupper() else re.I)
    return found


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with all but its prose blanked (same length), and the offset of each anchor's first glossary link."""
    for pattern in BLANKED:
        text = re.sub(pattern, _blank, text, flags=re.S | re.M)
    linked: dict[str, int] = {}
    for link in LINK.finditer(text):
        target = GLOSSARY_TARGET.search(link.group(2))
        if target and not link.group(0).startswith("!"):
            linked.setdefault(target.group(1), link.start())
    text = LINK.sub(_blank, text)
    text = re.sub(r"</?[A-Za-z][^>\n]*>", _blank, text)
    return re.sub("|".join(NOT_THE_TERM), _blank, text, flags=re.I), linked


def first_uses(text: str) -> dict[str, tuple[int, bool]]:
    """Per term the page uses in prose: the offset of its first use and whether that use links the glossary."""
    blanked, linked = prose(text)
    found = {}
    for name, pattern in terms().items():
        use = pattern.search(blanked)
        link = linked.get(name)
        if link is not None and (use is None or link < use.start()):
            found[name] = (link, True)
        elif use is not None:
            found[name] = (use.start(), False)
    return found


def unlinked(text: str) -> list[str]:
    """Each term whose first prose use does not link the glossary, as ``anchor (line N: "the use")``."""
    found = []
    for name, (offset, is_linked) in first_uses(text).items():
        if not is_linked:
            line = text.count("\n", 0, offset) + 1
            use = terms()[name].match(prose(text)[0], offset)
            found.append(f'{name} (line {line}: "{use.group(0) if use else "?"}")')
    return found


def link_first_uses(text: str, glossary: str = "glossary.md") -> str:
    """``text`` with each term's unlinked first prose use made a link to ``glossary#anchor``."""
    blanked, _ = prose(text)
    spans: list[tuple[int, int, str]] = []
    for name, (offset, is_linked) in sorted(first_uses(text).items(), key=lambda item: item[1][0]):
        use = terms()[name].match(blanked, offset)
        if not is_linked and use is not None and (not spans or spans[-1][1] <= use.start()):  # no link in a link
            spans.append((use.start(), use.end(), name))
    for start, end, name in reversed(spans):
        text = f"{text[:start]}[{text[start:end]}]({glossary}#{name}){text[end:]}"
    return text
