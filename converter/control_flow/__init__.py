"""TensorFlow control flow -> graphs the lowering can walk: functions, While and If nodes.

Three kinds of control flow reach the converter:
  - functional ops calling the GraphDef's function library (TF2: While / StatelessWhile,
    If / StatelessIf, PartitionedCall / StatefulPartitionedCall) -- functions.py parses the
    library into FuncGraphs;
  - TF1 loops (Enter / Merge / Switch / NextIteration / LoopCond / Exit frames), also what
    convert_variables_to_constants_v2 writes by default -- functionalize_while.py raises
    them to While nodes with cond / body functions;
  - TF1 conds (Switch / Merge outside loops) -- functionalize_cond.py raises them to If
    nodes with then / else functions.
After `functionalize` the graph is acyclic and uses only functional control flow; lowering
(lower/functional.py) turns a While into a WHILE op with cond / body subgraphs, an If into
an IF op (or the taken branch, inlined, when its predicate is a constant) and a call into the
callee's ops, inlined.
"""

from __future__ import annotations

from .functionalize_cond import functionalize_conds
from .functionalize_while import FRAME_OPS, functionalize_loops
from .functions import ARG_OP, FuncGraph, Library, parse_library


def functionalize(gd, wanted: set[str] = frozenset(),
                  nodes: dict | None = None) -> tuple[dict, Library]:
    """The GraphDef's nodes (name -> NodeDef, in order) with TF1 loops and conds raised to
    While / If nodes, and the function library they call (the GraphDef's own functions and
    the ones made here). Functions holding TF1 control flow are functionalized too.
    `wanted`: the tensors asked for as outputs (a Merge's value_index among them is kept).
    `nodes`: gd's nodes by name already (TFGraph's; a dict this call may change)."""
    library = parse_library(gd)
    if nodes is None:
        nodes = {n.name: n for n in gd.node}
    nodes = _functionalize_nodes(nodes, library, wanted)
    for fn in list(library.values()):
        if any(n.op in FRAME_OPS or n.op in ("Switch", "RefSwitch") for n in fn.nodes):
            fn.nodes = list(_functionalize_nodes({n.name: n for n in fn.nodes},
                                                 library).values())
            fn.by_name = {n.name: n for n in fn.nodes}
    return nodes, library


def _functionalize_nodes(nodes: dict, library: Library, wanted=frozenset()) -> dict:
    if any(n.op in FRAME_OPS for n in nodes.values()):
        nodes = functionalize_loops(nodes, library)
        for fn in [f for f in library.values() if not f.local_names]:
            fn.nodes = list(functionalize_conds({n.name: n for n in fn.nodes},
                                                library).values())
            fn.by_name = {n.name: n for n in fn.nodes}
    return functionalize_conds(nodes, library, wanted)


__all__ = ["ARG_OP", "FuncGraph", "Library", "functionalize"]
