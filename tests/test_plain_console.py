"""render.plain prints what rich prints when output is plain (piped, NO_COLOR), without importing rich."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape as rich_escape

from dnnresolve.render.console import rich_console
from dnnresolve.render.plain import PlainConsole, escape, markup_text

STYLES = ["bold", "dim", "bold red", "italic", "yellow", "green"]
USER_TEXT = st.lists(
    st.sampled_from([*"ab [/]\\#@=x:.-_中é😀\t\r\x07\x1b\n", "[bold]", "\\[", "[/]", "[x=1]", "[#fff]"]),
    max_size=20,
).map("".join)
STYLED = st.tuples(st.sampled_from(STYLES), USER_TEXT, st.booleans()).map(
    lambda t: f"[{t[0]}]{escape(t[1])}[/{t[0] if t[2] else ''}]"
)


def _rich_prints(markup: bool | None, *objects: str) -> str:
    buf = io.StringIO()
    rich_console(buf, plain=True).print(*objects, markup=markup)
    return buf.getvalue()


def _plain_prints(markup: bool | None, *objects: str) -> str:
    buf = io.StringIO()
    PlainConsole(buf).print(*objects, markup=markup)
    return buf.getvalue()


@given(USER_TEXT)
def test_escape_is_richs_escape(text: str) -> None:
    assert escape(text) == rich_escape(text)


def _markup(pieces: list[tuple[bool, str]]) -> str:
    """Styled pieces and user texts joined by spaces. escape() marks one whole text: "[/" and "]" escaped apart
    would join into a tag, so the user texts next to each other are joined first and escaped as one."""
    parts: list[str] = []
    text: list[str] = []
    for styled, piece in pieces:
        if not styled:
            text.append(piece)
            continue
        if text:
            parts.append(escape(" ".join(text)))
            text = []
        parts.append(piece)
    if text:
        parts.append(escape(" ".join(text)))
    return " ".join(parts)


def test_user_texts_next_to_each_other_are_escaped_as_one() -> None:
    # the pieces hypothesis once drew: escaped apart, "[/" and "]" made the closing tag "[/ ]"
    markup = _markup([(False, "[/"), (False, "]")])
    assert markup == "\\[/ ]" and _plain_prints(None, markup) == _rich_prints(None, markup) == "[/ ]\n"


@given(st.lists(st.one_of(STYLED.map(lambda m: (True, m)), USER_TEXT.map(lambda t: (False, t))), max_size=6))
def test_well_formed_markup_prints_as_rich_prints_it(pieces: list[tuple[bool, str]]) -> None:
    markup = _markup(pieces)
    assert _plain_prints(None, markup) == _rich_prints(None, markup)


@given(USER_TEXT)
def test_text_without_markup_prints_as_rich_prints_it(text: str) -> None:
    assert _plain_prints(False, text) == _rich_prints(False, text)
    assert _plain_prints(None, escape(text)) == _rich_prints(None, escape(text))


@pytest.mark.parametrize(
    "line",
    [
        "[bold]tensorflow-gpu==1.0[/] -> tensorflow-gpu 1.0.0 for CUDA 8.0",
        "  [red]MISSING [/] cudnn               needs 5.1.x                                  has 5.0.5",
        "       [dim]note: " + escape("pip install 'torch[cuda]' \\[x] C:\\path\\") + "[/]",
        "[bold red]conflict[/]: " + escape("nvidia-cudnn-cu12==8.9.2.26 [torch] vs ==9.1.0.70 [jax]"),
        "[dim]No NVIDIA driver or GPU is known for this machine; the checks that need one show '?'.[/]",
        "  1. keep it [yellow](needs root)[/]",
        "",
    ],
)
def test_the_lines_the_renderers_print(line: str) -> None:
    assert _plain_prints(None, line) == _rich_prints(None, line)
    assert markup_text(line) + "\n" == _rich_prints(None, line)


def test_tabs_and_control_codes_go_through_rich() -> None:
    for text in ("a\tb", "ab\rcd", "bell\x07"):
        plain = PlainConsole(io.StringIO())
        plain.print(text, markup=False)
        assert plain._rich is not None
        assert isinstance(plain.rich(), Console)


def test_piped_plan_and_explain_text_do_not_import_rich() -> None:
    code = (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "for argv in (['plan', 'tensorflow-gpu==1.0', '--cuda', '8.0', '--cudnn', '5.0.5'],"
        " ['explain', 'CUDA driver version is insufficient for CUDA runtime version']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('RICH', 'rich' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "Options, best first:" in out.stdout and "insufficient" in out.stdout
    assert out.stdout.rstrip().endswith("RICH False")
