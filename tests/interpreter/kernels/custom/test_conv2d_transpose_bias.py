"""MediaPipe's Convolution2DTransposeBias (interpreter/kernels/custom/
conv2d_transpose_bias.py). LiteRT has no kernel for it, so the oracles are LiteRT's
TRANSPOSE_CONV with the same weights, bias and the output size MediaPipe's Prepare
computes, and a numpy loop of MediaPipe's TransposeConvBias (transpose_conv_bias.cc)."""

import struct

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError, ShapeError
from tests.support import assert_close, run_litert

from ...tflite_builder import ModelBuilder

NAME = "Convolution2DTransposeBias"
SAME, VALID = 1, 2  # TfLitePadding


def out_size(size, k, s, padding):
    pad = max(0, k - (size - 1) % s - 1) if padding == SAME else 0
    return s * (size - 1) + k - pad, pad // 2


def custom_model(x_shape, w, bias, padding, sw, sh, options=None) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    wt = b.tensor("w", w.shape, data=w)
    bt = b.tensor("b", bias.shape, data=bias)
    oh, _ = out_size(x_shape[1], w.shape[1], sh, padding)
    ow, _ = out_size(x_shape[2], w.shape[2], sw, padding)
    y = b.tensor("y", (x_shape[0], oh, ow, w.shape[0]))
    i = b.op("CUSTOM", [x, wt, bt], [y], custom_code=NAME)
    data = struct.pack("<iii", padding, sw, sh) if options is None else options
    b.operators[i].customOptions = list(data)
    return b.build([x], [y])


def builtin_model(x_shape, w, bias, padding, sw, sh) -> bytes:
    """TRANSPOSE_CONV for the same output size (its padding enum: SAME 0, VALID 1)."""
    b = ModelBuilder()
    oh, _ = out_size(x_shape[1], w.shape[1], sh, padding)
    ow, _ = out_size(x_shape[2], w.shape[2], sw, padding)
    out_shape = (x_shape[0], oh, ow, w.shape[0])
    shape_t = b.const("output_shape", np.array(out_shape, np.int32))
    wt = b.tensor("w", w.shape, data=w)
    x = b.tensor("x", x_shape)
    bt = b.tensor("b", bias.shape, data=bias)
    y = b.tensor("y", out_shape)
    b.op("TRANSPOSE_CONV", [shape_t, wt, x, bt], [y], padding=0 if padding == SAME else 1,
         stride_w=sw, stride_h=sh)
    return b.build([x], [y])


def mediapipe_loop(x, w, bias, padding, sw, sh):
    """TransposeConvBias: out = bias, then every input pixel scattered through the filter."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    oh, pt = out_size(h, kh, sh, padding)
    ow, pl = out_size(wd, kw, sw, padding)
    out = np.broadcast_to(bias.astype(np.float64), (n, oh, ow, o)).copy()
    for y in range(h):
        for xx in range(wd):
            for ky in range(kh):
                for kx in range(kw):
                    oy, ox = y * sh - pt + ky, xx * sw - pl + kx
                    if 0 <= oy < oh and 0 <= ox < ow:
                        out[:, oy, ox] += x[:, y, xx].astype(np.float64) @ \
                            w[:, ky, kx, :].astype(np.float64).T
    return out


CASES = [  # (input N, H, W, C), (O, KH, KW), padding, stride w, stride h
    ((1, 4, 4, 3), (2, 2, 2), SAME, 2, 2),   # selfie segmentation's upsampling
    ((1, 5, 3, 2), (3, 3, 3), SAME, 2, 2),
    ((2, 3, 4, 4), (5, 4, 3), SAME, 3, 2),
    ((1, 4, 5, 2), (2, 3, 2), VALID, 2, 1),
    ((1, 3, 3, 1), (1, 1, 1), VALID, 2, 3),
    ((1, 6, 2, 3), (4, 5, 5), SAME, 1, 1),
]


@pytest.mark.parametrize("x_shape,w_shape,padding,sw,sh", CASES)
@pytest.mark.parametrize("seed", range(2))
def test_matches_transpose_conv_and_mediapipe(seed, x_shape, w_shape, padding, sw, sh):
    rng = np.random.default_rng(seed)
    o, kh, kw = w_shape
    w = rng.normal(0, 1, (o, kh, kw, x_shape[3])).astype(np.float32)
    bias = rng.normal(0, 1, (o,)).astype(np.float32)
    x = rng.normal(0, 1, x_shape).astype(np.float32)
    interp = Interpreter(model_content=custom_model(x_shape, w, bias, padding, sw, sh))
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    got = interp.get_tensor(interp.get_output_details()[0]["index"])
    (ref,) = run_litert(builtin_model(x_shape, w, bias, padding, sw, sh), [x])
    assert_close(got, ref)
    np.testing.assert_allclose(got, mediapipe_loop(x, w, bias, padding, sw, sh),
                               rtol=1e-5, atol=1e-5)


def test_short_options_name_the_op():
    w = np.ones((1, 2, 2, 1), np.float32)
    data = custom_model((1, 2, 2, 1), w, np.zeros(1, np.float32), SAME, 2, 2,
                        options=b"\x01\x00")
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CUSTOM "
                       r"'Convolution2DTransposeBias'.*hold 2 bytes.*takes 12"):
        Interpreter(model_content=data).allocate_tensors()


def test_zero_stride_is_refused():
    w = np.ones((1, 2, 2, 1), np.float32)
    data = custom_model((1, 2, 2, 1), w, np.zeros(1, np.float32), SAME, 1, 1,
                        options=struct.pack("<iii", SAME, 0, 2))
    with pytest.raises(ShapeError, match=r"strides \(2, 0\) must be >= 1"):
        Interpreter(model_content=data).allocate_tensors()
