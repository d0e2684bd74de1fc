"""Text output: renderers hand writers text spans with style hints, never markup. Piped or under NO_COLOR the
plain writer prints the text without importing rich; on a terminal rich draws it, in colour."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from dnnresolve.render.plain import PlainWriter
from dnnresolve.render.plain_table import cell_width, draw
from dnnresolve.render.styled import Column, Table

from .conftest import REPO

FIXTURES = Path(__file__).parent / "fixtures"
PROJECTS = FIXTURES / "projects"
ANSI_RED, ANSI_BOLD = "\x1b[31m", "\x1b[1m"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_") and k != "NO_COLOR"}
    env.update(PYTHONPATH=str(REPO / "src"), TERM="xterm-256color", **extra)
    return env


def on_terminal(argv: list[str], env: dict[str, str], code: str = "", columns: int = 120) -> tuple[str, str]:
    """Run the command line (or ``code``) with standard output on a pseudo-terminal ``columns`` wide, as a user
    at a terminal does; return what the terminal showed and standard error."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "dnnresolve", *argv]
    proc = subprocess.Popen(command, stdout=slave, stderr=subprocess.PIPE, env=env, cwd=PROJECTS)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1)[0]:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n"), err.decode()


def piped(argv: list[str], env: dict[str, str]) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "dnnresolve", *argv], capture_output=True, text=True, env=env, cwd=PROJECTS, timeout=120
    )
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def test_text_that_looks_like_markup_prints_as_written_piped_and_on_a_terminal(tmp_path: Path) -> None:
    # a directory, an extra and a requirement are the user's text: rich markup in them is no markup
    root = tmp_path / "copy [bold]of \\[node] [red]"
    root.mkdir()
    detect = ["detect", "--root", str(root)]
    matrix = ["matrix", "jax[cuda12]"]
    plan = ["plan", "tensorflow[bold]==2.15.1", "--no-detect", "--driver", "535.0", "--gpu", "8.6"]
    env = _env(DNNRESOLVE_CACHE_DIR=str(tmp_path / "cache"))
    for run in (piped, lambda argv, env: ANSI.sub("", on_terminal(argv, env)[0])):
        # the title is wider than the table: a terminal wraps it, so it is compared without its white space
        assert _letters(f"dnnresolve detect: files under {root}") in _letters(run(detect, env))
        assert run(matrix, env).splitlines()[0].rstrip() == "jax[cuda12]"
        assert "tensorflow[bold]==2.15.1 -> tensorflow 2.15.1" in run(plan, env)


def _letters(text: str) -> str:
    return "".join(text.split())


CASES = {
    "plan": ["plan", "tensorflow-gpu==1.0", "--no-detect", "--cuda", "8.0", "--cudnn", "5.0.5"],
    "explain": ["explain", "CUDA driver version is insufficient for CUDA runtime version"],
    "matrix packages": ["matrix"],
    "matrix release": ["matrix", "tensorflow-gpu==1.0.0"],
    "matrix releases": ["matrix", "tensorflow-gpu"],
    "matrix nothing": ["matrix", "tensorflow-gpu==2.15.0"],
    "detect": ["detect", "--root", str(FIXTURES / "machines" / "k20m")],
    "check": ["check", "research-tf1", "pipenv-tf"],
    "doctor": ["doctor", "--root", str(FIXTURES / "machines" / "modern")],
}


def _rich_after(argv: list[str]) -> str:
    return (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write('RICH %s\\n' % ('rich' in sys.modules))\n"
    )


@pytest.mark.parametrize("argv", CASES.values(), ids=CASES.keys())
def test_plain_text_runs_leave_rich_unimported(argv: list[str], tmp_path: Path) -> None:
    env = _env(DNNRESOLVE_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run(
        [sys.executable, "-c", _rich_after(argv)], capture_output=True, text=True, env=env, cwd=PROJECTS, timeout=120
    )
    assert r.stdout.strip() and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1] == "RICH False"
    shown, err = on_terminal([], {**env, "NO_COLOR": "1"}, code=_rich_after(argv))  # a terminal asked for no colour
    assert shown.strip() and "\x1b[" not in shown and err.splitlines()[-1] == "RICH False", err


def test_a_terminal_gets_rich_colours_and_boxes(tmp_path: Path) -> None:
    env = _env(DNNRESOLVE_CACHE_DIR=str(tmp_path / "cache"))
    shown, _ = on_terminal(CASES["plan"], env)
    assert f"{ANSI_BOLD}tensorflow-gpu==1.0" in shown and f"{ANSI_RED}MISSING " in shown
    shown, _ = on_terminal(CASES["detect"], env)
    assert "╭" in shown and "375.26" in shown  # rich's rounded box, where piped output has spaces
    assert "╭" not in piped(CASES["detect"], env)


def test_plain_lines_drop_cursor_controls_and_expand_tabs() -> None:
    # a log line's carriage return would hide the start of the line when the output is read with cat
    buf = io.StringIO()
    PlainWriter(buf).line("needs\r 8.0\x07", ("\tcuDNN [bold]5.1[/]", "dim"))
    assert buf.getvalue() == "needs 8.0       cuDNN [bold]5.1[/]\n"


def _table(rows: list[tuple[str, str, str]], no_wrap: bool = False) -> Table:
    columns = (Column("item", no_wrap=no_wrap), Column("value"), Column("found in"))
    return Table(columns, rows, title="machine [x]")


def test_a_plain_table_that_fits_is_one_line_a_row() -> None:
    lines = draw(_table([("driver", "375.26", "/proc/driver/nvidia/version"), ("GPU", "K20m", "")]), 200)
    assert lines == [
        "machine [x]",
        " " * 49,
        "  item     value    found in                     ",
        " " + "─" * 47 + " ",
        "  driver   375.26   /proc/driver/nvidia/version  ",
        "  GPU      K20m                                  ",
        " " * 49,
    ]


def test_a_wide_plain_table_wraps_its_widest_columns_and_keeps_every_word() -> None:
    long_value = " ".join(f"word{i}" for i in range(60))
    path = "/" + "/".join(f"dir{i}" for i in range(40))  # one word wider than any column: folded
    lines = draw(_table([("a-no-wrap-item-name", long_value, path)], no_wrap=True), 100)
    assert {cell_width(line) for line in lines[1:]} == {100} and len(lines) > 8
    at_value, at_found = lines[2].index("value"), lines[2].index("found in")
    rows = lines[4:-1]
    assert rows[0][:at_value].strip() == "a-no-wrap-item-name"
    assert " ".join(line[at_value:at_found] for line in rows).split() == long_value.split()
    assert "".join(line[at_found:].strip() for line in rows) == path


def test_plain_table_cells_with_newlines_and_wide_characters_line_up() -> None:
    lines = draw(Table((Column("file"), Column("finding")), [("中文.txt", "first\nsource: x"), ("a", "b")]), 200)
    assert lines[3:6] == ["  中文.txt   first      ", "             source: x  ", "  a          b          "]
    assert {cell_width(line) for line in lines} == {24}
    wrapped = draw(Table((Column("a"), Column("b")), [("x" * 30, "中文字" * 20)]), 50)  # textwrap counts 中 as one
    assert {cell_width(line) for line in wrapped} == {50}
    assert "".join(line[27:].strip() for line in wrapped[3:]) == "中文字" * 20
