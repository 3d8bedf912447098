"""Ops that move quantized values and need their operands' parameters equal.

TFLite's kernels for PACK / UNPACK (pack.cc, unpack.cc), MIRROR_PAD (mirror_pad.cc),
SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND, PADV2's constant value (pad.cc) and FILL's value
(fill.cc) copy int8 / uint8 / int16 bits unchanged and refuse, in Prepare, a model whose
tensors disagree on scale or zero point (TF_LITE_ENSURE_EQ); several also need int16
zero points of 0. ``checked(kernel, ...)`` is ``kernel`` with that check first; the
copying itself is the (type-generic) kernel's.
"""

from __future__ import annotations

import numpy as np

from edgelite.names import quoted
from ..base import Kernel, OpContext, TensorInfo

_MOVED = (np.int8, np.uint8, np.int16)


def _params(t: TensorInfo) -> tuple[float, int] | None:
    q = t.quantization
    if t.dtype.type not in _MOVED or q is None or len(q.scale) == 0:
        return None
    zp = int(q.zero_point[0]) if len(q.zero_point) else 0
    return float(np.float32(q.scale[0])), zp


def require_equal_params(ctx: OpContext, a: TensorInfo, b: TensorInfo,
                         int16_zero: bool = False) -> None:
    """``a`` and ``b`` quantized alike (when either is a quantized 8/16-bit tensor)."""
    pa, pb = _params(a), _params(b)
    if pa is None and pb is None:
        return
    if pa != pb:
        raise ctx.shape_error(
            f"{quoted(a.name)} and {quoted(b.name)} must have equal quantization parameters "
            f"(values are copied unchanged), got scale / zero point {pa} and {pb}")
    if int16_zero and a.dtype == np.int16 and pa[1] != 0:
        raise ctx.shape_error(f"int16 tensor {quoted(a.name)} needs zero point 0, got {pa[1]}")


def checked(kernel: Kernel, inputs: tuple[int, ...] | None = (0,),
            int16_zero: bool = False) -> Kernel:
    """``kernel``, refusing operands whose parameters differ from output 0's (every
    output's with several): ``inputs`` lists the operands compared (None: all)."""

    def prepare(ctx: OpContext):
        indices = range(len(ctx.inputs)) if inputs is None else inputs
        for out in ctx.outputs:
            for i in indices:
                if i < len(ctx.inputs) and ctx.inputs[i] is not None:
                    require_equal_params(ctx, ctx.inputs[i], out, int16_zero)
        return kernel.prepare(ctx)

    return Kernel(prepare, kernel.eval)
