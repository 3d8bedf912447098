"""RESHAPE, SQUEEZE, EXPAND_DIMS: same elements, new shape (a copy into the output's slot).

RESHAPE matches tensorflow/lite/kernels/reshape.cc (GetOutputShape):

* the new shape comes from the 2nd input when there are two inputs and it is a 1-D
  int32 tensor (ShapeIsVector); it must then be constant here (TFLite makes the output
  dynamic otherwise). Else it comes from ReshapeOptions.new_shape, where the legacy
  value [0] means a scalar;
* one dimension may be -1: it becomes NumElements(input) / product(other dims).

SQUEEZE matches tensorflow/lite/kernels/squeeze.cc: squeeze_dims lists the dimensions
to drop (negative counts from the end; each must have size 1); an empty list drops
every dimension of size 1.

EXPAND_DIMS matches tensorflow/lite/kernels/expand_dims.cc: the axis is the 2nd input, an
int32 / int64 tensor holding one value (constant here); it lies in [-rank - 1, rank] and a
negative axis counts from the end of the output (axis + rank + 1). A 1 is inserted there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, normalize_axis, num_elements
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .versions import T, by_input_type
from edgelite.names import quoted
from ..runloop import copy_step


@dataclass(frozen=True)
class ReshapeRecord:
    shape: tuple[int, ...]

    def native_step(self, inputs, outputs):
        """The step the run loop runs with the native extension: a byte copy in C (the
        same elements in the same order; runloop.copy_step), or None."""
        return copy_step(inputs[0], outputs[0])


def _shape_from_inputs(ctx: OpContext) -> tuple[int, ...]:
    shape_input = ctx.optional_input(1)
    if (len(ctx.inputs) == 2 and shape_input is not None and shape_input.rank == 1
            and shape_input.dtype == np.int32):
        return tuple(int(d) for d in ctx.constant_input(1, "shape"))
    new_shape = tuple(int(d) for d in ctx.option("new_shape", ()))
    if new_shape == (0,):
        return ()  # legacy TOCO files write [0] for a scalar
    return new_shape


def resolve_shape(ctx: OpContext, requested: tuple[int, ...], count: int) -> tuple[int, ...]:
    """Replace a single -1 by the size that keeps ``count`` elements."""
    if any(d < -1 for d in requested):
        raise ctx.shape_error(f"new shape {list(requested)} has a dimension below -1")
    unknown = [i for i, d in enumerate(requested) if d == -1]
    if len(unknown) > 1:
        raise ctx.shape_error(f"new shape {list(requested)} has more than one -1")
    known = num_elements(tuple(d for d in requested if d != -1))
    shape = list(requested)
    if unknown:
        if known == 0 or count % known != 0:
            raise ctx.shape_error(
                f"cannot infer the -1 in {list(requested)} for an input of {count} elements"
            )
        shape[unknown[0]] = count // known
    if num_elements(tuple(shape)) != count:
        raise ctx.shape_error(
            f"cannot reshape {count} elements into {list(requested)} "
            f"({num_elements(tuple(shape))} elements)"
        )
    return tuple(shape)


def prepare_reshape(ctx: OpContext):
    ctx.check_arity(1, 2)
    x = ctx.input(0)
    shape = resolve_shape(ctx, _shape_from_inputs(ctx), num_elements(x.shape))
    return (OutputSpec(shape, x.dtype),), ReshapeRecord(shape)


def prepare_squeeze(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    dims = tuple(ctx.option("squeeze_dims", ()))
    if dims:
        drop = {normalize_axis(ctx, d, x.rank) for d in dims}
        for d in sorted(drop):
            if x.shape[d] != 1:
                raise ctx.shape_error(
                    f"cannot squeeze dimension {d} of size {x.shape[d]} (shape {list(x.shape)})"
                )
    else:
        drop = {i for i, d in enumerate(x.shape) if d == 1}
    shape = tuple(d for i, d in enumerate(x.shape) if i not in drop)
    return (OutputSpec(shape, x.dtype),), ReshapeRecord(shape)


def prepare_expand_dims(ctx: OpContext):
    ctx.check_arity(2, 2)
    x, axis_t = ctx.input(0), ctx.input(1)
    ctx.require_dtype(axis_t, (np.int32, np.int64), "axis")
    axis_values = ctx.constant_input(1, "axis").reshape(-1)
    if axis_values.size != 1:
        raise ctx.shape_error(
            f"axis {quoted(axis_t.name)} must hold one value, has {axis_values.size}")
    axis = normalize_axis(ctx, int(axis_values[0]), x.rank + 1)
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return (OutputSpec(shape, x.dtype),), ReshapeRecord(shape)


def eval(rec: ReshapeRecord, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0].reshape(rec.shape))


# per_sample: given an input and output that both lead with the batch, the row-major
# order keeps each sample's values together (batch_split.py checks the shapes).
OPS = (
    OpDef("RESHAPE", shape_operands=(1,), reshapes=True, strings=True, int16=TYPE_GENERIC,
          float=Kernel(prepare_reshape, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True, exact=True),
    OpDef("SQUEEZE", reshapes=True, int16=TYPE_GENERIC,
          float=Kernel(prepare_squeeze, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True, exact=True,
          version=by_input_type({T.STRING: 2})),  # op_version.cc: string 2 (RESHAPE: 1)
    OpDef("EXPAND_DIMS", shape_operands=(1,), reshapes=True, int16=TYPE_GENERIC,
          float=Kernel(prepare_expand_dims, eval), integer=TYPE_GENERIC,
          quant=QuantRule.SAME_AS_INPUT, per_sample=True),
)
