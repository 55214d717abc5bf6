"""A Griffe extension that renders the package's Sphinx cross-reference roles as mkdocstrings cross-references.

The docstrings use Sphinx roles (``:class:`~a.b.C```, ``:func:`.x.y```, ``:mod:`name```); mkdocstrings' Sphinx
docstring parser reads their fields (``:param:``, ``:returns:``) but leaves the roles as text, so the API page
showed them raw. No maintained package converts them (griffe-sphinx reads attribute comments;
mkdocstrings-python-xref adds a relative syntax of its own), so this one does, on the docs side, since the
docstrings of the frozen modules cannot change. Each role becomes an optional autoref
(``<autoref identifier="a.b.C" optional><code>C</code></autoref>``): a link where the page renders the target, its
title in code where it does not. A target is resolved as Sphinx does: ``~`` shows only the last name; a name is
looked up from the object's own scope outwards, then absolutely, then as the unique suffix of a path in the
package; a target that resolves to nothing stays plain code.

Loaded by ``mkdocs.yml`` (``plugins: mkdocstrings: handlers: python: options: extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(?P<body>[^`]+)`")
EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


def package_paths(root: griffe.Object) -> dict[str, str]:
    """Every object path under ``root`` mapped to its canonical path (an alias maps to its target's path)."""
    paths: dict[str, str] = {}
    pending: list[griffe.Object | griffe.Alias] = [root]
    while pending:
        obj = pending.pop()
        if isinstance(obj, griffe.Alias):
            paths[obj.path] = obj.target_path
            continue
        paths[obj.path] = obj.path
        pending.extend(obj.members.values())
    return paths


def resolve(target: str, scope: griffe.Object, paths: dict[str, str]) -> str | None:
    """The canonical path ``target`` names from ``scope`` (Sphinx's lookup: scope outwards, absolute, unique suffix)."""
    name = target.lstrip(".")
    scopes: list[griffe.Object] = []
    current: griffe.Object | None = scope
    while current is not None:
        scopes.append(current)
        current = current.parent
    for candidate in [f"{s.path}.{name}" for s in scopes] + [name]:
        if candidate in paths:
            return paths[candidate]
    suffixed = {canonical for path, canonical in paths.items() if path.endswith("." + name)}
    return suffixed.pop() if len(suffixed) == 1 else None


def rewrite(text: str, scope: griffe.Object, paths: dict[str, str]) -> str:
    """``text`` with every Sphinx role replaced by an optional autoref, or by plain code where nothing resolves."""

    def replace(match: re.Match[str]) -> str:
        body = match["body"].strip()
        explicit = EXPLICIT_TITLE.match(body)
        target = (explicit["target"] if explicit else body).lstrip("!")
        shown = target.lstrip("~").lstrip(".")
        if explicit:
            shown = explicit["title"]
        elif target.startswith("~"):
            shown = shown.rsplit(".", 1)[-1]
        path = resolve(target.lstrip("~"), scope, paths)
        if path is None:
            return f"`{shown}`"
        return f'<autoref identifier="{path}" optional><code>{shown}</code></autoref>'

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles in every docstring of a loaded package (``on_package``: the tree is complete)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        paths = package_paths(pkg)
        pending: list[griffe.Object | griffe.Alias] = [pkg]
        while pending:
            obj = pending.pop()
            if isinstance(obj, griffe.Alias):
                continue
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj.docstring.value, obj, paths)
            pending.extend(obj.members.values())
