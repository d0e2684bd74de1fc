"""Explain's shape (#22): its reading half is an input to the advice, never the other way round."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .graphs import assert_acyclic

SRC = Path(__file__).resolve().parents[1] / "src"


def test_reading_a_message_loads_neither_the_advice_nor_the_planner() -> None:
    code = (
        "import sys\n"
        "from dnnresolve.explain import diagnose\n"
        "(d,) = diagnose(['Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0'])\n"
        "assert d.fixes, d\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[:2] in (['dnnresolve', 'advice'],"
        " ['dnnresolve', 'plan'], ['dnnresolve', 'matrix'], ['dnnresolve', 'solve']))\n"
        "print(loaded)\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(SRC)}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_module_of_the_reading_half_imports_the_advice() -> None:
    reading = SRC / "dnnresolve" / "explain"
    for path in reading.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "from ..advice" not in text and "import dnnresolve.advice" not in text, path


def _imports(path: Path) -> set[str]:
    """The explain modules a module imports, lazily or not; imports for type checking only are no edge."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for b in node.body for n in ast.walk(b))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in typing_only and node.level == 1:
            out.add(node.module or "")
            if not node.module:  # from . import x
                out.update(a.name for a in node.names)
    return out - {""}


def test_the_reading_half_has_no_import_cycle() -> None:
    reading = SRC / "dnnresolve" / "explain"
    graph = {p.stem: _imports(p) & {q.stem for q in reading.glob("*.py")} for p in reading.glob("*.py")}
    graph.pop("__init__")
    assert_acyclic(graph)
