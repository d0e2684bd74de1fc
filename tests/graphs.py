"""Checks over import graphs the shape tests build (module -> modules it imports)."""

from __future__ import annotations

from collections.abc import Mapping, Set


def assert_acyclic(graph: Mapping[str, Set[str]]) -> None:
    """Fail naming the first import cycle found (``a -> b -> a``), visiting modules in name order."""
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for nxt in sorted(graph.get(module, ())):
            visit(nxt, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
