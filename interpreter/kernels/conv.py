"""CONV_2D, float32: im2col + one BLAS matmul.

Matches tensorflow/lite/kernels/conv.cc (Prepare: output size and padding via padding.h)
and reference_ops::Conv (tensorflow/lite/kernels/internal/reference/conv.h):

    out[n, y, x, o] = bias[o] + sum_{ky, kx, c} in[n, y*sh + ky*dh - pad_t, x*sw + kx*dw - pad_l, c]
                                               * filter[o, ky, kx, c]

with out-of-range input pixels reading as 0, then the fused activation clamp.

Layouts: input NHWC, filter OHWI (out_channels, KH, KW, in_channels / groups), bias [O].
Grouped convolution (in_channels = groups * filter in_channels) is supported like
reference_ops::Conv: output channel o reads input channels of group o // (O / groups).
The bias is optional here; LiteRT's float kernel insists on one.

Three strategies, chosen once in prepare():

* pointwise: a 1x1, stride-1, unpadded conv is out[N*H*W, O] = in[N*H*W, C] @ W[C, O];
* im2col: every window of the zero-padded input is a strided view
  (N, OH, OW, KH, KW, C) of a scratch buffer; one copy lays the windows out as rows of
  the im2col matrix [N*OH*OW, KH*KW*C] and one matmul with the pre-transposed filter
  [KH*KW*C, O] writes the output;
* taps: when the im2col matrix would exceed IM2COL_MAX_BYTES, accumulate one matmul per
  kernel tap instead (in[N*OH*OW, C] under tap (ky, kx) @ W[ky, kx] -> [N*OH*OW, O]),
  which needs only input-sized scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import OpContext, OutputSpec, temporary
from .fused import Clamp, activation_clamp, apply_clamp
from ..parallel import output_slices, run_slices, worth_splitting
from .window import padded_scratch, padding_option, patches_view, tap_view, window_1d

IM2COL_MAX_BYTES = 2**28  # 256 MiB


@dataclass(frozen=True)
class ConvRecord:
    strategy: str  # "pointwise", "im2col" or "taps"
    rows: int  # N * OH * OW: rows of the 2-D output (and of the im2col matrix)
    in_channels: int
    out_channels: int
    groups: int
    weights: np.ndarray  # (groups, KH*KW*Cg, O/groups); taps: (KH*KW, C, O)
    interior: np.ndarray | None  # where the input is copied inside the padded scratch
    windows: tuple[np.ndarray, ...]  # im2col: the patches view; taps: one view per tap
    cols: np.ndarray | None  # im2col: (groups, N, OH, OW, KH, KW, Cg); taps: (N, OH, OW, C)
    work: np.ndarray | None  # im2col, groups > 1: (groups, rows, O/groups); taps: (rows, O)
    clamp: Clamp
    bias: np.ndarray | None = None  # a constant bias tiled to (OW * O,)
    width: int = 0  # OW * O: the output as (N * OH, OW * O) rows for the bias add
    threads: int = 1
    slices: tuple = ()  # several threads: index tuples of (N, OH, ...) output row slices


def float_operands(ctx: OpContext, filter_layout: str):
    """(input, filter, optional bias) of a float convolution, checked: float32, both 4-D."""
    ctx.check_arity(2, 3)
    x, f = ctx.input(0), ctx.input(1)
    bias = ctx.optional_input(2)
    ctx.require_dtype(x, (np.float32,), "input")
    ctx.require_dtype(f, (np.float32,), "filter")
    if x.rank != 4 or f.rank != 4:
        raise ctx.shape_error(
            f"input {list(x.shape)} and filter {list(f.shape)} must both be 4-D "
            f"(NHWC / {filter_layout})"
        )
    return x, f, bias


def prepare(ctx: OpContext):
    x, f, bias = float_operands(ctx, "OHWI")
    n, h, w, c = x.shape
    o, kh, kw, cg = f.shape
    if cg < 1 or c % cg != 0:
        raise ctx.shape_error(
            f"input channels ({c}) must be a multiple of the filter's input channels ({cg})"
        )
    groups = c // cg
    if o % groups != 0:
        raise ctx.shape_error(f"output channels ({o}) must be a multiple of groups ({groups})")
    if bias is not None:
        ctx.require_dtype(bias, (np.float32,), "bias")
        if bias.shape != (o,):
            raise ctx.shape_error(f"bias shape {list(bias.shape)} must be [{o}]")
    filt = ctx.constant_input(1, "filter").astype(np.float32)

    pad = padding_option(ctx)
    wh = window_1d(ctx, "height", h, kh, int(ctx.option("stride_h", 1)),
                   int(ctx.option("dilation_h_factor", 1)), pad)
    ww = window_1d(ctx, "width", w, kw, int(ctx.option("stride_w", 1)),
                   int(ctx.option("dilation_w_factor", 1)), pad)
    clamp = activation_clamp(ctx, np.float32)
    out_spec = (OutputSpec((n, wh.size_out, ww.size_out, o), np.dtype(np.float32)),)
    rows = n * wh.size_out * ww.size_out
    og = o // groups

    unpadded = wh.pad_before + wh.pad_after + ww.pad_before + ww.pad_after == 0
    # A constant bias is added as rows of OW * O values (numpy walks long rows, not O at
    # a time); a bias computed at run time is broadcast as it comes.
    tiled = None
    if bias is not None and bias.is_constant:
        tiled = np.tile(bias.data.astype(np.float32), ww.size_out)
    extra = dict(bias=tiled, width=ww.size_out * o)
    parts = worth_splitting(ctx.threads, rows * o)
    if parts > 1:
        extra.update(threads=ctx.threads, slices=tuple(output_slices(n, wh.size_out, parts)))
    if kh == kw == 1 and wh.stride == ww.stride == 1 and groups == 1 and unpadded:
        weights = np.ascontiguousarray(filt.reshape(1, o, c).transpose(0, 2, 1))
        return out_spec, ConvRecord("pointwise", rows, c, o, 1, weights, None, (), None, None,
                                    clamp, **extra)

    padded, interior = padded_scratch(ctx, n, wh, ww, c, np.float32, 0.0)
    im2col_bytes = rows * kh * kw * c * 4
    if im2col_bytes > IM2COL_MAX_BYTES and groups == 1:
        # Filter OHWI -> (KH*KW, C, O): one [C, O] matrix per tap.
        weights = np.ascontiguousarray(filt.reshape(o, kh * kw, c).transpose(1, 2, 0))
        taps = tuple(tap_view(padded, wh, ww, ky, kx) for ky in range(kh) for kx in range(kw))
        cols = temporary(ctx, (n, wh.size_out, ww.size_out, c), np.float32)
        work = temporary(ctx, (rows, o), np.float32)
        extra.update(threads=1, slices=())
        return out_spec, ConvRecord("taps", rows, c, o, 1, weights, interior, taps, cols, work,
                                    clamp, **extra)

    # Filter OHWI -> (groups, K = KH*KW*Cg, O/groups), matching the im2col column order.
    weights = np.ascontiguousarray(filt.reshape(groups, og, kh * kw * cg).transpose(0, 2, 1))
    windows = patches_view(padded, wh, ww)  # (N, OH, OW, KH, KW, C)
    # Split the channel axis into (groups, Cg) and move groups first.
    patches = windows.reshape(windows.shape[:5] + (groups, cg)).transpose(5, 0, 1, 2, 3, 4, 6)
    cols = temporary(ctx, patches.shape, np.float32)
    work = temporary(ctx, (groups, rows, og), np.float32) if groups > 1 else None
    if groups > 1:
        extra.update(threads=1, slices=())
    return out_spec, ConvRecord("im2col", rows, c, o, groups, weights, interior, (patches,),
                                cols, work, clamp, **extra)


def eval(rec: ConvRecord, inputs, outputs) -> None:
    if rec.slices:  # pointwise or one-group im2col, split by output rows over threads
        if rec.strategy == "im2col":
            np.copyto(rec.interior, inputs[0])
        run_slices(rec.threads, _eval_slice, [(rec, inputs, outputs[0], index)
                                              for index in rec.slices])
        return
    out2d = outputs[0].reshape(rec.rows, rec.out_channels)
    if rec.strategy == "pointwise":
        # The NHWC input already is the im2col matrix.
        np.matmul(inputs[0].reshape(rec.rows, rec.in_channels), rec.weights[0], out=out2d)
    elif rec.strategy == "im2col":
        np.copyto(rec.interior, inputs[0])
        np.copyto(rec.cols, rec.windows[0])
        cols2d = rec.cols.reshape(rec.groups, rec.rows, -1)
        if rec.groups == 1:
            np.matmul(cols2d[0], rec.weights[0], out=out2d)
        else:
            np.matmul(cols2d, rec.weights, out=rec.work)
            # (groups, rows, O/groups) -> (rows, groups, O/groups) == (rows, O)
            np.copyto(out2d.reshape(rec.rows, rec.groups, -1), rec.work.transpose(1, 0, 2))
    else:  # taps
        np.copyto(rec.interior, inputs[0])
        cols2d = rec.cols.reshape(rec.rows, rec.in_channels)
        out2d.fill(0.0)
        for tap, weight in zip(rec.windows, rec.weights, strict=True):
            np.copyto(rec.cols, tap)
            np.matmul(cols2d, weight, out=rec.work)
            np.add(out2d, rec.work, out=out2d)
    _finish(rec, inputs, out2d)


def _eval_slice(rec: ConvRecord, inputs, out: np.ndarray, index: tuple) -> None:
    """Output rows ``index`` (a slice of the (N, OH) axes) of a pointwise or one-group
    im2col convolution: the same computation on the matching rows."""
    out2d = out[index].reshape(-1, rec.out_channels)
    if rec.strategy == "pointwise":
        x2d = inputs[0][index].reshape(-1, rec.in_channels)
        np.matmul(x2d, rec.weights[0], out=out2d)
    else:
        cols = rec.cols[0][index]  # (N', OH', OW, KH, KW, C) of the one group
        np.copyto(cols, rec.windows[0][0][index])
        np.matmul(cols.reshape(len(out2d), -1), rec.weights[0], out=out2d)
    _finish(rec, inputs, out2d)


def _finish(rec: ConvRecord, inputs, out2d: np.ndarray) -> None:
    """Bias and fused activation on (rows, O) output rows."""
    if rec.bias is not None:
        rows = out2d.reshape(-1, rec.width)
        np.add(rows, rec.bias, out=rows)
    elif len(inputs) > 2 and inputs[2] is not None:
        np.add(out2d, inputs[2], out=out2d)
    apply_clamp(rec.clamp, out2d)
