"""Fold a zero PAD into the following CONV_2D / DEPTHWISE_CONV_2D when it equals SAME padding.

Keras' ZeroPadding2D + VALID conv (MobileNet's strided convs, "correct_pad") is written by
TF as PAD -> conv. TFLite's SAME padding for input size n, kernel k, stride s, dilation d:
    out = ceil(n / s);  total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    before = total // 2;  after = total - before
If the PAD adds exactly (before, after) zeros on H and W and nothing on N and C, the pair is
the conv with SAME padding. Pools are left alone: SAME max/avg pooling ignores the padded
cells, a zero PAD does not.
"""

from __future__ import annotations

import numpy as np

from ..shape_inference import infer_shapes
from ..ir import Graph, Padding
from .patterns import sole_producer


def same_padding(n: int, k: int, s: int, d: int) -> tuple[int, int]:
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _candidates(graph: Graph):
    for conv in graph.ops_of("CONV_2D", "DEPTHWISE_CONV_2D"):
        if conv.options.get("padding") == Padding.VALID:
            pad = sole_producer(graph, conv.inputs[0], {"PAD"})
            if pad is not None and pad.inputs[1].is_const:
                yield pad, conv


def run(graph: Graph) -> int:
    pairs = list(_candidates(graph))
    if not pairs:
        return 0
    if any(pad.inputs[0].shape is None for pad, _ in pairs):
        infer_shapes(graph)
    n = 0
    for pad, conv in pairs:
        x, p = pad.inputs[0], np.asarray(pad.inputs[1].data).reshape(-1, 2)
        if len(x.shape) != 4 or p.shape[0] != 4 or p[0].any() or p[3].any():
            continue
        _, kh, kw, _ = conv.inputs[1].data.shape
        o = conv.options
        if (tuple(p[1]) == same_padding(x.shape[1], kh, o["stride_h"], o["dilation_h_factor"])
                and tuple(p[2]) == same_padding(x.shape[2], kw, o["stride_w"],
                                                o["dilation_w_factor"])):
            o["padding"] = Padding.SAME
            conv.inputs[0] = x
            graph.remove_op(pad)
            n += 1
    return n
