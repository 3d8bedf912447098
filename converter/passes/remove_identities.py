"""Remove IDENTITY pseudo-ops (Identity, IdentityN, StopGradient, ...): readers read the source.
"""

from __future__ import annotations

from ..ir import Graph


def run(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops if op.type == "IDENTITY"]:
        src = op.inputs[0]
        if graph.is_output(op.outputs[0]) and (graph.is_output(src) or src in graph.inputs):
            continue  # an output that merely renames an input or another output: keep a copy
        graph.bypass(op, src)
        n += 1
    return n
