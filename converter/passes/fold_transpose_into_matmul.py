"""Fold a TRANSPOSE that swaps the last two axes into the BATCH_MATMUL reading it.

BATCH_MATMUL(TRANSPOSE(a, [.., n-1, n-2]), b) = BATCH_MATMUL(a, b, adj_x = not adj_x), and
likewise for b with adj_y.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from .patterns import sole_producer


def _swaps_last_two(perm) -> bool:
    p = list(np.asarray(perm).reshape(-1))
    n = len(p)
    return n >= 2 and p == list(range(n - 2)) + [n - 1, n - 2]


def run(graph: Graph) -> int:
    n = 0
    for mm in graph.ops_of("BATCH_MATMUL"):
        for i, flag in ((0, "adj_x"), (1, "adj_y")):
            tr = sole_producer(graph, mm.inputs[i], {"TRANSPOSE"})
            if tr is None or not tr.inputs[1].is_const or not _swaps_last_two(tr.inputs[1].data):
                continue
            mm.inputs[i] = tr.inputs[0]
            mm.options[flag] = not mm.options.get(flag, False)
            graph.remove_op(tr)
            n += 1
    return n
