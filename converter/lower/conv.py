"""Conv2D and DepthwiseConv2dNative -> CONV_2D / DEPTHWISE_CONV_2D.

TF filters are HWIO (Conv2D) and HWCM (depthwise, M = channel multiplier); TFLite wants OHWI
and 1HW(C*M). Every conv gets a zero bias here so fuse_bias / fold_batchnorm only add to it
(TFLite's converter does the same; LiteRT and TFLM both accept it).
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from ..ir import Activation, Padding
from .context import LowerCtx, attr_ints, attr_str, fail, nhwc_pair, require_nhwc
from .spec import (DATA_FORMAT, MAX_WINDOW, REAL, Attr, In, Lowering, padding, spec,
                   vector_input, window)


def _padding(ctx: LowerCtx, node, x):
    """TF padding attr -> (TFLite padding, input). EXPLICIT padding becomes a PAD op + VALID."""
    pad = attr_str(node, "padding")
    if pad != "EXPLICIT":
        return Padding[pad], x
    p = np.asarray(attr_ints(node, "explicit_paddings", []), np.int32)
    # TF's layout: [before, after] per NHWC dimension; only H and W may be padded.
    if p.shape != (8,) or np.any(p[[0, 1, 6, 7]] != 0):
        raise fail(ShapeError, node, f"explicit_paddings={p.tolist()[:8]} must hold 8 values "
                   "[0, 0, top, bottom, left, right, 0, 0]")
    padded = ctx.graph.tensor(f"{node.name}/pad", x.dtype)
    ctx.graph.add_op("PAD", [x, ctx.const(node, "paddings", p.reshape(4, 2))], [padded],
                     name=node.name)
    return Padding.VALID, padded


def _filter(ctx: LowerCtx, node, i: int) -> np.ndarray:
    """The constant rank-4 filter (spec), with no empty dimension."""
    w = ctx.const_input(node, i, "the filter")
    if 0 in w.shape:
        raise fail(ShapeError, node, f"the filter has shape {list(w.shape)}, with an empty "
                   "dimension")
    return w


def conv2d(ctx: LowerCtx, node) -> None:
    require_nhwc(node)
    x = ctx.input(node, 0)
    w = _filter(ctx, node, 1)                                 # [H, W, I, O]
    padding_, x = _padding(ctx, node, x)
    sh, sw = nhwc_pair(node, "strides")
    dh, dw = nhwc_pair(node, "dilations")
    weights = ctx.const(node, "weights", np.transpose(w, (3, 0, 1, 2)))   # -> [O, H, W, I]
    bias = ctx.const(node, "bias", np.zeros(w.shape[3], w.dtype))
    ctx.emit("CONV_2D", node, [x, weights, bias], dict(
        padding=padding_, stride_h=sh, stride_w=sw, dilation_h_factor=dh, dilation_w_factor=dw,
        fused_activation_function=Activation.NONE))


def depthwise_conv2d(ctx: LowerCtx, node) -> None:
    require_nhwc(node)
    x = ctx.input(node, 0)
    w = _filter(ctx, node, 1)                                 # [H, W, C, M]
    padding_, x = _padding(ctx, node, x)
    sh, sw = nhwc_pair(node, "strides")
    dh, dw = nhwc_pair(node, "dilations")
    kh, kw, c, m = w.shape
    # Output channel c*M + m reads input channel c: a plain reshape of HWCM gives that order.
    weights = ctx.const(node, "weights", w.reshape(1, kh, kw, c * m))
    bias = ctx.const(node, "bias", np.zeros(c * m, w.dtype))
    ctx.emit("DEPTHWISE_CONV_2D", node, [x, weights, bias], dict(
        padding=padding_, stride_h=sh, stride_w=sw, dilation_h_factor=dh, dilation_w_factor=dw,
        depth_multiplier=m, fused_activation_function=Activation.NONE))


def conv2d_backprop_input(ctx: LowerCtx, node) -> None:
    """Conv2DBackpropInput (Conv2DTranspose) -> TRANSPOSE_CONV(output_shape, weights, input).

    TF's filter is [H, W, out_channels, in_channels]; TFLite wants [out, H, W, in].
    """
    require_nhwc(node)
    out_shape = ctx.input(node, 0)  # often computed (Shape/Pack): fold_shapes folds it
    if out_shape.is_const:
        out_shape = ctx.const(node, "output_shape", out_shape.data.astype(np.int32))
    w = _filter(ctx, node, 1)
    x = ctx.input(node, 2)
    if nhwc_pair(node, "dilations") != (1, 1):
        raise fail(UnsupportedOpError, node, "dilated transpose convolution is not supported "
                   "by TFLite")
    sh, sw = nhwc_pair(node, "strides")
    weights = ctx.const(node, "weights", np.transpose(w, (2, 0, 1, 3)))
    ctx.emit("TRANSPOSE_CONV", node, [out_shape, weights, x], dict(
        padding=Padding[attr_str(node, "padding")], stride_h=sh, stride_w=sw,
        fused_activation_function=Activation.NONE), dtype=x.dtype)


# -- specs (TF op definitions: nn_ops.cc) ------------------------------------------------------
_X = In("the input", REAL, ranks=(4,))
_W = In("the filter", REAL, const=True, ranks=(4,))
_CONV_ATTRS = (DATA_FORMAT, window("strides"), window("dilations", required=False),
               Attr("explicit_paddings", "list", lo=0, hi=MAX_WINDOW, lengths=(0, 8)))
_CONV = spec(_X, _W, attrs=(*_CONV_ATTRS, padding("SAME", "VALID", "EXPLICIT")))

RULES = {
    "Conv2D": Lowering(conv2d, _CONV),
    "DepthwiseConv2dNative": Lowering(depthwise_conv2d, _CONV),
    "Conv2DBackpropInput": Lowering(conv2d_backprop_input, spec(
        vector_input("the output shape"), _W, In("the input", REAL, ranks=(4,)),
        attrs=(*_CONV_ATTRS, padding()))),
}
