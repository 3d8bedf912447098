"""CONCATENATION along one axis, with an optional fused activation (any element type, and
int8 / uint8 inputs with their own parameters); PACK (at the end).

Matches tensorflow/lite/kernels/concatenation.cc (Prepare) and
reference_ops::Concatenation: every input has the output's type and rank, all
dimensions except ``axis`` are equal, and the output's ``axis`` dimension is their sum.
A negative axis counts from the end.

TFLite's Prepare insists on activation NONE (TF_LITE_ENSURE_EQ(params->activation,
kTfLiteActNone)); edgelite applies RELU / RELU6 / RELU_N1_TO_1 like every other op
instead of refusing the file -- but a file that uses one will not load in LiteRT.

int8 / uint8 inputs whose quantization parameters may differ: Matches reference_ops::ConcatenationWithScaling (tensorflow/lite/kernels/internal/
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
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, normalize_axis
from .common.fused import Clamp, activation_clamp, apply_clamp
from .opdef import TYPE_GENERIC, OpDef, QuantRule
from .common.requantize import make_lut, qparams
from .common.same_params import checked
from .versions import OpSignature, T, by_input_type

SUPPORTED = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64,
             np.uint32, np.bool_)


@dataclass(frozen=True)
class ConcatRecord:
    axis: int
    clamp: Clamp


def prepare(ctx: OpContext):
    if not ctx.inputs:
        raise ctx.shape_error("needs at least one input")
    ctx.check_arity(1, len(ctx.inputs))
    first = ctx.input(0)
    ctx.require_dtype(first, SUPPORTED, "first input")
    if first.rank == 0:
        raise ctx.unsupported("concatenating scalars is not supported")
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), first.rank)
    total = 0
    for i in range(len(ctx.inputs)):
        t = ctx.input(i)
        if t.dtype != first.dtype:
            raise ctx.dtype_error(
                f"input {i} {quoted(t.name)} is {t.dtype.name}, input 0 {quoted(first.name)} is "
                f"{first.dtype.name}"
            )
        same_rank = t.rank == first.rank
        if not same_rank or any(a != b for d, (a, b) in enumerate(zip(t.shape, first.shape))
                                if d != axis):
            raise ctx.shape_error(
                f"input {i} {quoted(t.name)} has shape {list(t.shape)}, which does not match "
                f"{list(first.shape)} outside axis {axis}"
            )
        total += t.shape[axis]
    shape = tuple(total if d == axis else n for d, n in enumerate(first.shape))
    clamp = None if first.dtype == np.bool_ else activation_clamp(ctx, first.dtype)
    return (OutputSpec(shape, first.dtype),), ConcatRecord(axis, clamp)


def eval(rec: ConcatRecord, inputs, outputs) -> None:
    np.concatenate(inputs, axis=rec.axis, out=outputs[0])
    apply_clamp(rec.clamp, outputs[0])


# --------------------------------------------------------------------------- int8 / uint8


@dataclass(frozen=True)
class QConcatRecord:
    axis: int
    luts: tuple[np.ndarray | None, ...]  # per input: requantization table, None to copy


def prepare_quantized(ctx: OpContext):
    if int(ctx.option("fused_activation_function", 0)) != 0:
        raise ctx.unsupported("a fused activation on a quantized CONCATENATION")
    specs, float_record = prepare(ctx)
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


def eval_quantized(rec: QConcatRecord, inputs, outputs) -> None:
    parts = [x if lut is None else np.take(lut, x.view(np.uint8))
             for x, lut in zip(inputs, rec.luts)]
    np.concatenate(parts, axis=rec.axis, out=outputs[0])


# --------------------------------------------------------------------------- PACK
#
# tensorflow/lite/kernels/pack.cc: N inputs of one type and shape stacked along a new
# dimension ``axis`` (PackOptions.axis, negative counts from the end of the *output*,
# i.e. axis + rank + 1); PackOptions.values_count must equal N.


def prepare_pack(ctx: OpContext):
    if not ctx.inputs:
        raise ctx.shape_error("needs at least one input")
    ctx.check_arity(1, len(ctx.inputs))
    first = ctx.input(0)
    ctx.require_dtype(first, SUPPORTED, "first input")
    count = int(ctx.option("values_count", 0)) or len(ctx.inputs)  # 0: left out
    if count != len(ctx.inputs):
        raise ctx.shape_error(f"values_count is {count} but the op has {len(ctx.inputs)} inputs")
    for i in range(len(ctx.inputs)):
        t = ctx.input(i)
        if t.dtype != first.dtype or t.shape != first.shape:
            raise ctx.shape_error(
                f"input {i} {quoted(t.name)} is {list(t.shape)} {t.dtype.name}; every input must "
                f"match input 0 ({list(first.shape)} {first.dtype.name})"
            )
    axis = normalize_axis(ctx, int(ctx.option("axis", 0)), first.rank + 1)
    shape = first.shape[:axis] + (len(ctx.inputs),) + first.shape[axis:]
    return (OutputSpec(shape, first.dtype),), PackRecord(axis)


@dataclass(frozen=True)
class PackRecord:
    axis: int  # the new dimension in the output


def eval_pack(rec: PackRecord, inputs, outputs) -> None:
    np.stack(inputs, axis=rec.axis, out=outputs[0])


def pack_version(sig: OpSignature) -> int:
    """op_version.cc, PACK: int8 2; int16 in and out 3; uint32 4."""
    if sig.input(0).type == T.INT8:
        return 2
    if sig.int16_in_out:
        return 3
    return 4 if sig.input(0).type == T.UINT32 else 1


OPS = (
    OpDef("CONCATENATION", int16=TYPE_GENERIC,  # int16 values are copied
          float=Kernel(prepare, eval),
          integer=Kernel(prepare_quantized, eval_quantized),
          quant=QuantRule.SHARED,
          per_sample=True,
          # op_version.cc, CONCATENATION: by the first input's type
          version=by_input_type({T.INT4: 5, T.UINT32: 4, T.INT16: 3, T.INT8: 2})),
    # PACK copies bits: every input must be quantized like the output (pack.cc).
    OpDef("PACK", int16=TYPE_GENERIC, float=checked(Kernel(prepare_pack, eval_pack), inputs=None),
          integer=TYPE_GENERIC, quant=QuantRule.SHARED, exact=True, version=pack_version),
)
