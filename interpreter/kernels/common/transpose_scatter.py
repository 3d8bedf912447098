"""TRANSPOSE_CONV's geometry and scatter, shared by its float and dynamic-range (hybrid)
kernels (kernels/transpose_conv.py, kernels/hybrid/transpose_conv.py) and TF's custom
Convolution2DTransposeBias (kernels/custom/).

The padding is that of a CONV_2D whose *input* has the output's size
(tensorflow/lite/kernels/transpose_conv.cc Prepare: ComputePaddingHeightWidth on
output_shape's H and W with stride s, dilation 1):

    conv_out = SAME: ceil(H / s)  VALID: (H - K + s) // s
    pad_t    = max(0, (conv_out - 1) * s + K - H) // 2

and conv_out must equal the input's height (width). The scatter: one matmul gives every
tap's contribution, cols[n, y, x, ky, kx, o] = in[n, y, x, :] @ w[o, ky, kx, :]; each of
the KH * KW taps is added into a zeroed canvas through a strided view, and the output is
the canvas window starting at (pad_t, pad_l).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import OpContext, scratch
from .fused import Clamp
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
    clamp: Clamp | None  # the float kernel's fused activation


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


@dataclass(frozen=True)
class Geometry:
    """The checked shapes of a TRANSPOSE_CONV and where its output window starts."""

    out_shape: tuple[int, ...]  # N, OH, OW, O
    x_shape: tuple[int, ...]  # N, H, W, C
    w_shape: tuple[int, ...]  # O, KH, KW, C
    strides: tuple[int, int]
    pad_t: int
    pad_l: int


def geometry(ctx: OpContext) -> Geometry:
    """TFLite's Prepare checks: 4-D NHWC / OHWI operands that agree, a bias of [O], and
    an output size the input size corresponds to."""
    ctx.check_arity(3, 4)
    shape_t, w_t, x = ctx.input(0), ctx.input(1), ctx.input(2)
    bias = ctx.optional_input(3)
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
    if bias is not None and bias.shape != (o,):
        raise ctx.shape_error(f"bias shape {list(bias.shape)} must be [{o}]")
    sh, sw = int(ctx.option("stride_h", 1)), int(ctx.option("stride_w", 1))
    if sh < 1 or sw < 1:
        raise ctx.shape_error(f"strides ({sh}, {sw}) must be >= 1")
    oh, ow = out_shape[1:3]
    padding = padding_option(ctx)
    pad_t = _pad_before(ctx, "height", oh, h, kh, sh, padding)
    pad_l = _pad_before(ctx, "width", ow, w, kw, sw, padding)
    return Geometry(out_shape, tuple(x.shape), tuple(w_t.shape), (sh, sw), pad_t, pad_l)


def scatter_record(ctx: OpContext, g: Geometry, filt: np.ndarray, dtype,
                   clamp: Clamp | None) -> TransposeConvRecord:
    """The scratch and views of the scatter (module docstring), in ``dtype``, for the
    weights ``filt`` (OHWI values)."""
    n, h, w, c = g.x_shape
    o, kh, kw, _ = g.w_shape
    (sh, sw), (oh, ow) = g.strides, g.out_shape[1:3]
    weights = np.ascontiguousarray(filt.astype(dtype).transpose(3, 1, 2, 0).reshape(c, -1))
    canvas_h = max((h - 1) * sh + kh, g.pad_t + oh)
    canvas_w = max((w - 1) * sw + kw, g.pad_l + ow)
    canvas = scratch(ctx, (n, canvas_h, canvas_w, o), dtype)
    taps = tuple((canvas[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw, :], ky, kx)
                 for ky in range(kh) for kx in range(kw))
    return TransposeConvRecord(
        rows=n * h * w, in_channels=c, weights=weights,
        cols=scratch(ctx, (n, h, w, kh, kw, o), dtype), canvas=canvas, taps=taps,
        window=canvas[:, g.pad_t:g.pad_t + oh, g.pad_l:g.pad_l + ow, :], clamp=clamp)


def scatter(rec: TransposeConvRecord, x: np.ndarray) -> None:
    """rec.window = the transposed convolution of ``x`` (no bias), in rec's dtype."""
    cols = rec.cols
    np.matmul(x.reshape(rec.rows, rec.in_channels), rec.weights,
              out=cols.reshape(rec.rows, -1))
    rec.canvas.fill(0.0)
    for view, ky, kx in rec.taps:
        np.add(view, cols[:, :, :, ky, kx, :], out=view)
