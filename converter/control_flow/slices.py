"""Shared by the functionalize passes: a GraphDef's nodes by name, and cutting out the nodes
that compute some tensors up to a boundary (a loop's or a branch's arguments) as a FuncGraph.
"""

from __future__ import annotations

from typing import Callable

from edgelite.errors import GraphError
from edgelite.names import quoted, shown
from ...schema import graph_pb2
from ..graphdef import TensorRef, parse_ref
from .functions import FuncGraph, arg_node

SOURCE_OPS = frozenset({"Const", "HostConst"})  # read freely from any frame or branch


def control_and_data(node) -> list[str]:
    """Names of every node `node` reads, data and control inputs."""
    return [parse_ref(s.lstrip("^")).node for s in node.input]


def consumers(nodes: dict) -> dict[str, list]:
    """node name -> the nodes reading it (data or control), each once."""
    out: dict[str, list] = {}
    for node in nodes.values():
        for name in dict.fromkeys(control_and_data(node)):
            out.setdefault(name, []).append(node)
    return out


def new_node(name: str, op: str, inputs, **attrs) -> graph_pb2.NodeDef:
    node = graph_pb2.NodeDef()
    node.name, node.op = name, op
    node.input.extend(inputs)
    for key, value in attrs.items():
        if isinstance(value, bool):
            node.attr[key].b = value
        else:
            node.attr[key].func.name = value
    return node


def unique(nodes: dict, base: str) -> str:
    name, k = base, 1
    while name in nodes:
        name, k = f"{base}_{k}", k + 1
    return name


def cut_function(nodes: dict, name: str, args: list[str], rets: list[str],
                 argument: Callable[[TensorRef], str | None],
                 inside: Callable[[object], bool], what: str) -> FuncGraph:
    """The FuncGraph computing `rets` from `args`.

    Walks back from `rets`: `argument(ref)` names the argument a reference stands for (the
    walk stops there) or None; a node `inside` the region is copied with its data inputs
    rewritten the same way (control inputs are dropped: a function body needs no ordering
    beyond its data flow); a constant outside it is copied as it is; anything else outside
    is an error naming the node (`what`: "the loop 'x'", for the message).
    """
    copies: dict[str, graph_pb2.NodeDef] = {}

    def rewrite(text: str, reader: str) -> str:
        ref = parse_ref(text)
        arg = argument(ref)
        if arg is not None:
            return arg
        node = nodes.get(ref.node)
        if node is None:
            raise GraphError(f"{what}: node {quoted(reader)} reads {quoted(text)}, which is "
                             "not in the graph")
        if ref.node not in copies and ref.node not in pending:
            if not inside(node) and not (node.op in SOURCE_OPS and not node.input):
                raise GraphError(f"{what}: node {quoted(reader)} reads {quoted(text)} "
                                 f"({shown(node.op)}) from outside without passing it in; "
                                 "the control-flow structure is malformed")
            pending[ref.node] = node
        return text

    pending: dict[str, object] = {}
    out_rets = [rewrite(r, name) for r in rets]
    while pending:
        node_name, node = pending.popitem()
        copy = graph_pb2.NodeDef()
        copy.CopyFrom(node)
        del copy.input[:]
        copies[node_name] = copy
        copy.input.extend(rewrite(s, node_name) for s in node.input if not s.startswith("^"))
    clash = next((a for a in args if a in copies), None)
    if clash is not None:
        raise GraphError(f"{what}: argument {quoted(clash)} is also a node of the body")
    return FuncGraph(name, list(args), [arg_node(a) for a in args] + list(copies.values()),
                     out_rets, local_names=False)
