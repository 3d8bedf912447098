"""Fold GATHER(GATHER(params, UNIQUE(x).values), UNIQUE(x).positions) into GATHER(params, x).

tf.nn.embedding_lookup_sparse looks up each distinct id once -- Unique, then a Gather of
the table by the distinct ids, then (weighted, or inside SparseSegment*) a Gather of those
rows by every id's position among them. values[positions[i]] == x[i] (UNIQUE's contract,
kernels/unique.py), so the two gathers are one gather of the table by the ids themselves:
the same rows, bit for bit, two ops fewer (UNIQUE's dynamic output and a gather gone).

Both gathers must be plain row gathers (axis 0, batch_dims 0), x a vector, and the
first gather read by nothing else; UNIQUE goes when its values are no longer read.
"""

from __future__ import annotations

from ..ir import Graph, Op


def _row_gather(op: Op | None) -> bool:
    return op is not None and op.type == "GATHER" and op.options.get("axis", 0) == 0 \
        and op.options.get("batch_dims", 0) == 0


def run(graph: Graph) -> int:
    n = 0
    for unique in graph.ops_of("UNIQUE"):
        values, positions = unique.outputs
        for outer in list(graph.consumers(positions)):
            inner = graph.producer(outer.inputs[0])
            if not (_row_gather(outer) and outer.inputs[1] is positions and _row_gather(inner)
                    and inner.inputs[1] is values and graph.use_count(inner.outputs[0]) == 1
                    and not graph.is_output(inner.outputs[0])):
                continue
            outer.inputs[0] = inner.inputs[0]
            outer.inputs[1] = unique.inputs[0]
            graph.remove_op(inner)
            n += 1
        if graph.use_count(values) == 0 and graph.use_count(positions) == 0 \
                and not graph.is_output(values) and not graph.is_output(positions):
            graph.remove_op(unique)
    return n
