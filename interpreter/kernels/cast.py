"""CAST between float32 / float16 / float64, signed and unsigned integers and bool.

Matches tensorflow/lite/kernels/cast.cc (copyCast): the output type is the output
tensor's (CastOptions, when present, only repeats it); every element goes through a C++
static_cast, i.e.

* float -> integer truncates toward zero (numpy's astype does the same; out-of-range
  and NaN values are undefined behaviour in C++ and give numpy's value here);
* integer -> integer wraps modulo 2^bits (two's complement), as astype;
* anything -> bool is ``x != 0``; bool -> number is 0 / 1.
"""

from __future__ import annotations

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef
from .versions import OpSignature, T

SUPPORTED = (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16,
             np.int32, np.uint32, np.int64, np.uint64, np.bool_)


def prepare(ctx: OpContext):
    ctx.check_arity(1, 1)
    x = ctx.input(0)
    ctx.require_dtype(x, SUPPORTED, "input")
    out_type = ctx.output_dtype()
    if out_type.type not in SUPPORTED:
        raise ctx.unsupported(f"casting to {out_type.name} is not supported")
    return (OutputSpec(x.shape, out_type),), None


def eval(rec, inputs, outputs) -> None:
    np.copyto(outputs[0], inputs[0], casting="unsafe")


def version(sig: OpSignature) -> int:
    """op_version.cc, CAST, by the types on either side: int2 / uint4 8; bfloat16 7; int4 to
    float32 6; float64 / float16 5; uint16 4; int8 3; uint32 2."""
    source, target = sig.input(0).type, sig.output(0).type
    if source == T.INT4 and target == T.FLOAT32:
        return 6
    for types, v in (((T.INT2, T.UINT4), 8), ((T.BFLOAT16,), 7), ((T.FLOAT64, T.FLOAT16), 5),
                     ((T.UINT16,), 4), ((T.INT8,), 3), ((T.UINT32,), 2)):
        if source in types or target in types:
            return v
    return 1


OPS = (
    OpDef("CAST", float=Kernel(prepare, eval), per_sample=True, version=version),
)
