"""Remove IDENTITY pseudo-ops (Identity, IdentityN, StopGradient, ...): readers read the source.
"""

from __future__ import annotations

from edgelite.errors import GraphError
from edgelite.names import quoted
from ..ir import Graph


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("IDENTITY"):
        src = op.inputs[0]
        if graph.is_output(op.outputs[0]) and graph.is_output(src) and not graph.is_subgraph:
            raise GraphError(f"outputs {quoted(src.name)} and {quoted(op.outputs[0].name)} are "
                             "the same tensor (an Identity of the other); name only one of "
                             "them in --outputs")
        # (an output that is a graph input becomes that input: a tensor may be both, and
        # TFLite needs no op to copy it; a subgraph may return one tensor twice)
        graph.bypass(op, src)
        n += 1
    return n
