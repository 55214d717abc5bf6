"""The options page's tables, generated from the declarations instead of typed by hand.

``options_pytest`` renders every :data:`model_props.config.options.OPTIONS` entry (its pytest option, its
``[tool.model_props]`` key, its ``model-props`` flag, its default and its help); ``options_cli`` renders the
``model-props`` command line by introspecting its argparse parser, every subcommand with every flag it takes;
``options_markers`` the plugin's pytest markers. ``property_tests/library/test_docs_reference.py`` checks that
docs/options.md holds these blocks and names every declared option.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from model_props.cli import _parser
from model_props.config.options import OPTIONS, Option

KINDS = {str: "string", int: "integer", bool: "boolean", list: "array", dict: "table"}


def _cell(text: str) -> str:
    """Prose safe in a Markdown table cell: no column break, no HTML tag, no emphasis (a code span needs none of it:
    Python-Markdown's tables split no cell inside backticks)."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def _default(value: Any) -> str:
    """A default as the page shows it ("—": none, the help says what applies)."""
    if value is None or value == []:
        return "—"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | tuple):
        return "`" + " ".join(map(str, value)) + "`"
    return f"`{value}`"


def _key(o: Option) -> str:
    if not o.table:
        return "—"
    return f"`{o.name}` ({KINDS[o.kind]}{', a path' if o.path else ''})"


def _pytest(o: Option) -> str:
    if o.pytest is None:
        return "—"
    value = "" if o.action == "store_true" else f" {o.metavar}"
    repeat = " (repeatable)" if o.action == "append" and "repeatable" not in o.help else ""
    return f"`{o.pytest}{value}`{repeat}"


def _flag(o: Option) -> str:
    if o.flag is None:
        return "—"
    return f"`{o.flag}` ({'every subcommand' if o.cli == 'common' else o.cli})"


def options_pytest() -> str:
    """One row per declared option: pytest option, ``[tool.model_props]`` key, CLI flag, default, help."""
    lines = [
        "| pytest option | `[tool.model_props]` key | `model-props` flag | default | what it does |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {_pytest(o)} | {_key(o)} | {_flag(o)} | {_default(o.default)} | {_cell(o.help)} |" for o in OPTIONS]
    return "\n".join(lines)


def _subcommands() -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Each ``model-props`` subcommand: its help and its parser, in the parser's order."""
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in sub._choices_actions}
    return {name: (helps[name], parser) for name, parser in sub.choices.items()}


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def _invocation(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """How the argument is written, as ``--help`` shows it (``--seeds SEEDS [SEEDS ...]``)."""
    formatter = parser._get_formatter()
    if not action.option_strings:
        return str(action.metavar or action.dest.upper())
    return formatter._format_action_invocation(action)


def options_cli() -> str:
    """The ``model-props`` subcommands and their flags, from the parser: the settings flags most subcommands share
    once, then each subcommand's own."""
    commands = _subcommands()
    common = {o.flag for o in OPTIONS if o.cli == "common" and o.flag}
    sharing = [n for n, (_, p) in commands.items() if common <= {s for a in _arguments(p) for s in a.option_strings}]
    first = commands[sharing[0]][1]
    lines = [f"The settings flags of `{'`, `'.join(sharing)}` (each a pytest option and a `[tool.model_props]` key "
             "above; default: the key, else the option's default):", "",
             "| flag | default | what it does |", "|---|---|---|"]  # fmt: skip
    by_flag = {o.flag: o for o in OPTIONS if o.flag}
    for a in _arguments(first):
        if set(a.option_strings) & common:
            option = by_flag[a.option_strings[0]]
            lines.append(f"| `{_invocation(first, a)}` | {_default(option.default)} | {_cell(a.help or '')} |")
    for name, (help_text, parser) in commands.items():
        own = [a for a in _arguments(parser) if not set(a.option_strings) & common]
        lines += ["", f"**`model-props {name}`**: {_cell(help_text)}."]
        if own:
            lines += ["", "| argument | default | what it does |", "|---|---|---|"]
            for a in own:
                default = _default(str(a.default) if isinstance(a.default, Path) else a.default)
                lines.append(f"| `{_invocation(parser, a)}` | {default} | {_cell(a.help or '—')} |")
    return "\n".join(lines)


def options_markers() -> str:
    """The markers the plugin registers, for ``pytest -m``."""
    from model_props.plugin.hooks import MARKERS

    return "\n".join(f"- `{name}`: {_cell(text)}" for name, text in MARKERS.items())
