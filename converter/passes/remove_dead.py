"""Remove ops whose outputs nothing reads (left behind by folds and fusions)."""

from __future__ import annotations

from ..ir import Graph


def run(graph: Graph) -> int:
    return graph.remove_dead_ops()
