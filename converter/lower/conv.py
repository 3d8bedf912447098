"""Conv2D and DepthwiseConv2dNative -> CONV_2D / DEPTHWISE_CONV_2D.

TF filters are HWIO (Conv2D) and HWCM (depthwise, M = channel multiplier); TFLite wants OHWI
and 1HW(C*M). Every conv gets a zero bias here so fuse_bias / fold_batchnorm only add to it
(TFLite's converter does the same; LiteRT and TFLM both accept it).
"""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import UnsupportedOpError
from ..ir import Activation, Padding
from .context import LowerCtx, attr_ints, attr_str, nhwc_pair, require_nhwc


def _padding(ctx: LowerCtx, node, x):
    """TF padding attr -> (TFLite padding, input). EXPLICIT padding becomes a PAD op + VALID."""
    pad = attr_str(node, "padding")
    if pad in ("SAME", "VALID"):
        return Padding[pad], x
    if pad == "EXPLICIT":
        p = np.asarray(attr_ints(node, "explicit_paddings"), np.int32).reshape(4, 2)
        padded = ctx.graph.tensor(f"{node.name}/pad", x.dtype)
        ctx.graph.add_op("PAD", [x, ctx.const(node, "paddings", p)], [padded], name=node.name)
        return Padding.VALID, padded
    raise UnsupportedOpError(f"node {node.name!r} ({node.op}): padding {pad!r} is not supported")


def conv2d(ctx: LowerCtx, node) -> None:
    require_nhwc(node)
    x = ctx.input(node, 0)
    w = ctx.const_input(node, 1, "the filter")                 # [H, W, I, O]
    padding, x = _padding(ctx, node, x)
    sh, sw = nhwc_pair(node, "strides")
    dh, dw = nhwc_pair(node, "dilations")
    weights = ctx.const(node, "weights", np.transpose(w, (3, 0, 1, 2)))   # -> [O, H, W, I]
    bias = ctx.const(node, "bias", np.zeros(w.shape[3], w.dtype))
    ctx.emit("CONV_2D", node, [x, weights, bias], dict(
        padding=padding, stride_h=sh, stride_w=sw, dilation_h_factor=dh, dilation_w_factor=dw,
        fused_activation_function=Activation.NONE))


def depthwise_conv2d(ctx: LowerCtx, node) -> None:
    require_nhwc(node)
    x = ctx.input(node, 0)
    w = ctx.const_input(node, 1, "the filter")                 # [H, W, C, M]
    padding, x = _padding(ctx, node, x)
    sh, sw = nhwc_pair(node, "strides")
    dh, dw = nhwc_pair(node, "dilations")
    kh, kw, c, m = w.shape
    # Output channel c*M + m reads input channel c: a plain reshape of HWCM gives that order.
    weights = ctx.const(node, "weights", w.reshape(1, kh, kw, c * m))
    bias = ctx.const(node, "bias", np.zeros(c * m, w.dtype))
    ctx.emit("DEPTHWISE_CONV_2D", node, [x, weights, bias], dict(
        padding=padding, stride_h=sh, stride_w=sw, dilation_h_factor=dh, dilation_w_factor=dw,
        depth_multiplier=m, fused_activation_function=Activation.NONE))


RULES = {
    "Conv2D": conv2d,
    "DepthwiseConv2dNative": depthwise_conv2d,
}


def conv2d_backprop_input(ctx: LowerCtx, node) -> None:
    """Conv2DBackpropInput (Conv2DTranspose) -> TRANSPOSE_CONV(output_shape, weights, input).

    TF's filter is [H, W, out_channels, in_channels]; TFLite wants [out, H, W, in].
    """
    require_nhwc(node)
    out_shape = ctx.input(node, 0)  # often computed (Shape/Pack): fold_shapes folds it
    if out_shape.is_const:
        out_shape = ctx.const(node, "output_shape", out_shape.data.astype(np.int32))
    w = ctx.const_input(node, 1, "the filter")
    x = ctx.input(node, 2)
    pad = attr_str(node, "padding")
    if pad not in ("SAME", "VALID"):
        raise UnsupportedOpError(f"node {node.name!r} ({node.op}): padding {pad!r}")
    if nhwc_pair(node, "dilations") != (1, 1):
        raise UnsupportedOpError(f"node {node.name!r} ({node.op}): dilated transpose "
                                 "convolution is not supported by TFLite")
    sh, sw = nhwc_pair(node, "strides")
    weights = ctx.const(node, "weights", np.transpose(w, (2, 0, 1, 3)))
    ctx.emit("TRANSPOSE_CONV", node, [out_shape, weights, x], dict(
        padding=Padding[pad], stride_h=sh, stride_w=sw,
        fused_activation_function=Activation.NONE), dtype=x.dtype)


RULES["Conv2DBackpropInput"] = conv2d_backprop_input
