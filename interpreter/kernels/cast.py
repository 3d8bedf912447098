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


OPS = (
    OpDef("CAST", float=Kernel(prepare, eval), per_sample=True),
)
