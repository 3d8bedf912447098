"""A SavedModel's graph with its variables as constants: what `convert_variables_to_constants`
does in TensorFlow, on the GraphDef alone.

    VarHandleOp / VariableV2 with a restored value  ->  Const (the checkpoint's tensor)
    ReadVariableOp(resource)                        ->  Identity (T = its dtype)
    ResourceGather(resource, indices)               ->  GatherV2(params, indices, axis 0)

The rewrite covers the main graph and every function of the library (TF2 graphs read their
variables inside the signature's functions, passed in as resource arguments); then the
library keeps only the functions the kept nodes call. Saving and restoring (SaveV2,
RestoreV2, MergeV2Checkpoints, the NoOps tying them) is left out by the pruning to the
signature's outputs that every conversion does.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import GraphError
from edgelite.names import quoted
from ...schema import graph_pb2 as pb
from ..control_flow.functions import called_functions
from ..graphdef import parse_ref
from ..tf_tensor import to_const

def _reads(nodes, add_const) -> None:
    """ReadVariableOp -> Identity, ResourceGather -> GatherV2 on the variable's value."""
    for node in list(nodes):
        if node.op == "ReadVariableOp":
            dtype = node.attr["dtype"].type
            for a in list(node.attr):
                if a != "_output_shapes":
                    del node.attr[a]
            node.op = "Identity"
            node.attr["T"].type = dtype
        elif node.op == "ResourceGather":
            dtype, tind = node.attr["dtype"].type, node.attr["Tindices"].type
            batch_dims = node.attr["batch_dims"].i if "batch_dims" in node.attr else 0
            for a in list(node.attr):
                if a != "_output_shapes":
                    del node.attr[a]
            node.op = "GatherV2"
            node.attr["Tparams"].type, node.attr["Tindices"].type = dtype, tind
            node.attr["Taxis"].type = 3
            node.attr["batch_dims"].i = batch_dims
            data = [i for i in node.input if not i.startswith("^")]
            ctrl = [i for i in node.input if i.startswith("^")]
            del node.input[:]
            node.input.extend(data[:2] + [add_const(f"{node.name}/axis", batch_dims)] + ctrl)


def freeze(gd: pb.GraphDef, values: dict[str, np.ndarray]) -> pb.GraphDef:
    """A copy of `gd` with the variables in `values` (node name -> value) constant."""
    out = pb.GraphDef()
    out.CopyFrom(gd)
    for node in out.node:
        if node.name in values:
            to_const(node, values[node.name])

    def main_const(name: str, v: int) -> str:
        n = out.node.add()
        to_const(n, np.asarray(v, np.int32))
        n.name = name
        return name

    _reads(out.node, main_const)
    for f in out.library.function:
        def fn_const(name: str, v: int, f=f) -> str:
            n = f.node_def.add()
            to_const(n, np.asarray(v, np.int32))
            n.name = name
            return f"{name}:output:0"
        _reads(f.node_def, fn_const)
    return out


def prune_library(gd: pb.GraphDef, keep_nodes) -> None:
    """Keep only the library functions that the nodes `keep_nodes` call, directly or not."""
    wanted = called_functions(gd, keep_nodes)
    kept = [f for f in gd.library.function if f.signature.name in wanted]
    del gd.library.function[:]
    gd.library.function.extend(kept)


def needed_nodes(gd: pb.GraphDef, outputs: list[str]) -> list:
    """The main-graph nodes the outputs depend on (data and control inputs)."""
    by_name = {n.name: n for n in gd.node}
    seen, stack = set(), [parse_ref(o).node for o in outputs]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        if name not in by_name:
            raise GraphError(f"the signature reads {quoted(name)}, which is not in the graph")
        seen.add(name)
        stack.extend(i.lstrip("^").split(":")[0] for i in by_name[name].input)
    return [n for n in gd.node if n.name in seen]
