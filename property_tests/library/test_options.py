"""The session's options are declared once (``model_props.config.options.OPTIONS``); the pytest options, the
``[tool.model_props]`` keys, the settings' defaults and the ``model-props`` CLI flags agree with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_props.cli import _parser
from model_props.config.options import DEFAULTS, OPTIONS, TABLE, read_table
from model_props.config.settings import Settings

SAMPLE = {str: "x", int: 3, bool: True, list: ["vit"], dict: {}}


def test_every_pytest_option_is_registered_with_its_help(inprocess: pytest.Pytester):
    result = inprocess.runpytest_inprocess("--help")
    for o in OPTIONS:
        if o.pytest is not None:
            result.stdout.fnmatch_lines([f"*{o.pytest}*"])
    assert sum(o.pytest is not None for o in OPTIONS) >= 13


def test_the_table_accepts_exactly_the_declared_keys(tmp_path):
    lines = [f"{key} = {_toml(SAMPLE[o.kind])}" for key, o in TABLE.items() if o.kind is not dict]
    (tmp_path / "pyproject.toml").write_text("[tool.model_props]\n" + "\n".join(lines) + "\n")
    assert set(read_table(tmp_path / "pyproject.toml")) == {k for k, o in TABLE.items() if o.kind is not dict}
    assert "steps" not in TABLE and "html" not in TABLE  # command-line only


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).replace("'", '"')


def test_the_settings_defaults_are_the_declared_ones(tmp_path):
    settings = Settings.resolve({}, tmp_path, {})
    for name, default in DEFAULTS.items():
        if name in ("html",):  # the plugin's, not a setting
            continue
        assert getattr(settings, name) == default, name
    assert Settings() == Settings(**{n: v for n, v in DEFAULTS.items() if n != "html"})


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.table and o.kind is not dict], ids=lambda o: o.name)
def test_a_table_key_reaches_the_settings(tmp_path, option):
    valid = {"profile": "cpu", "device": "cpu", "models": ["vit"], "scope": "checkpoint", "inconclusive": "report",
             "live": "all"}  # fmt: skip
    value = valid.get(option.name, SAMPLE[option.kind])
    settings = Settings.resolve({option.name: value}, tmp_path, {})
    attribute = {"cache": "cache_dir", "recipes_dir": "recipes"}.get(option.name, option.name)
    got = getattr(settings, attribute)
    got = got.user_dir if option.name == "recipes_dir" else got
    expected = tmp_path / value if option.path else tuple(value) if option.kind is list else value
    assert got == expected


@pytest.mark.parametrize("where, command", [("common", "recipes"), ("train", "train")])
def test_the_cli_takes_the_declared_flags(where, command, capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    shown = capsys.readouterr().out
    flags = [o.flag for o in OPTIONS if o.cli == where or (where == "train" and o.cli == "common")]
    assert flags and all(f in shown for f in flags), (flags, shown)


def test_cli_flags_reach_the_settings(tmp_path, monkeypatch):
    from model_props import cli

    monkeypatch.chdir(tmp_path)
    args = _parser().parse_args(["train", "--profile", "cpu", f"--cache={tmp_path / 'c'}", "--train-seed", "4"])
    settings = cli._settings(args)
    assert (settings.profile, settings.cache_dir, settings.train_seed) == ("cpu", Path(tmp_path / "c"), 4)
