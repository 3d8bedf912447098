"""Build small GraphDefs in tests without TensorFlow, using edgelite's graph.proto."""

from __future__ import annotations

import numpy as np

from edgelite.schema import graph_pb2

# numpy dtype -> TensorFlow DataType (types.proto).
DT = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
      np.dtype(np.uint8): 4, np.dtype(np.int8): 6, np.dtype(np.int16): 5,
      np.dtype(np.int64): 9, np.dtype(np.bool_): 10,
      np.dtype(np.complex64): 8, np.dtype(np.uint64): 23, np.dtype(np.uint16): 17,
      np.dtype(np.uint32): 22}


def tensor_proto(value) -> graph_pb2.TensorProto:
    value = np.asarray(value)
    if value.dtype == np.float64:
        value = value.astype(np.float32)
    t = graph_pb2.TensorProto(dtype=DT[value.dtype])
    for d in value.shape:
        t.tensor_shape.dim.add(size=d)
    t.tensor_content = value.astype(value.dtype.newbyteorder("<")).tobytes()
    return t


class GraphBuilder:
    def __init__(self) -> None:
        self.gd = graph_pb2.GraphDef()

    def node(self, name: str, op: str, inputs=(), **attrs):
        n = self.gd.node.add(name=name, op=op)
        n.input.extend(inputs)
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, str):
                a.s = v.encode()
            elif isinstance(v, np.dtype):
                a.type = DT[v]
            elif isinstance(v, list):
                a.list.i.extend(v)
            elif isinstance(v, np.ndarray):
                a.tensor.CopyFrom(tensor_proto(v))
            else:
                raise TypeError(k)
        return name

    def placeholder(self, name: str, shape, dtype=np.float32):
        n = self.gd.node.add(name=name, op="Placeholder")
        n.attr["dtype"].type = DT[np.dtype(dtype)]
        n.attr["shape"].shape.SetInParent()  # shape [] is a known rank-0 shape
        for d in shape:
            n.attr["shape"].shape.dim.add(size=d)
        return name

    def const(self, name: str, value):
        value = np.asarray(value)
        if value.dtype == np.float64:
            value = value.astype(np.float32)
        return self.node(name, "Const", value=value, dtype=value.dtype)

    def bytes(self) -> bytes:
        return self.gd.SerializeToString()
