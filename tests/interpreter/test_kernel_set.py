"""Which rounding LiteRT 2.3.0 applies, per op and kernel set: the evidence behind the
table in interpreter/quant_math.py.

Every model here puts many results exactly on (or next to) rounding ties: scales are
powers of two and values small. For each (op, kernel set):

* edgelite with rounding="double" (the default) must equal LiteRT;
* where the kernel uses MultiplyByQuantizedMultiplier ("double" below), edgelite with
  rounding="single" must *differ* from LiteRT on the same inputs -- so the inputs do tell
  the two roundings apart, and LiteRT's build is the double-rounding one;
* where it does not ("float", "xnnpack", "lut", "exact"), the option changes nothing.

A second test records where LiteRT's two kernel sets disagree with each other; the last
part, kernels="micro" against TensorFlow Lite Micro (the tflite-micro runtime), where TFLM's
kernels differ from LiteRT's reference ones.
"""

import numpy as np
import pytest

from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_micro_exact, full_range, random_qparams, run_edgelite,
                          run_litert, run_micro)

I8, U8 = np.int8, np.uint8


def _small(rng, shape, dtype, zp, spread=6):
    return (rng.integers(-spread, spread + 1, size=shape) + zp).astype(dtype)


def conv(rng, op="CONV_2D", dtype=I8, axis=None):
    zp = 0 if dtype == I8 else 128
    o = 8
    w_shape = (o, 3, 3, 4) if op == "CONV_2D" else (1, 3, 3, 4)
    o = w_shape[0] if op == "CONV_2D" else 4
    axis = (0 if op == "CONV_2D" else 3) if axis is None else axis
    m = QuantModel()
    x = m.input("x", (2, 6, 6, 4), dtype, 1.0, zp)
    w = m.const("w", _small(rng, w_shape, dtype, zp, 2), dtype, [1.0], [zp], axis=axis)
    b = m.const("b", rng.integers(-20, 20, o), np.int32, [1.0], [0])
    y = m.output("y", (2, 6, 6, o), dtype, 4.0, zp)  # M = 1 * 1 / 4
    opts = dict(padding="SAME", stride_h=1, stride_w=1)
    if op != "CONV_2D":
        opts["depth_multiplier"] = 1
    m.op(op, [x, w, b], [y], version=3 if dtype == I8 else 1, **opts)
    return m.build(), [_small(rng, (2, 6, 6, 4), dtype, zp, 4)]


def fully_connected(rng, dtype=I8):
    zp = 0 if dtype == I8 else 128
    m = QuantModel()
    x = m.input("x", (64, 8), dtype, 1.0, zp)
    w = m.const("w", _small(rng, (6, 8), dtype, zp, 2), dtype, [1.0], [zp])
    y = m.output("y", (64, 6), dtype, 4.0, zp)
    m.op("FULLY_CONNECTED", [x, w], [y], version=4 if dtype == I8 else 1)
    return m.build(), [_small(rng, (64, 8), dtype, zp, 5)]


def binary(rng, op, dtype=I8):
    zp = 0 if dtype == I8 else 128
    m = QuantModel()
    a = m.input("a", (16, 16), dtype, 1.0, zp)
    b = m.input("b", (16, 16), dtype, 1.0, zp)
    y = m.output("y", (16, 16), dtype, 8.0 if op != "MUL" else 4.0, zp)
    m.op(op, [a, b], [y], version=2)
    return m.build(), [_small(rng, (16, 16), dtype, zp, 40), _small(rng, (16, 16), dtype, zp, 40)]


def mean(rng, dtype=I8):
    zp = 0 if dtype == I8 else 128
    m = QuantModel()
    x = m.input("x", (64, 2, 2, 4), dtype, 1.0, zp)
    ax = m.const("axis", np.array([1, 2], np.int32), np.int32)
    y = m.output("y", (64, 1, 1, 4), dtype, 1.0, zp)  # mean of 4: quarters
    m.op("MEAN", [x, ax], [y], version=2, keep_dims=True)
    return m.build(), [_small(rng, (64, 2, 2, 4), dtype, zp, 20)]


def leaky_relu(rng, dtype=I8):
    zp = 0 if dtype == I8 else 128
    m = QuantModel()
    info = np.iinfo(dtype)
    x = m.input("x", (256,), dtype, 1.0, zp)
    y = m.output("y", (256,), dtype, 4.0, zp)
    m.op("LEAKY_RELU", [x], [y], alpha=0.5)
    return m.build(), [np.arange(info.min, info.max + 1).astype(dtype)]


def relu_n1_to_1(rng, dtype=I8):
    m = QuantModel()
    info = np.iinfo(dtype)
    zp = 0 if dtype == I8 else 128
    x = m.input("x", (256,), dtype, 0.25, zp)
    y = m.output("y", (256,), dtype, 1.0, zp)
    m.op("RELU_N1_TO_1", [x], [y])
    return m.build(), [np.arange(info.min, info.max + 1).astype(dtype)]


def requantize(rng, din=I8, dout=I8):
    m = QuantModel()
    info = np.iinfo(din)
    x = m.input("x", (1024,), din, 1.0, 0 if din == I8 else 128)
    y = m.output("y", (1024,), dout, 4.0, 0 if dout == I8 else 128)
    m.op("QUANTIZE", [x], [y], version=2)
    return m.build(), [np.tile(np.arange(info.min, info.max + 1), 4).astype(din)]


def quantize_float(rng, dtype=I8):
    m = QuantModel()
    x = m.input("x", (400,), np.float32)
    y = m.output("y", (400,), dtype, 0.25, 0 if dtype == I8 else 128)
    m.op("QUANTIZE", [x], [y], version=2)
    return m.build(), [(np.arange(-200, 200) * 0.125).astype(np.float32)]  # every other: a tie


def softmax(rng, dtype=I8):
    # Rows found by search where the two kernel sets disagree.
    if dtype == I8:
        rows, scale, zp_out = [[5, 23, -23, -41], [48, 78, -31, 90]], 0.1, -128
    else:
        rows, scale, zp_out = [[198, 224, 222, 178]], 0.125, 0
    m = QuantModel()
    x = m.input("x", (len(rows), 4), dtype, scale, 0 if dtype == I8 else 128)
    y = m.output("y", (len(rows), 4), dtype, 1 / 256, zp_out)
    m.op("SOFTMAX", [x], [y], version=2, beta=1.0)
    return m.build(), [np.array(rows, dtype)]


def resize(rng, dtype=I8):
    m = QuantModel()
    x = m.input("x", (1, 4, 4, 8), dtype, 0.1, 0)
    sz = m.const("size", np.array([7, 7], np.int32), np.int32)
    y = m.output("y", (1, 7, 7, 8), dtype, 0.1, 0)
    m.op("RESIZE_BILINEAR", [x, sz], [y], version=2)
    return m.build(), [full_range(rng, (1, 4, 4, 8), dtype)]


def clamp_bounds(rng, op="MAX_POOL_2D"):
    # RELU_N1_TO_1 on scale 2/3, zero point 1: the bounds fall on ties. TFLite rounds
    # -1.5 + 1 and 1.5 + 1 half away (-1, 3); XNNPACK rounds -0.5 and 2.5 to even (0, 2).
    m = QuantModel()
    x = m.input("x", (1, 4, 4, 1), I8, 2 / 3, 1)
    y = m.output("y", (1, 2, 2, 1), I8, 2 / 3, 1)
    m.op(op, [x], [y], version=2, padding="VALID", stride_h=2, stride_w=2, filter_height=2,
         filter_width=2, fused_activation_function="RELU_N1_TO_1")
    return m.build(), [np.arange(-8, 8).astype(I8).reshape(1, 4, 4, 1)]


# (name, builder, {kernels: arithmetic}). "double": MultiplyByQuantizedMultiplier with
# double rounding; "float": float arithmetic; "xnnpack": XNNPACK's own scheme; "lut":
# float table; "exact": no rounding at all.
CASES = [
    ("CONV_2D int8", conv, {"reference": "double", "default": "xnnpack"}),
    ("CONV_2D uint8", lambda r: conv(r, dtype=U8), {"reference": "double", "default": "xnnpack"}),
    ("DEPTHWISE int8", lambda r: conv(r, "DEPTHWISE_CONV_2D"),
     {"reference": "double", "default": "xnnpack"}),
    ("DEPTHWISE uint8 (axis 3)", lambda r: conv(r, "DEPTHWISE_CONV_2D", U8, axis=3),
     {"reference": "double", "default": "double"}),
    ("FULLY_CONNECTED int8", fully_connected, {"reference": "float", "default": "xnnpack"}),
    ("FULLY_CONNECTED uint8", lambda r: fully_connected(r, U8),
     {"reference": "float", "default": "xnnpack"}),
    ("ADD int8", lambda r: binary(r, "ADD"), {"reference": "double", "default": "xnnpack"}),
    ("SUB uint8", lambda r: binary(r, "SUB", U8), {"reference": "double", "default": "xnnpack"}),
    ("MUL int8", lambda r: binary(r, "MUL"), {"reference": "double", "default": "xnnpack"}),
    ("MEAN int8", mean, {"reference": "double", "default": "xnnpack"}),
    ("MEAN uint8", lambda r: mean(r, U8), {"reference": "double", "default": "xnnpack"}),
    ("LEAKY_RELU int8", leaky_relu, {"reference": "double", "default": "xnnpack"}),
    ("RELU_N1_TO_1 int8", relu_n1_to_1, {"reference": "double", "default": "double"}),
    ("QUANTIZE int8->int8", requantize, {"reference": "double", "default": "xnnpack"}),
    ("QUANTIZE int8->uint8", lambda r: requantize(r, I8, U8),
     {"reference": "double", "default": "double"}),
    ("QUANTIZE float->int8", quantize_float, {"reference": "float", "default": "xnnpack"}),
    ("SOFTMAX int8", softmax, {"reference": "exact", "default": "lut"}),
    ("SOFTMAX uint8", lambda r: softmax(r, U8), {"reference": "exact", "default": "lut"}),
    ("RESIZE_BILINEAR int8", resize, {"reference": "exact", "default": "xnnpack"}),
    ("RESIZE_BILINEAR uint8", lambda r: resize(r, U8),
     {"reference": "float", "default": "xnnpack"}),
    ("MAX_POOL_2D clamp", clamp_bounds, {"reference": "exact", "default": "xnnpack"}),
]


@pytest.mark.parametrize("kernels", ["reference", "default"])
@pytest.mark.parametrize("name,builder,modes", CASES, ids=[c[0] for c in CASES])
def test_rounding_per_op(rng, name, builder, modes, kernels):
    model, feeds = builder(rng)
    expected = run_litert(model, feeds, kernels)[0]
    double = run_edgelite(model, feeds, kernels, rounding="double")[0]
    single = run_edgelite(model, feeds, kernels, rounding="single")[0]
    np.testing.assert_array_equal(double, expected)
    if modes[kernels] == "double":
        assert not np.array_equal(single, expected), "inputs do not discriminate roundings"
    else:
        np.testing.assert_array_equal(single, expected)


# Ops whose two LiteRT kernel sets give different results on the models above.
DIFFER = {"CONV_2D int8", "CONV_2D uint8", "DEPTHWISE int8", "FULLY_CONNECTED int8",
          "FULLY_CONNECTED uint8", "ADD int8", "SUB uint8", "MUL int8", "MEAN int8",
          "MEAN uint8", "LEAKY_RELU int8", "QUANTIZE int8->int8", "QUANTIZE int8->uint8",
          "QUANTIZE float->int8", "SOFTMAX int8", "SOFTMAX uint8", "RESIZE_BILINEAR int8",
          "RESIZE_BILINEAR uint8", "MAX_POOL_2D clamp"}


@pytest.mark.parametrize("name,builder,modes", CASES, ids=[c[0] for c in CASES])
def test_litert_kernel_sets_differ(rng, name, builder, modes):
    model, feeds = builder(rng)
    ref = run_litert(model, feeds, "reference")[0]
    default = run_litert(model, feeds, "default")[0]
    assert (not np.array_equal(ref, default)) == (name in DIFFER)


# --------------------------------------------------------------------------- kernels="micro"
# kernels="micro": the ops where TensorFlow Lite Micro's reference kernels differ from
# LiteRT's, on random single-op models, bit-exact with TFLM (the tflite-micro runtime).
#
# Each case also shows the difference is real: over its seeds, kernels="reference" (LiteRT's
# arithmetic) gives other results than TFLM somewhere (``differs_from_reference``), except
# where noted.
#
# * FULLY_CONNECTED int8: MultiplyByQuantizedMultiplier (LiteRT: double rescale);
# * FULLY_CONNECTED 16x8: MultiplyByQuantizedMultiplier, int64 overload;
# * RELU6: clamped in the input's quantization, not rescaled;
# * SUM int8 / int16: the data read as its own type (LiteRT's reference reads uint8);
# * SOFTMAX 16x8: tables in float32;
# * MUL int8 / 16x8: the multiplier in double.

I16 = np.int16
MICRO_SEEDS = range(6)
DIFF_SEEDS = range(40)  # a softmax table entry 1 LSB apart shows on few inputs


def _scale16(rng) -> float:
    return float(np.float32(rng.uniform(1e-4, 1e-3)))


def micro_fully_connected(rng, dtype=I8, per_channel=False, units=32, depth=48, rows=16):
    m = QuantModel()
    if dtype == I8:
        x = m.input("x", (rows, depth), I8, *random_qparams(rng, I8, 0.01, 0.1))
        y = m.output("y", (rows, units), I8, *random_qparams(rng, I8, 0.05, 0.5))
        bias_dtype, feed = np.int32, full_range(rng, (rows, depth), I8)
    else:
        x = m.input("x", (rows, depth), I16, _scale16(rng), 0)
        y = m.output("y", (rows, units), I16, _scale16(rng) * 8, 0)
        bias_dtype, feed = np.int64, full_range(rng, (rows, depth), I16)
    w = rng.integers(-127, 128, (units, depth)).astype(I8)
    scales = (rng.uniform(0.002, 0.02, units) if per_channel else
              rng.uniform(0.002, 0.02, 1)).astype(np.float32)
    wt = m.b.tensor("w", w.shape, I8, data=w, scale=scales,
                    zero_point=np.zeros(scales.size, np.int64))
    b = m.const("b", rng.integers(-3000, 3000, units), bias_dtype)
    m.op("FULLY_CONNECTED", [x, wt, b], [y], version=4 if dtype == I8 else 7)
    return m.build(), [feed]


def micro_relu6(rng):
    m = QuantModel()
    x = m.input("x", (1, 8, 8, 4), I8, *random_qparams(rng, I8, 0.01, 0.1))
    y = m.output("y", (1, 8, 8, 4), I8, *random_qparams(rng, I8, 0.01, 0.1))
    m.op("RELU6", [x], [y], version=2)
    return m.build(), [full_range(rng, (1, 8, 8, 4), I8)]


def micro_sum(rng, dtype=I8):
    m = QuantModel()
    shape = (1, 4, 5, 8)
    qp = (lambda: random_qparams(rng, I8, 0.01, 0.2)) if dtype == I8 else \
        (lambda: (_scale16(rng), 0))
    x = m.input("x", shape, dtype, *qp())
    s_out, z_out = qp()
    axes = m.const("axes", [1, 2], np.int32)
    y = m.output("y", (1, 1, 1, 8), dtype, s_out * 8, z_out)
    m.op("SUM", [x, axes], [y], keep_dims=True)
    return m.build(), [full_range(rng, shape, dtype)]


def micro_softmax16(rng):
    m = QuantModel()
    shape = (4, 40)
    x = m.input("x", shape, I16, _scale16(rng), 0)
    y = m.output("y", shape, I16, 1 / 32768, 0)
    m.op("SOFTMAX", [x], [y], version=3, beta=1.0)
    return m.build(), [full_range(rng, shape, I16)]


def micro_mul(rng, dtype=I8):
    m = QuantModel()
    shape = (1, 8, 8, 8)
    qp = (lambda: random_qparams(rng, I8, 0.01, 0.2)) if dtype == I8 else \
        (lambda: (_scale16(rng), 0))
    a = m.input("a", shape, dtype, *qp())
    b = m.input("b", shape, dtype, *qp())
    y = m.output("y", shape, dtype, *qp())
    m.op("MUL", [a, b], [y], version=2 if dtype == I8 else 4)
    return m.build(), [full_range(rng, shape, dtype), full_range(rng, shape, dtype)]


MICRO_CASES = {
    "fc_int8_per_tensor": (micro_fully_connected, {}),
    "fc_int8_per_channel": (micro_fully_connected, dict(per_channel=True)),
    "fc_16x8": (micro_fully_connected, dict(dtype=I16)),
    "fc_16x8_per_channel": (micro_fully_connected, dict(dtype=I16, per_channel=True)),
    "relu6": (micro_relu6, {}),
    "sum_int8": (micro_sum, {}),
    "sum_int16": (micro_sum, dict(dtype=I16)),
    "softmax_16x8": (micro_softmax16, {}),
    "mul_int8": (micro_mul, {}),
    "mul_16x8": (micro_mul, dict(dtype=I16)),
}


@pytest.mark.parametrize("seed", MICRO_SEEDS)
@pytest.mark.parametrize("case", MICRO_CASES)
def test_micro_bit_exact_with_tflm(case, seed):
    make, options = MICRO_CASES[case]
    model, feeds = make(np.random.default_rng(seed), **options)
    assert_micro_exact(model, feeds)


def _differs_from_reference(make, options) -> bool:
    for seed in DIFF_SEEDS:
        model, feeds = make(np.random.default_rng(seed), **options)
        try:
            ours = run_edgelite(model, feeds, "reference")
        except Exception:  # LiteRT's reference has no such kernel (int16 SUM)
            return True
        if any(not np.array_equal(a, b) for a, b in zip(ours, run_micro(model, feeds))):
            return True
    return False


@pytest.mark.parametrize("case", [c for c in MICRO_CASES if c not in ("mul_int8", "mul_16x8")])
def test_tflm_differs_from_litert_reference(case):
    """The case exercises a real difference (MUL's double multiplier differs from the
    float32 one only on rare scales: TF's 16x8 EfficientNet-like file,
    tests/models/test_micro_models.py, is its evidence)."""
    assert _differs_from_reference(*MICRO_CASES[case])


def test_micro_kernel_set_is_reference_plus_its_differences():
    from edgelite.interpreter.kernel_set import KernelSet, QuantConfig
    micro = QuantConfig.make("micro")
    assert micro.kernels is KernelSet.MICRO and micro.micro and micro.reference
    assert not QuantConfig.make("reference").micro and not QuantConfig.make("default").micro
    with pytest.raises(ValueError, match="'micro'"):
        QuantConfig.make("tflm")
