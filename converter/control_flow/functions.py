"""The GraphDef's function library as graphs the lowering can walk (FuncGraph).

A FunctionDef (graph_def.library.function) is a signature (input_arg / output_arg), body nodes
(node_def) and a `ret` map from output arg to body tensor. Its body names tensors differently
from a GraphDef: an input arg is "arg", a node output is "node:out_arg:index" -- output
`index` within the node's output *argument* `out_arg`, not the flat output number. The flat
number needs the op's output arguments (TF's OpDef); most ops have one (any name: "z",
"output", "y") and the index is the flat number, so only ops with several output arguments
are listed (MULTI_OUTPUT_ARGS). A reference to an unknown op's second argument is refused
rather than guessed.

FunctionDefs become FuncGraphs: the nodes in GraphDef spelling ("node" / "node:k"), each
input arg an "_Arg" node of the same name, and the returned tensors as refs. Functionalizing
TF1 control flow (functionalize_while.py, functionalize_cond.py) produces FuncGraphs too, so
the lowering (lower/functional.py) sees one kind of function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgelite.errors import GraphError
from edgelite.names import quoted, shown
from ...schema import graph_pb2
from ..graphdef import parse_ref

ARG_OP = "_Arg"

# Ops with more than one output argument: their output arguments in order (each one tensor).
# From TF's op registrations (tensorflow/core/ops/*.cc).
MULTI_OUTPUT_ARGS = {
    "Switch": ("output_false", "output_true"),
    "RefSwitch": ("output_false", "output_true"),
    "Merge": ("output", "value_index"),
    "FusedBatchNorm": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                       "reserve_space_2"),
    "FusedBatchNormV2": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2"),
    "FusedBatchNormV3": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2", "reserve_space_3"),
    "TopKV2": ("values", "indices"),
    "Unique": ("y", "idx"),
    "UniqueV2": ("y", "idx"),
    "MaxPoolWithArgmax": ("output", "argmax"),
    "QuantizeV2": ("output", "output_min", "output_max"),
    "BroadcastGradientArgs": ("r0", "r1"),
    "NonMaxSuppressionV4": ("selected_indices", "valid_outputs"),
    "NonMaxSuppressionV5": ("selected_indices", "selected_scores", "valid_outputs"),
    "CombinedNonMaxSuppression": ("nmsed_boxes", "nmsed_scores", "nmsed_classes",
                                  "valid_detections"),
    "TensorArrayV3": ("handle", "flow"),
    "TensorArrayGradV3": ("grad_handle", "flow_out"),
    "TensorListPopBack": ("output_handle", "tensor"),
    "TensorListConcatV2": ("tensor", "lengths"),
    "TensorArrayConcatV3": ("value", "lengths"),
    "FakeQuantWithMinMaxVarsGradient": ("backprops_wrt_input", "backprop_wrt_min",
                                        "backprop_wrt_max"),
}
# More functions than this in one library is not a model (TF's own graphs have hundreds).
MAX_FUNCTIONS = 100_000


@dataclass
class FuncGraph:
    """A function body: `nodes` (NodeDefs in GraphDef spelling, args as "_Arg" nodes named
    `args[i]`), returning the tensors `rets` ("node" / "node:k")."""

    name: str
    args: list[str]
    nodes: list
    rets: list[str]
    # Library functions' node names are local to the function ("add"): reports and IR
    # tensor names qualify them with the call. Functions made from TF1 frames keep the
    # GraphDef's own (global) node names.
    local_names: bool = True
    by_name: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {n.name: n for n in self.nodes}

    def passthrough(self) -> set[int]:
        """Indices i whose return is arg i itself, read directly or through Identity nodes
        (a loop invariant in a While body)."""
        same = set()
        for i, ret in enumerate(self.rets):
            ref = parse_ref(ret)
            seen = 0
            while ref.index == 0 and ref.node in self.by_name and seen < len(self.nodes):
                node = self.by_name[ref.node]
                if node.op != "Identity" or not node.input:
                    break
                ref, seen = parse_ref(node.input[0]), seen + 1
            if ref.index == 0 and i < len(self.args) and ref.node == self.args[i]:
                same.add(i)
        return same


def arg_node(name: str) -> graph_pb2.NodeDef:
    node = graph_pb2.NodeDef()
    node.name, node.op = name, ARG_OP
    return node


class Library(dict):
    """Function name -> FuncGraph."""

    def add(self, fn: FuncGraph) -> FuncGraph:
        if fn.name in self:
            raise GraphError(f"the function library has two functions named {quoted(fn.name)}")
        self[fn.name] = fn
        return fn

    def unique_name(self, base: str) -> str:
        name, k = base, 1
        while name in self:
            name, k = f"{base}_{k}", k + 1
        return name

    def called(self, node, attr: str) -> FuncGraph:
        """The function a node's function-valued attribute (cond, body, then_branch, f) names."""
        value = node.attr[attr] if attr in node.attr else None
        if value is None or value.WhichOneof("value") != "func":
            raise GraphError(f"node {quoted(node.name)} ({shown(node.op)}) lacks its function "
                             f"attribute {attr}; the GraphDef is malformed")
        name = value.func.name
        if name not in self:
            raise GraphError(f"node {quoted(node.name)} ({shown(node.op)}) calls function "
                             f"{quoted(name)}, which is not in the graph's function library; "
                             "export the graph with its library (graph.as_graph_def())")
        return self[name]


def parse_library(gd) -> Library:
    """The functions the graph's nodes call, directly or not. Others (a training graph's
    gradient functions, left in the library by freezing) are not read: an op they use
    that edgelite does not know cannot fail a conversion that never runs them."""
    lib = Library()
    if len(gd.library.function) > MAX_FUNCTIONS:
        raise GraphError(f"the function library has {len(gd.library.function)} functions "
                         f"(more than {MAX_FUNCTIONS}); the GraphDef is malformed")
    called = called_functions(gd, gd.node)
    for fdef in gd.library.function:
        if fdef.signature.name in called:
            lib.add(function_from_def(fdef))
    return lib


def called_functions(gd, nodes) -> set[str]:
    """Names of the library functions of `gd` that `nodes` call through their function-valued
    attributes (If's branches, While's cond / body, a call's f), directly or not."""
    by_name = {f.signature.name: f for f in gd.library.function}
    if not by_name:
        return set()  # (no library: nothing to look for on a 100,000-node graph's attrs)
    wanted, stack = set(), list(nodes)
    while stack:  # each function's nodes are pushed once
        node = stack.pop()
        for value in node.attr.values():
            for fname in _func_names(value):
                if fname in by_name and fname not in wanted:
                    wanted.add(fname)
                    stack.extend(by_name[fname].node_def)
    return wanted


def _func_names(value) -> list[str]:
    kind = value.WhichOneof("value")
    if kind == "func":
        return [value.func.name]
    if kind == "list":
        return [f.name for f in value.list.func]
    return []


def function_from_def(fdef) -> FuncGraph:
    """A FunctionDef -> FuncGraph, its tensor references rewritten to GraphDef spelling."""
    fname = fdef.signature.name
    args = [a.name for a in fdef.signature.input_arg]
    ops = {n.name: n.op for n in fdef.node_def}
    for a in args:
        if a in ops:
            raise GraphError(f"function {quoted(fname)}: argument {quoted(a)} is also a node "
                             "name; the function is malformed")
    nodes = [arg_node(a) for a in args]
    out_args: dict[str, str] = {}  # node -> the output arg read (ops outside the table)
    for src in fdef.node_def:
        node = graph_pb2.NodeDef()
        node.CopyFrom(src)
        del node.input[:]
        node.input.extend(_flat(fname, ops, s, f"node {quoted(src.name)}", out_args)
                          for s in src.input)
        nodes.append(node)
    rets = []
    for out in fdef.signature.output_arg:
        if out.name not in fdef.ret:
            raise GraphError(f"function {quoted(fname)} does not say what its output "
                             f"{quoted(out.name)} returns (no ret entry)")
        rets.append(_flat(fname, ops, fdef.ret[out.name], "its ret map", out_args))
    return FuncGraph(fname, args, nodes, rets)


def _flat(fname: str, ops: dict, ref: str, where: str, out_args: dict) -> str:
    """'arg' | 'node:out_arg:k' | '^node' -> 'arg' | 'node' / 'node:n' | '^node'."""
    if ref.startswith("^"):
        return ref
    parts = ref.split(":")
    if len(parts) == 1:
        return ref
    if len(parts) != 3 or not parts[2].isdigit() or parts[0] not in ops:
        raise GraphError(f"function {quoted(fname)}: {where} reads {quoted(ref)}, which is not "
                         "an argument or 'node:output:index' of a node of the function")
    node, arg, k = parts[0], parts[1], int(parts[2])
    names = MULTI_OUTPUT_ARGS.get(ops[node])
    if names is not None:
        if arg not in names:
            raise GraphError(f"function {quoted(fname)}: {where} reads output {quoted(arg)} of "
                             f"node {quoted(node)} ({shown(ops[node])}), which has outputs "
                             f"{', '.join(names)}")
        k += names.index(arg)
    elif out_args.setdefault(node, arg) != arg:
        raise GraphError(f"function {quoted(fname)}: node {quoted(node)} ({shown(ops[node])}) "
                         f"is read through output arguments {quoted(out_args[node])} and "
                         f"{quoted(arg)}; edgelite does not know the order of that op's "
                         "outputs")
    return node if k == 0 else f"{node}:{k}"
