"""The docs' commands keep working: every `dnnresolve ...` line in a ``` block of README.md and docs/*.md, and
every example of a subcommand's --help, runs offline against this checkout, in a folder holding the files the
examples name (tests/fixtures/docs/), and must end without a usage or internal error or a traceback."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dnnresolve.cli_help import HELP

from .conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FILES = Path(__file__).parent / "fixtures" / "docs"

# (pattern, why it is not run): what needs the network or changes this machine
SKIP = [
    (r"^dnnresolve update\b", "fetches the matrix from the network"),
    (r"--verify\b", "looks each recommended wheel up on its index (network)"),
    (r"^dnnresolve install\b(?!.*--dry-run)", "runs pip, which downloads and installs"),
    (r"^dnnresolve fleet collect\b", "reads a Slurm cluster (tests/fleet start one)"),
]


def documented() -> list[tuple[str, str]]:
    """(where, command) for each command line in the docs' fenced blocks; in a block that shows a session
    (``$ dnnresolve ...`` then its output), only the ``$`` lines are commands."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        fence = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
        for start, end in zip(fence[::2], fence[1::2]):
            block = [(i + 1, lines[i].strip()) for i in range(start + 1, end)]
            session = any(text.startswith("$ ") for _, text in block)
            for lineno, text in block:
                command = text[2:] if session and text.startswith("$ ") else "" if session else text
                if command.startswith("dnnresolve ") or command == "dnnresolve":
                    found.append((f"{path.relative_to(REPO)}:{lineno}", command))
    for name, h in HELP.items():
        found += [(f"dnnresolve {name} --help", command) for command, _ in h.examples]
    return found


COMMANDS = documented()


def _skipped(command: str) -> str:
    return next((why for pattern, why in SKIP if re.search(pattern, command)), "")


def test_the_docs_show_commands_and_every_skip_is_still_needed() -> None:
    places = {where.split(":")[0] for where, _ in COMMANDS}
    assert {"README.md", "docs/check.md"} <= places and len(COMMANDS) >= 20, COMMANDS
    for pattern, why in SKIP:
        assert any(re.search(pattern, c) for _, c in COMMANDS), f"no documented command needs the skip {why!r}"


@pytest.fixture(scope="module")
def docs_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`dnnresolve` on PATH running this checkout, with a cache of its own (compiled once for all commands); no
    network: every proxy variable points at a closed port, so a command that reaches out fails, never goes out."""
    base = tmp_path_factory.mktemp("docs")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "dnnresolve"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dnnresolve "$@"\n')
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_") and not k.lower().endswith("_proxy")}
    closed = "http://127.0.0.1:9"
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO / "src"),
        DNNRESOLVE_CACHE_DIR=str(base / "cache"),
        NO_COLOR="1",
        COLUMNS="80",
        HTTP_PROXY=closed,
        HTTPS_PROXY=closed,
        ALL_PROXY=closed,
    )
    return env


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_runs(where: str, command: str, docs_env: dict[str, str], tmp_path: Path) -> None:
    why = _skipped(command)
    if why:
        pytest.skip(why)
    work = tmp_path / "work"  # the files the examples name, fresh: `detect --json > node.json` writes one
    shutil.copytree(FILES, work)
    r = subprocess.run(
        ["bash", "-c", command],
        cwd=work,
        env=docs_env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 1), f"{where}: `{command}` exited {r.returncode}: {r.stderr.strip()}"


def sessions() -> list[tuple[str, list[tuple[str, str]]]]:
    """(where, [(command, output)...]) for each block of the docs that shows a session in which every dnnresolve
    command describes its machine (`--no-detect`, or `--target` with a profile of tests/fixtures/docs/): its output
    does not depend on the machine it runs on."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        fence = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
        for start, end in zip(fence[::2], fence[1::2]):
            steps: list[tuple[str, list[str]]] = []
            for line in lines[start + 1 : end]:
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                elif steps:
                    steps[-1][1].append(line)
            commands = [c for c, _ in steps if c.startswith("dnnresolve ")]
            if commands and all("--no-detect" in c or "--target" in c for c in commands):
                where = f"{path.relative_to(REPO)}:{start + 2}"
                found.append((where, [(c, "\n".join(out)) for c, out in steps]))
    return found


SESSIONS = sessions()


@pytest.mark.parametrize(("where", "steps"), SESSIONS, ids=[w for w, _ in SESSIONS])
def test_a_documented_session_shows_what_the_commands_print(
    where: str, steps: list[tuple[str, str]], docs_env: dict[str, str], tmp_path: Path
) -> None:
    """A shown session is the real output at 80 columns: `$ cat FILE` lines give the files, and each
    dnnresolve command, run on them, prints exactly what follows it."""
    for profile in FILES.glob("*.json"):  # what --target reads; the files checked are the session's own
        shutil.copy(profile, tmp_path)
    for command, shown in steps:
        if command.startswith("cat "):
            (tmp_path / command.split()[1]).write_text(shown + "\n")
            continue
        r = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=docs_env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
        assert r.stdout.rstrip("\n") == shown, f"{where}: `{command}` now prints:\n{r.stdout}"


def test_the_readme_shows_a_session_of_check_and_of_plan_at_80_columns() -> None:
    shown = [c for where, steps in SESSIONS if where.startswith("README.md") for c, _ in steps]
    assert any(c.startswith("dnnresolve check") for c in shown) and any(c.startswith("dnnresolve plan") for c in shown)
