"""What a layer rule works with: Keras tensors (a graph tensor with its static shape and
Keras mask) and the layer's context (config, weights, the GraphDef being written)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.names import quoted
from .graph import FLOAT, GraphWriter
from .weights import LayerWeights


@dataclass(frozen=True)
class KTensor:
    ref: str                         # the GraphDef tensor ("node" or "node:1")
    shape: tuple                     # static shape, None for the batch (and unknown) dims
    dtype: np.dtype = FLOAT
    mask: "KTensor | None" = None    # Keras' mask (bool, the shape without the last axis)

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass
class LayerCtx:
    g: GraphWriter
    class_name: str
    name: str                        # the layer's name
    prefix: str                      # node name prefix of this call (unique per call)
    config: dict
    args: list                       # positional call arguments (KTensor or lists of them)
    kwargs: dict                     # keyword call arguments
    _weights: LayerWeights | None = None
    _consts: dict = field(default_factory=dict)  # this layer's constants, shared by calls
    keras2: bool = False             # written by Keras 2 (tf.keras): its activation formulas

    @property
    def where(self) -> str:
        return f"layer {quoted(self.name)} ({self.class_name})"

    def fail(self, what: str, error=UnsupportedOpError):
        raise error(f"{self.where}: {what}")

    def cfg(self, key, default=None):
        value = self.config.get(key, default)
        return default if value is None else value

    # inputs -----------------------------------------------------------------------------
    def inputs(self) -> list[KTensor]:
        """Every tensor argument, flattened in call order (a merge layer's list)."""
        out = []
        def walk(value):
            if isinstance(value, KTensor):
                out.append(value)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    walk(v)
        walk(self.args)
        return out

    def input(self) -> KTensor:
        tensors = self.inputs()
        if not tensors:
            self.fail("called without an input tensor", ShapeError)
        return tensors[0]

    # weights ------------------------------------------------------------------------------
    def weights(self, names, sub=("", "")) -> list[np.ndarray]:
        return self._weights.arrays(names, sub)

    def const(self, key: str, value) -> str:
        """A constant of this layer, written once however many times the layer is called."""
        if key not in self._consts:
            self._consts[key] = self.g.const(f"{self.name}/{key}", value)
        return self._consts[key]

    # graph ----------------------------------------------------------------------------------
    def op(self, suffix: str, op_type: str, inputs, **attrs) -> str:
        return self.g.op(f"{self.prefix}/{suffix}", op_type, inputs, **attrs)

    def reshape(self, x: KTensor, shape, suffix="Reshape") -> KTensor:
        """x reshaped to `shape` (None: the batch, written -1)."""
        target = [-1 if d is None else int(d) for d in shape]
        ref = self.op(suffix, "Reshape",
                      [x.ref, self.g.const(f"{self.prefix}/{suffix}/shape",
                                           np.array(target, np.int32))], Tshape=np.dtype(np.int32))
        return KTensor(ref, tuple(shape), x.dtype)

    def int_const(self, suffix: str, values) -> str:
        return self.g.const(f"{self.prefix}/{suffix}", np.array(values, np.int32))


def static(ctx: LayerCtx, x: KTensor, axes=None) -> tuple:
    """x's non-batch dims, refused when one is unknown (a layer here needs them)."""
    dims = x.shape[1:] if axes is None else [x.shape[a] for a in axes]
    if any(d is None for d in dims):
        ctx.fail(f"input shape {_shape_text(x.shape)} has unknown dimensions: give the "
                 "model's input a full shape (--input-shape NAME=...)", ShapeError)
    return tuple(dims)


def channels_last(ctx: LayerCtx, x: KTensor, rank: int) -> None:
    """Refuses channels_first layers and inputs that are not [batch, *rank dims, channels]."""
    if ctx.cfg("data_format", "channels_last") != "channels_last":
        ctx.fail("data_format channels_first: edgelite reads channels_last models")
    if x.rank != rank + 2:
        ctx.fail(f"expects a rank-{rank + 2} input, got shape {list(x.shape)}")


def _shape_text(shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
