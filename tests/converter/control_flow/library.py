"""Small GraphDefs with a function library, built in the tests (FunctionDef spelling: body
nodes read "arg" or "node:out_arg:index")."""

from __future__ import annotations

import numpy as np

from edgelite.schema import graph_pb2

from ..tfgraph import DT, GraphBuilder, tensor_proto

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)


class Function:
    def __init__(self, g: GraphBuilder, name: str, args: dict, rets: dict) -> None:
        """args: name -> dtype; rets: output name -> body tensor ("node:z:0" or an arg)."""
        self.f = g.gd.library.function.add()
        self.f.signature.name = name
        for a, dt in args.items():
            self.f.signature.input_arg.add(name=a, type=DT[np.dtype(dt)])
        for out, ref in rets.items():
            self.f.signature.output_arg.add(name=out)
            self.f.ret[out] = ref

    def node(self, name: str, op: str, inputs=(), **attrs) -> str:
        n = self.f.node_def.add(name=name, op=op)
        n.input.extend(inputs)
        for k, v in attrs.items():
            if isinstance(v, np.dtype):
                n.attr[k].type = DT[v]
            elif isinstance(v, np.ndarray):
                n.attr[k].tensor.CopyFrom(tensor_proto(v))
            elif isinstance(v, dict):  # {"func": name}
                n.attr[k].func.name = v["func"]
            else:
                n.attr[k].i = v
        return name

    def const(self, name: str, value) -> str:
        value = np.asarray(value)
        return self.node(name, "Const", value=value, dtype=value.dtype)


def call(g: GraphBuilder, name: str, op: str, inputs, **funcs) -> str:
    """A node calling functions: funcs maps attribute (f, cond, body, ...) -> function name."""
    g.node(name, op, inputs)
    node = next(n for n in g.gd.node if n.name == name)
    for attr, fname in funcs.items():
        node.attr[attr].func.name = fname
    return name


def counter_loop(op: str = "StatelessWhile", trips: int = 3) -> GraphBuilder:
    """(i, x) -> while i < trips: (i + 1, x * 2); output y = x after the loop."""
    g = GraphBuilder()
    g.placeholder("x", [1, 4])
    g.const("zero", np.int32(0))
    cond = Function(g, "cond", {"i": I32, "x": F32}, {"out": "less:z:0"})
    cond.const("limit", np.int32(trips))
    cond.node("less", "Less", ["i", "limit:output:0"], T=I32)
    body = Function(g, "body", {"i": I32, "x": F32}, {"i2": "inc:z:0", "x2": "dbl:z:0"})
    body.const("one", np.int32(1))
    body.const("two", np.float32(2))
    body.node("inc", "AddV2", ["i", "one:output:0"], T=I32)
    body.node("dbl", "Mul", ["x", "two:output:0"], T=F32)
    call(g, "loop", op, ["zero", "x"], cond="cond", body="body")
    g.node("y", "Identity", ["loop:1"], T=F32)
    return g


def graph_def(g: GraphBuilder) -> graph_pb2.GraphDef:
    return g.gd
