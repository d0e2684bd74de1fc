"""Each subcommand's --help teaches: a description, examples to copy, and what its exit status means."""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Callable

import pytest

from dnnresolve.cli import parser
from dnnresolve.cli.parser import build_parser, command_parser

Run = Callable[..., subprocess.CompletedProcess[str]]
COMMANDS = list(parser.COMMANDS)


def _section(text: str, heading: str) -> list[str]:
    """The lines under ``heading`` up to the next blank line."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_a_description_two_examples_and_the_exit_statuses(run_cli: Run, command: str) -> None:
    r = run_cli(command, "--help", env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    text = r.stdout
    description = text.split("\n\n")[1]  # after the usage lines
    assert not description.startswith(("options:", "positional")), text
    assert len(description.split()) >= 12, description  # sentences, not the one-line summary alone
    examples = [line.strip() for line in _section(text, "Examples:") if line.strip().startswith("dnnresolve ")]
    assert len(examples) >= 2 and all(e.startswith(f"dnnresolve {command}") for e in examples), text
    statuses = _section(text, "Exit status:")
    for code in ("0", "1", "2", "70"):
        assert any(re.match(rf"\s+{code}\s+\S", line) for line in statuses), (code, statuses)
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_and_argument_has_help_text(command: str) -> None:
    missing = [a.dest for a in _actions(command_parser(command)) if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []


@pytest.mark.parametrize("command", COMMANDS)
def test_the_full_parser_shows_the_same_help_as_the_subcommand_alone(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dnnresolve plan --help` builds the plan parser alone; the whole command line must say the same."""
    monkeypatch.setenv("COLUMNS", "80")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sub.choices[command].format_help() == command_parser(command).format_help()


def test_help_wraps_its_prose_to_a_narrow_terminal_but_keeps_commands_whole(run_cli: Run) -> None:
    text = run_cli("plan", "--help", env={"COLUMNS": "60"}).stdout
    examples = [line for line in _section(text, "Examples:") if line.strip().startswith("dnnresolve ")]
    assert examples and all(line.startswith("  dnnresolve plan ") for line in examples)
    prose = [line for line in text.splitlines() if not line.strip().startswith("dnnresolve ")]
    assert max(len(line) for line in prose) <= 60, [line for line in prose if len(line) > 60]


def test_the_top_level_help_names_the_exit_statuses(run_cli: Run) -> None:
    r = run_cli("--help", env={"COLUMNS": "80"})
    assert r.returncode == 0
    assert "Exit status:" in r.stdout and "dnnresolve COMMAND --help" in r.stdout
