"""Convolutions: Conv1D / Conv2D, DepthwiseConv1D / 2D, SeparableConv1D / 2D,
Conv1DTranspose / Conv2DTranspose. 1-D layers run as their 2-D form on [N, 1, W, C]
(ExpandDims / Squeeze around it, as tf.nn.conv1d writes them); each adds its bias with
BiasAdd and its activation after, so the passes fuse them as in TF's own graph."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, channels_last, static
from .activations import activate


def _pair(value, rank: int) -> tuple:
    value = value if isinstance(value, (list, tuple)) else [value]
    value = [int(v) for v in value]
    return tuple(value * rank if len(value) == 1 else value)


def out_length(n: int, k: int, stride: int, dilation: int, padding: str) -> int:
    """Output length of a convolution / pooling window (Keras conv_output_length)."""
    if padding in ("same", "causal"):
        return -(-n // stride)
    return -(-(n - (k - 1) * dilation) // stride)


class _Spec:
    """A conv layer's geometry from its config, as 2-D (1-D layers get height 1)."""

    def __init__(self, ctx: LayerCtx, x: KTensor, rank: int) -> None:
        channels_last(ctx, x, rank)
        self.rank = rank
        self.kernel = _pair(ctx.cfg("kernel_size", 1), rank)
        self.strides = _pair(ctx.cfg("strides", 1), rank)
        self.dilation = _pair(ctx.cfg("dilation_rate", 1), rank)
        self.padding = str(ctx.cfg("padding", "valid")).lower()
        if self.padding not in ("same", "valid", "causal"):
            ctx.fail(f"padding {self.padding!r}")
        if self.padding == "causal" and rank != 1:
            ctx.fail("causal padding is for 1-D convolutions")
        if rank == 1:  # as 2-D: height 1
            self.kernel, self.strides, self.dilation = ((1,) + self.kernel, (1,) + self.strides,
                                                        (1,) + self.dilation)

    def attrs(self) -> dict:
        return {"strides": [1, *self.strides, 1], "dilations": [1, *self.dilation, 1],
                "padding": "VALID" if self.padding != "same" else "SAME",
                "data_format": "NHWC"}

    def out_shape(self, shape: tuple, channels: int) -> tuple:
        """The output shape on the NHWC input `shape` (causal padding already added)."""
        padding = "valid" if self.padding == "causal" else self.padding
        dims = [out_length(n, k, s, d, padding) if n is not None else None
                for n, k, s, d in zip(shape[1:-1], self.kernel, self.strides, self.dilation)]
        return (shape[0], *dims, channels)


def _as_2d(ctx: LayerCtx, x: KTensor, spec: _Spec) -> KTensor:
    """x as NHWC: 1-D inputs get a height axis (and causal padding on the left)."""
    if spec.rank == 2:
        return x
    static(ctx, x)
    if spec.padding == "causal":
        left = (spec.kernel[1] - 1) * spec.dilation[1]
        pads = ctx.int_const("causal_pad/paddings", [[0, 0], [left, 0], [0, 0]])
        x = KTensor(ctx.op("causal_pad", "Pad", [x.ref, pads], Tpaddings=np.dtype(np.int32)),
                    (x.shape[0], x.shape[1] + left, x.shape[2]), x.dtype)
    ref = ctx.op("conv1d/ExpandDims", "ExpandDims", [x.ref, ctx.int_const("conv1d/dim", 1)],
                 Tdim=np.dtype(np.int32))
    return KTensor(ref, (x.shape[0], 1) + x.shape[1:], x.dtype)


def _finish(ctx: LayerCtx, y: str, shape: tuple, spec: _Spec, bias, mask=None) -> KTensor:
    if spec.rank == 1:
        y = ctx.op("conv1d/Squeeze", "Squeeze", [y], squeeze_dims=[1])
        shape = (shape[0],) + shape[2:]
    if bias is not None:
        y = ctx.op("BiasAdd", "BiasAdd", [y, ctx.const("bias", bias)], data_format="NHWC")
    return activate(ctx, KTensor(y, shape, np.dtype(np.float32), mask),
                    ctx.cfg("activation", "linear"))


def _kernels(ctx: LayerCtx, x: KTensor, rank: int, names: list, in_axis: int = -2,
             groups: int = 1):
    """The layer's kernels `names` and its bias (None without use_bias); the first kernel
    must take x's channels (per group) on `in_axis`."""
    names = names + (["bias"] if ctx.cfg("use_bias", True) else [])
    ws = ctx.weights(names)
    kernel = ws[0]
    if kernel.ndim != rank + 2 or kernel.shape[in_axis] * groups != x.shape[-1]:
        ctx.fail(f"kernel {list(kernel.shape)} does not fit input {list(x.shape)}")
    n = len(names) - ctx.cfg("use_bias", True)
    return ws[:n], (ws[n] if len(ws) > n else None)


def conv(rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        spec = _Spec(ctx, x, rank)
        groups = int(ctx.cfg("groups", 1))
        if groups not in (1, x.shape[-1]):
            ctx.fail(f"grouped convolution ({groups} groups of {x.shape[-1]} channels): "
                     "edgelite writes groups 1 and groups = channels (a depthwise conv)")
        (kernel,), bias = _kernels(ctx, x, rank, ["kernel"], groups=groups)
        if groups > 1:   # one group per channel: kernel [.., 1, C * m] is depthwise [.., C, m]
            kernel = kernel.reshape(kernel.shape[:-2] + (groups, kernel.shape[-1] // groups))
            y = _depthwise(ctx, _as_2d(ctx, x, spec), spec, kernel)
            return _finish(ctx, y.ref, y.shape, spec, bias, x.mask)
        x2 = _as_2d(ctx, x, spec)
        k2 = kernel[None] if rank == 1 else kernel
        y = ctx.op("Conv2D", "Conv2D", [x2.ref, ctx.const("kernel", k2)], **spec.attrs())
        return _finish(ctx, y, spec.out_shape(x2.shape, kernel.shape[-1]), spec, bias, x.mask)
    return rule


def _depthwise(ctx: LayerCtx, x2: KTensor, spec: _Spec, kernel: np.ndarray) -> KTensor:
    k2 = kernel[None] if spec.rank == 1 else kernel
    attrs = spec.attrs()
    y = ctx.op("depthwise", "DepthwiseConv2dNative", [x2.ref, ctx.const("depthwise_kernel", k2)],
               **attrs)
    return KTensor(y, spec.out_shape(x2.shape, k2.shape[2] * k2.shape[3]), x2.dtype)


def depthwise(rank: int):
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        spec = _Spec(ctx, x, rank)
        (kernel,), bias = _kernels(ctx, x, rank, ["depthwise_kernel"])
        y = _depthwise(ctx, _as_2d(ctx, x, spec), spec, kernel)
        return _finish(ctx, y.ref, y.shape, spec, bias, x.mask)
    return rule


def separable(rank: int):
    """Depthwise (with the strides) then a 1x1 pointwise Conv2D, as tf.nn.separable_conv2d."""
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        spec = _Spec(ctx, x, rank)
        (dw, pw), bias = _kernels(ctx, x, rank, ["depthwise_kernel", "pointwise_kernel"])
        mid = _depthwise(ctx, _as_2d(ctx, x, spec), spec, dw)
        pw2 = pw[None] if rank == 1 else pw
        y = ctx.op("separable_conv2d", "Conv2D", [mid.ref, ctx.const("pointwise_kernel", pw2)],
                   strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1], padding="VALID",
                   data_format="NHWC")
        return _finish(ctx, y, mid.shape[:-1] + (pw.shape[-1],), spec, bias, x.mask)
    return rule


def batch_of(ctx: LayerCtx, x: KTensor) -> str:
    """x's batch size as an int32 [1] tensor (Shape then StridedSlice)."""
    shape = ctx.op("Shape", "Shape", [x.ref], out_type=np.dtype(np.int32))
    return ctx.op("strided_slice", "StridedSlice",
                  [shape, ctx.int_const("begin", [0]), ctx.int_const("end", [1]),
                   ctx.int_const("stride", [1])], dtype=np.dtype(np.int32),
                  Index=np.dtype(np.int32), begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0)


def _deconv_length(n, k, s, d, padding, output_padding):
    """keras conv_utils.deconv_output_length."""
    k = k + (k - 1) * (d - 1)
    if output_padding is None:
        return n * s + max(k - s, 0) if padding == "valid" else n * s
    pad = k // 2 if padding == "same" else 0
    return (n - 1) * s + k - 2 * pad + output_padding


def transpose(rank: int):
    """Conv2DBackpropInput with the output size computed as Keras does."""
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        spec = _Spec(ctx, x, rank)
        (kernel,), bias = _kernels(ctx, x, rank, ["kernel"], in_axis=-1)
        if any(d != 1 for d in spec.dilation):
            ctx.fail("dilated transposed convolution is not written by edgelite")
        out_pad = ctx.config.get("output_padding")
        out_pad = [None] * 2 if out_pad is None else [0] * (2 - rank) + list(_pair(out_pad, rank))
        x2 = _as_2d(ctx, x, spec)
        dims = static(ctx, x2, (1, 2))
        size = [_deconv_length(n, k, s, 1, spec.padding, p)
                for n, k, s, p in zip(dims, spec.kernel, spec.strides, out_pad)]
        if rank == 1:
            size[0] = 1
        k2 = kernel[None] if rank == 1 else kernel
        sizes = ctx.op("conv_transpose/output_shape", "ConcatV2",
                       [batch_of(ctx, x2), ctx.int_const("conv_transpose/dims",
                                                         [*size, kernel.shape[-2]]),
                        ctx.int_const("conv_transpose/axis", 0)],
                       dtype=np.dtype(np.int32), N=2, Tidx=np.dtype(np.int32))
        shape = (None, *size, kernel.shape[-2])
        y = ctx.op("conv_transpose", "Conv2DBackpropInput",
                   [sizes, ctx.const("kernel", k2), x2.ref], **spec.attrs())
        return _finish(ctx, y, shape, spec, bias, x.mask)
    return rule


RULES = {
    "Conv1D": conv(1), "Conv2D": conv(2),
    "DepthwiseConv1D": depthwise(1), "DepthwiseConv2D": depthwise(2),
    "SeparableConv1D": separable(1), "SeparableConv2D": separable(2),
    "Conv1DTranspose": transpose(1), "Conv2DTranspose": transpose(2),
}
