"""TRANSPOSE_CONV, float32: the gradient of CONV_2D with respect to its input.

Inputs (tensorflow/lite/kernels/transpose_conv.cc): output_shape (int32 [4], constant
here: it is the output's shape), weights OHWI (O output channels, I = input channels;
constant here), input NHWC, optional bias [O]. TransposeConvOptions: padding,
stride_h, stride_w, fused activation.

reference_ops::TransposeConv (tensorflow/lite/kernels/internal/reference/
transpose_conv.h) scatters every input pixel through the filter:

    out[n, y*sh + ky - pad_t, x*sw + kx - pad_l, o] += in[n, y, x, c] * w[o, ky, kx, c]

dropping positions outside the output, then adds the bias and clamps. The padding is
that of a CONV_2D whose *input* has the output's size (ComputePaddingHeightWidth on
output_shape's H and W with stride s, dilation 1):

    conv_out = SAME: ceil(H / s)  VALID: (H - K + s) // s
    pad_t    = max(0, (conv_out - 1) * s + K - H) // 2

and, as in TFLite's Prepare, conv_out must equal the input's height (width): several
output sizes map to one input size (7 and 8 both give 4 at stride 2, SAME), which is why
the op takes output_shape at all.

Here: one matmul gives every tap's contribution, cols[n, y, x, ky, kx, o] =
in[n, y, x, :] @ w[o, ky, kx, :]; each of the KH * KW taps is added into a zeroed canvas
through a strided view, and the output is the canvas window starting at (pad_t, pad_l).
The sums run in a different order than the reference's loops (float rounding only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec, scratch
from .fused import Clamp, activation_clamp, apply_clamp
from .opdef import Affine, OpDef
from .versions import OpSignature, T
from .window import SAME, VALID, padding_option


@dataclass(frozen=True)
class TransposeConvRecord:
    rows: int  # N * H * W
    in_channels: int
    weights: np.ndarray  # (C, KH * KW * O)
    cols: np.ndarray  # scratch (N, H, W, KH, KW, O)
    canvas: np.ndarray  # scratch (N, HC, WC, O), zeroed per invoke
    taps: tuple[tuple[np.ndarray, int, int], ...]  # (canvas view, ky, kx) per tap
    window: np.ndarray  # the output's window of the canvas
    clamp: Clamp


def _pad_before(ctx: OpContext, axis: str, size: int, size_in: int, kernel: int, stride: int,
                padding: int) -> int:
    if padding == SAME:
        conv_out = (size + stride - 1) // stride
    elif padding == VALID:
        conv_out = (size - kernel + stride) // stride
    else:
        raise ctx.unsupported(f"padding type {padding} (only SAME=0 and VALID=1 exist)")
    if conv_out != size_in:
        raise ctx.shape_error(
            f"an output {axis} of {size} (kernel {kernel}, stride {stride}, "
            f"{'SAME' if padding == SAME else 'VALID'}) corresponds to an input {axis} of "
            f"{conv_out}, the input has {size_in}"
        )
    return max(0, (conv_out - 1) * stride + kernel - size) // 2


def prepare(ctx: OpContext):
    ctx.check_arity(3, 4)
    shape_t, w_t, x = ctx.input(0), ctx.input(1), ctx.input(2)
    bias = ctx.optional_input(3)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(w_t, (np.float32,), "weights")
    ctx.require_dtype(shape_t, (np.int32,), "output_shape")
    out_shape = tuple(int(d) for d in ctx.constant_input(0, "output_shape").reshape(-1))
    if x.rank != 4 or w_t.rank != 4 or len(out_shape) != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)}, weights {list(w_t.shape)} and output_shape "
            f"{list(out_shape)} must all be 4-D (NHWC / OHWI)"
        )
    n, h, w, c = x.shape
    o, kh, kw, wc = w_t.shape
    if wc != c or out_shape[0] != n or out_shape[3] != o or min(out_shape) < 1:
        raise ctx.shape_error(
            f"input {list(x.shape)}, weights {list(w_t.shape)} and output_shape "
            f"{list(out_shape)} disagree (batch, input channels or output channels)"
        )
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if bias.shape != (o,):
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must be [{o}]")
    sh, sw = int(ctx.option("stride_h", 1)), int(ctx.option("stride_w", 1))
    if sh < 1 or sw < 1:
        raise ctx.shape_error(f"strides ({sh}, {sw}) must be >= 1")
    oh, ow = out_shape[1:3]
    padding = padding_option(ctx)
    pad_t = _pad_before(ctx, "height", oh, h, kh, sh, padding)
    pad_l = _pad_before(ctx, "width", ow, w, kw, sw, padding)

    filt = ctx.constant_input(1, "weights").astype(np.float32)
    weights = np.ascontiguousarray(filt.transpose(3, 1, 2, 0).reshape(c, kh * kw * o))
    canvas_h = max((h - 1) * sh + kh, pad_t + oh)
    canvas_w = max((w - 1) * sw + kw, pad_l + ow)
    canvas = scratch(ctx, (n, canvas_h, canvas_w, o), np.float32)
    taps = tuple((canvas[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw, :], ky, kx)
                 for ky in range(kh) for kx in range(kw))
    record = TransposeConvRecord(
        rows=n * h * w, in_channels=c, weights=weights,
        cols=scratch(ctx, (n, h, w, kh, kw, o), np.float32), canvas=canvas, taps=taps,
        window=canvas[:, pad_t:pad_t + oh, pad_l:pad_l + ow, :],
        clamp=activation_clamp(ctx, np.float32))
    return (OutputSpec(out_shape, np.dtype(np.float32)),), record


def eval(rec: TransposeConvRecord, inputs, outputs) -> None:
    x, bias, out = inputs[2], (inputs[3] if len(inputs) > 3 else None), outputs[0]
    cols = rec.cols
    np.matmul(x.reshape(rec.rows, rec.in_channels), rec.weights,
              out=cols.reshape(rec.rows, -1))
    rec.canvas.fill(0.0)
    for view, ky, kx in rec.taps:
        np.add(view, cols[:, :, :, ky, kx, :], out=view)
    np.copyto(out, rec.window)
    if bias is not None:
        np.add(out, bias, out=out)
    apply_clamp(rec.clamp, out)


def version(sig: OpSignature) -> int:
    """op_version.cc, TRANSPOSE_CONV (inputs: output shape, weights, data, bias): inputs 0
    and 1 int16 and int8, output int16, and a quantized_bias_type 5 (input 0 is the int32
    output shape, so as written this never matches); a fused activation 4; a bias 3; int8
    weights 2."""
    if sig.types() == (T.INT16, T.INT8, T.INT16) and sig.option("quantized_bias_type"):
        return 5
    if sig.option("fused_activation_function"):
        return 4
    if len(sig.inputs) == 4 and sig.inputs[3].type is not None:
        return 3
    return 2 if sig.input(1).type == T.INT8 else 1


OPS = (
    # Inputs: output_shape, weights (OHWI), input, bias.
    OpDef("TRANSPOSE_CONV",
          float=Kernel(prepare, eval),
          affine=Affine(data=2, weights=1, bias=3, out_axis=0, in_axis=3),
          fused_activation=True,
          per_sample=True,
          version=version),
)
