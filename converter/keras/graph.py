"""A GraphDef written node by node: the Keras frontend's output.

Layers become the TensorFlow ops `tf.keras` itself emits for them at inference (Conv2D +
BiasAdd + Relu6, FusedBatchNormV3 with is_training false, MatMul, ...), so the GraphDef
frontend's lowering rules and every pass after them apply unchanged.
"""

from __future__ import annotations

import numpy as np

from ...schema import graph_pb2

# numpy dtype -> TensorFlow DataType enum (tensorflow/core/framework/types.proto)
TF_DTYPES = {np.dtype(np.float32): 1, np.dtype(np.int32): 3, np.dtype(np.int64): 9,
             np.dtype(np.bool_): 10}
VARIANT = "variant"   # a TensorList (DT_VARIANT) as a dtype attribute value
TF_VARIANT = 21
FLOAT = np.dtype(np.float32)


def _tensor(value: np.ndarray) -> graph_pb2.TensorProto:
    proto = graph_pb2.TensorProto(dtype=TF_DTYPES[value.dtype])
    for size in value.shape:
        proto.tensor_shape.dim.add(size=size)
    proto.tensor_content = np.ascontiguousarray(value).astype(
        value.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


class GraphWriter:
    """Appends nodes to a GraphDef; every name it returns is unique in the graph."""

    def __init__(self) -> None:
        self.graph_def = graph_pb2.GraphDef()
        self._names: set[str] = set()

    def unique(self, name: str) -> str:
        if name not in self._names:
            self._names.add(name)
            return name
        k = 1
        while f"{name}_{k}" in self._names:
            k += 1
        self._names.add(f"{name}_{k}")
        return f"{name}_{k}"

    def op(self, name: str, op_type: str, inputs=(), dtype=FLOAT, exact=False,
           **attrs) -> str:
        """Adds node `name` (made unique) computing `op_type`; returns its name. Attributes
        are given as Python values: bool, int, float, str, list of ints, numpy dtype; `T` is
        set from `dtype` unless given."""
        node = self.graph_def.node.add(name=name if exact else self.unique(name), op=op_type)
        node.input.extend(inputs)
        if "T" not in attrs and dtype is not None:
            attrs["T"] = dtype if dtype is VARIANT else np.dtype(dtype)
        for key, value in attrs.items():
            attr = node.attr[key]
            if isinstance(value, bool):
                attr.b = value
            elif isinstance(value, (int, np.integer)):
                attr.i = int(value)
            elif isinstance(value, float):
                attr.f = value
            elif isinstance(value, str) and value is not VARIANT:
                attr.s = value.encode()
            elif isinstance(value, np.dtype):
                attr.type = TF_DTYPES[value]
            elif value is VARIANT:
                attr.type = TF_VARIANT
            elif isinstance(value, (list, tuple)):
                attr.list.i.extend(int(v) for v in value)
            else:
                raise TypeError(f"attribute {key} of {name}: {type(value).__name__}")
        return node.name

    def const(self, name: str, value, control: str | None = None) -> str:
        """A constant; `control` (a node name) hangs it on a loop frame's pivot, so it
        belongs to that frame (TF's own loop bodies do so)."""
        value = np.asarray(value)
        if value.dtype == np.float64:
            value = value.astype(np.float32)
        node = self.graph_def.node.add(name=self.unique(name), op="Const")
        if control is not None:
            node.input.append(f"^{control}")
        node.attr["dtype"].type = TF_DTYPES[value.dtype]
        node.attr["value"].tensor.CopyFrom(_tensor(value))
        return node.name

    def placeholder(self, name: str, shape, dtype=FLOAT) -> str:
        """An input; None dimensions (the batch) are written unknown (-1)."""
        node = self.graph_def.node.add(name=self.unique(name), op="Placeholder")
        node.attr["dtype"].type = TF_DTYPES[np.dtype(dtype)]
        node.attr["shape"].shape.SetInParent()
        for size in shape:
            node.attr["shape"].shape.dim.add(size=-1 if size is None else size)
        return node.name


class FrameWriter(GraphWriter):
    """Writes into the same GraphDef as `parent`, inside a loop body: its constants hang
    on `pivot` (a node of the frame) by a control edge."""

    def __init__(self, parent: GraphWriter, pivot: str) -> None:
        self.graph_def = parent.graph_def
        self._names = parent._names
        self.pivot = pivot

    def const(self, name: str, value, control: str | None = None) -> str:
        return super().const(name, value, control or self.pivot)
