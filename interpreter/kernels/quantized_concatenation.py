"""CONCATENATION of int8 / uint8 tensors whose quantization parameters may differ.

Matches reference_ops::ConcatenationWithScaling (tensorflow/lite/kernels/internal/
reference/concatenation.h), which LiteRT runs for uint8 with both kernel sets (the
XNNPACK delegate only takes concatenations that need no rescaling): an input whose
(scale, zero point) equals the output's is copied; any other is requantized with

    scale = s_in * (1 / s_out),  bias = -z_in * scale          (float32)
    q' = clamp(round_half_away(q * scale + bias) + z_out)

TFLite refuses int8 inputs whose parameters differ from the output's
(concatenation.cc Prepare); edgelite requantizes them with the same formula. A fused
activation other than NONE is refused, as in TFLite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quant_math as qm
from .base import Kernel, OpContext
from .concatenation import prepare as prepare_float
from .requantize import qparams
from .quantized_activations import make_lut


@dataclass(frozen=True)
class QConcatRecord:
    axis: int
    luts: tuple[np.ndarray | None, ...]  # per input: requantization table, None to copy


def prepare(ctx: OpContext):
    if int(ctx.option("fused_activation_function", 0)) != 0:
        raise ctx.unsupported("a fused activation on a quantized CONCATENATION")
    specs, float_record = prepare_float(ctx)
    out = qparams(ctx, ctx.outputs[0], "output")
    inverse = np.float32(1.0) / np.float32(out.scale)
    luts = []
    for i in range(len(ctx.inputs)):
        t = ctx.input(i)
        q = qparams(ctx, t, f"input {i}")
        if (q.scale, q.zero_point) == (out.scale, out.zero_point):
            luts.append(None)
            continue
        scale = np.float32(np.float32(q.scale) * inverse)
        bias = np.float32(np.float32(-q.zero_point) * scale)

        def values(v, scale=scale, bias=bias):
            r = (v.astype(np.float32) * scale + bias).astype(np.float32)
            return qm.round_half_away(r).astype(np.int64) + out.zero_point

        luts.append(make_lut(t.dtype, values))
    return specs, QConcatRecord(float_record.axis, tuple(luts))


def eval(rec: QConcatRecord, inputs, outputs) -> None:
    parts = [x if lut is None else np.take(lut, x.view(np.uint8))
             for x, lut in zip(inputs, rec.luts)]
    np.concatenate(parts, axis=rec.axis, out=outputs[0])


CONCATENATION = Kernel(prepare, eval)
