"""FULLY_CONNECTED's shapes, shared by its float, int8, 16x8 and dynamic-range (hybrid)
kernels (kernels/fully_connected.py, kernels/int16/affine.py, kernels/hybrid/
fully_connected.py): fully_connected.cc Prepare flattens the input into rows of the
weights' input depth; keep_num_dims keeps the input's leading dimensions instead.
"""

from __future__ import annotations

from edgelite.schema import ops as schema_ops

from ..base import OpContext, TensorInfo, num_elements

DEFAULT_WEIGHTS_FORMAT = schema_ops.FullyConnectedOptionsWeightsFormat.DEFAULT


def fc_geometry(ctx: OpContext, x: TensorInfo, w: TensorInfo):
    """(rows, depth, units, output shape) from the input and [units, depth] weights."""
    if int(ctx.option("weights_format", DEFAULT_WEIGHTS_FORMAT)) != DEFAULT_WEIGHTS_FORMAT:
        raise ctx.unsupported("only the DEFAULT weights_format is supported")
    if w.rank != 2:
        raise ctx.shape_error(f"weights shape {list(w.shape)} must be 2-D [units, input_depth]")
    units, depth = w.shape
    total = num_elements(x.shape)
    if depth < 1 or total % depth != 0:
        raise ctx.shape_error(
            f"input shape {list(x.shape)} ({total} elements) cannot be flattened into rows "
            f"of the weights' input depth {depth}"
        )
    rows = total // depth
    if ctx.option("keep_num_dims", False):
        if x.rank == 0 or x.shape[-1] != depth:
            raise ctx.shape_error(
                f"keep_num_dims needs the input's last dimension ({list(x.shape)}) to equal "
                f"the weights' input depth {depth}"
            )
        return rows, depth, units, tuple(x.shape[:-1]) + (units,)
    return rows, depth, units, (rows, units)
