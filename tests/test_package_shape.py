"""The packages split by job (cli, matrix, solve) stay one-way: no import cycle among their modules, and a
command's start-up imports its own handler module only."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .graphs import assert_acyclic

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dnnresolve"


def _edges(path: Path, names: set[str]) -> set[str]:
    """The sibling modules ``path`` imports (``from .x import``, ``from . import x``), lazily or not; an import
    for the type checker only is no edge."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for b in node.body
        for n in ast.walk(b)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and id(node) not in typing_only:
            out.update([node.module] if node.module else [a.name for a in node.names])
    return (out & names) - {path.stem}


@pytest.mark.parametrize("package", ["cli", "matrix", "solve"])
def test_the_package_has_no_import_cycle(package: str) -> None:
    files = {p.stem: p for p in (PACKAGE / package).glob("*.py")}
    graph = {name: _edges(path, set(files)) for name, path in files.items()}
    assert_acyclic(graph)


HANDLERS = {"check", "explain", "fleet", "machine", "matrix", "plan"}


@pytest.mark.parametrize(
    ("argv", "own"),
    [
        (["matrix", "tensorflow-gpu==1.0.0", "--json"], "matrix"),
        (["plan", "tensorflow-gpu==1.0", "--no-detect", "--json"], "plan"),
        (["detect", "--json"], "machine"),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_a_command_imports_its_own_handler_module_only(argv: list[str], own: str, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted(m for m in sys.modules if m.startswith('dnnresolve.cli.'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(DNNRESOLVE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    line = next(x for x in out.stderr.splitlines() if x.startswith("MODULES"))
    handlers = {m.removeprefix("dnnresolve.cli.") for m in line.split()[1:]} & HANDLERS
    assert handlers == {own}, out.stderr
