"""MediaPipe's ``Convolution2DTransposeBias`` custom op (selfie segmentation, hair
segmentation): a float32 TRANSPOSE_CONV with a bias and no output_shape input.

mediapipe/util/tflite/operations/transpose_conv_bias.cc: inputs input NHWC, weights OHWI,
bias [O]; custom_options hold a raw TfLiteTransposeConvParams C struct (not a
flexbuffer): int32 padding (TfLitePadding: 1 SAME, 2 VALID), int32 stride_width, int32
stride_height, little-endian. The output size follows from the input (Prepare):

    pad_total = SAME: max(0, K - (in - 1) % s - 1)    otherwise 0
    out       = s * (in - 1) + K - pad_total,         pad_before = pad_total // 2

That is exactly the TRANSPOSE_CONV whose output_shape is ``out`` with the same padding
type: ceil(out / s) == in and TRANSPOSE_CONV's pad_before is ((in - 1) * s + K - out) // 2
= pad_total // 2 (kernels/transpose_conv.py). So prepare() hands that op's kernel the
equivalent operands and eval() is its eval: bias added after the sums, no activation.
"""

from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np

from edgelite.errors import ModelFormatError
from .. import transpose_conv
from ..base import Kernel, OpContext, TensorInfo
from ..common.window import SAME, VALID

PARAMS = struct.Struct("<iii")  # padding, stride_width, stride_height
TFLITE_PADDING_SAME = 1  # TfLitePadding (c/builtin_op_data.h): 0 unknown, 1 same, 2 valid


def params(ctx: OpContext) -> tuple[int, int, int]:
    """(padding, stride_w, stride_h) from the op's custom options."""
    data = ctx.custom_options or b""
    if len(data) < PARAMS.size:
        raise ModelFormatError(
            f"{ctx.describe()}: its custom options hold {len(data)} bytes; MediaPipe's "
            f"TfLiteTransposeConvParams (padding, stride_width, stride_height) takes "
            f"{PARAMS.size}")
    return PARAMS.unpack_from(data)


def output_size(size: int, kernel: int, stride: int, same: bool) -> int:
    pad_total = max(0, kernel - (size - 1) % stride - 1) if same else 0
    return stride * (size - 1) + kernel - pad_total


def prepare(ctx: OpContext):
    ctx.check_arity(3, 3)
    x, w, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    padding, sw, sh = params(ctx)
    if sw < 1 or sh < 1:
        raise ctx.shape_error(f"strides ({sh}, {sw}) must be >= 1")
    if x.rank != 4 or w.rank != 4:
        raise ctx.shape_error(f"input {list(x.shape)} and weights {list(w.shape)} must be "
                              "4-D (NHWC / OHWI)")
    same = padding == TFLITE_PADDING_SAME  # MediaPipe pads only for SAME
    out_shape = (x.shape[0], output_size(x.shape[1], w.shape[1], sh, same),
                 output_size(x.shape[2], w.shape[2], sw, same), w.shape[0])
    shape_t = TensorInfo(-1, "output_shape", (4,), np.dtype(np.int32),
                         np.array(out_shape, np.int32))
    options = {"padding": SAME if same else VALID, "stride_h": sh, "stride_w": sw,
               "fused_activation_function": 0}
    return transpose_conv.prepare(replace(ctx, inputs=(shape_t, w, x, bias),
                                          options=options))


def eval(rec, inputs, outputs) -> None:
    x, _, bias = inputs
    transpose_conv.eval(rec, (None, None, x, bias), outputs)


KERNEL = Kernel(prepare, eval)
