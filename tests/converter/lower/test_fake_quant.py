"""converter/lower/fake_quant.py: FakeQuantWithMinMaxArgs / Vars / VarsPerChannel.

The reference transcribes TF's kernel (tensorflow/core/kernels/fake_quant_ops_functor.h:
Nudge and FakeQuantWithMinMaxArgsFunctor) in float32 numpy, independently of edgelite:
    quant_min = narrow_range ? 1 : 0, quant_max = 2^num_bits - 1
    scale = (max - min) / (quant_max - quant_min)
    zero_point_from_min = quant_min - min / scale
    nudged_zp = quant_min if zero_point_from_min < quant_min, quant_max if above quant_max,
                else std::round(zero_point_from_min)          (halves away from zero)
    nudged_min = (quant_min - nudged_zp) * scale, nudged_max = (quant_max - nudged_zp) * scale
    out = floor((clamp(x, nudged_min, nudged_max) - nudged_min) * (1 / scale) + 0.5)
          * scale + nudged_min
On a constant (QAT weights) the node is applied at conversion. On an activation it becomes the
tensor's range when quantizing, and in a float model TF's quantize-dequantize (QUANTIZE ->
DEQUANTIZE, as TensorFlow's converter writes it in float mode, plus the clamps TF's file
lacks for narrow_range and num_bits other than 8 and 16); per channel it passes values
through (no TFLite QUANTIZE for per-channel activations).
"""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.lower.fake_quant import fake_quantize
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.errors import GraphError

from .lowering import F32, check, floats, graph, rng, run

COVERED = {"FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars",
           "FakeQuantWithMinMaxVarsPerChannel"}

f32 = np.float32


def tf_nudge(rmin, rmax, num_bits, narrow_range):
    quant_min, quant_max = f32(1 if narrow_range else 0), f32((1 << num_bits) - 1)
    rmin, rmax = f32(rmin), f32(rmax)
    scale = f32((rmax - rmin) / (quant_max - quant_min))
    zp_from_min = f32(quant_min - rmin / scale)
    if zp_from_min < quant_min:
        zp = quant_min
    elif zp_from_min > quant_max:
        zp = quant_max
    else:
        zp = f32(np.sign(zp_from_min) * np.floor(abs(float(zp_from_min)) + 0.5))
    return f32((quant_min - zp) * scale), f32((quant_max - zp) * scale), scale


def tf_fake_quant(x, rmin, rmax, num_bits=8, narrow_range=False):
    nmin, nmax, scale = tf_nudge(rmin, rmax, num_bits, narrow_range)
    inv = f32(f32(1) / scale)
    shifted = np.minimum(np.maximum(x.astype(np.float32), nmin), nmax) - nmin
    return (np.floor(shifted * inv + f32(0.5)) * scale + nmin).astype(np.float32)


RANGES = [  # (min, max, num_bits, narrow_range)
    (-6.0, 6.0, 8, False), (-1.0, 3.0, 8, True), (0.5, 2.0, 8, False),   # 0 < min: [0, 1.5]
    (-3.0, -1.0, 8, False),                                               # max < 0: [-2, 0]
    (-0.7, 1.3, 4, False), (-2.5, 2.5, 2, True), (-1.0, 1.0, 16, False),
]


def weights_on_the_grid(rmin, rmax, num_bits, narrow_range):
    """Values at, halfway between and beyond the quantization levels: rounding edges."""
    nmin, nmax, scale = tf_nudge(rmin, rmax, num_bits, narrow_range)
    k = np.arange(-3, 12, dtype=np.float32)
    halves = nmin + k * scale * f32(0.5)
    spread = floats(rng(), 9, lo=float(nmin) - 1, hi=float(nmax) + 1)
    return np.concatenate([halves, spread, [nmax, nmax + scale / 3]]).astype(np.float32)


def fake_quant_node(g, op, x, rmin, rmax, num_bits, narrow_range):
    bits = dict(num_bits=num_bits, narrow_range=narrow_range)
    if op == "FakeQuantWithMinMaxArgs":
        g.node("fq", op, [x], min=float(rmin), max=float(rmax), **bits)
    else:
        g.const("fq/min", np.asarray(rmin, np.float32))
        g.const("fq/max", np.asarray(rmax, np.float32))
        g.node("fq", op, [x, "fq/min", "fq/max"], **bits)


@pytest.mark.parametrize("rmin, rmax, num_bits, narrow_range", RANGES, ids=str)
@pytest.mark.parametrize("op", ["FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars"])
def test_on_constant_weights(op, rmin, rmax, num_bits, narrow_range):
    """y = x + FakeQuant(w): the constant is fake-quantized at conversion."""
    w = weights_on_the_grid(rmin, rmax, num_bits, narrow_range)
    x = floats(rng(), *w.shape)
    g = graph(x=x.shape)
    g.const("w", w)
    fake_quant_node(g, op, "w", rmin, rmax, num_bits, narrow_range)
    g.node("y", "AddV2", ["x", "fq"], T=F32)
    want = x + tf_fake_quant(w, rmin, rmax, num_bits, narrow_range)
    check(g, {"x": x}, want, ["ADD"], rtol=0, atol=0)


def test_args_defaults():
    """FakeQuantWithMinMaxArgs defaults: min -6, max 6, num_bits 8, narrow_range false."""
    w = weights_on_the_grid(-6.0, 6.0, 8, False)
    x = np.zeros_like(w)
    g = graph(x=x.shape)
    g.const("w", w)
    g.node("fq", "FakeQuantWithMinMaxArgs", ["w"])
    g.node("y", "AddV2", ["x", "fq"], T=F32)
    check(g, {"x": x}, tf_fake_quant(w, -6.0, 6.0), ["ADD"], rtol=0, atol=0)


def test_per_channel_on_constant_weights():
    """VarsPerChannel: min[c] / max[c] apply to the last dimension's channel c."""
    mins, maxs = [-1.0, 0.5, -3.0, -0.2], [1.0, 2.0, -1.0, 0.9]
    w = floats(rng(), 3, 4, lo=-3.5, hi=2.5)
    g = graph(x=w.shape)
    g.const("w", w)
    fake_quant_node(g, "FakeQuantWithMinMaxVarsPerChannel", "w", mins, maxs, 8, True)
    g.node("y", "AddV2", ["x", "fq"], T=F32)
    want = np.stack([tf_fake_quant(w[:, c], mins[c], maxs[c], 8, True) for c in range(4)],
                    axis=-1)
    x = floats(rng(), *w.shape)
    check(g, {"x": x}, x + want, ["ADD"], rtol=0, atol=0)


def levels_and_spread(rmin, rmax, num_bits, narrow_range):
    """Every grid level (at most 64 of them) and random values in and beyond the range --
    no value exactly halfway between two levels (TFLite's QUANTIZE rounds those half away
    from zero, TF's kernel half up)."""
    nmin, nmax, scale = tf_nudge(rmin, rmax, num_bits, narrow_range)
    n = int(round(float((nmax - nmin) / scale)))
    levels = nmin + np.linspace(0, n, min(n + 1, 64)).round().astype(np.float32) * scale
    spread = floats(rng(), 200, lo=float(nmin) - 1, hi=float(nmax) + 1)
    return np.concatenate([levels, spread]).astype(np.float32)[None]


BOTH = ["MAXIMUM", "MINIMUM"]
CLAMPS = {  # (num_bits, narrow_range) -> the clamps written before QUANTIZE
    (8, False): [], (8, True): ["MAXIMUM"], (4, False): ["MINIMUM"], (2, True): BOTH,
    (16, False): [], (16, True): ["MAXIMUM"], (12, False): BOTH,
}


@pytest.mark.parametrize("rmin, rmax, num_bits, narrow_range",
                         [*RANGES, (-1.0, 1.0, 16, True), (-1.0, 2.0, 12, False)], ids=str)
@pytest.mark.parametrize("op", ["FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars"])
def test_on_an_activation_quantizes_and_dequantizes(op, rmin, rmax, num_bits, narrow_range):
    """x -> Neg -> FakeQuant -> Neg: the float model computes TF's FakeQuant with
    [MAXIMUM] [MINIMUM] QUANTIZE DEQUANTIZE (uint8 up to 8 bits, int16 above), in edgelite
    and LiteRT; the clamps only where the grid stops short of the integer type's range."""
    x = levels_and_spread(rmin, rmax, num_bits, narrow_range)
    g = graph(x=x.shape)
    g.node("n", "Neg", ["x"], T=F32)
    fake_quant_node(g, op, "n", rmin, rmax, num_bits, narrow_range)
    g.node("y", "Neg", ["fq"], T=F32)
    want = -tf_fake_quant(-x, rmin, rmax, num_bits, narrow_range)
    ops = ["NEG", *CLAMPS[num_bits, narrow_range], "QUANTIZE", "DEQUANTIZE", "NEG"]
    result = check(g, {"x": x}, want, ops, rtol=0, atol=2e-7 * float(np.abs(want).max()))
    (q,) = [op.outputs[0] for op in result.graph.ops if op.type == "QUANTIZE"]
    _, _, scale = tf_nudge(rmin, rmax, num_bits, narrow_range)
    assert q.dtype == (np.uint8 if num_bits <= 8 else np.int16)
    assert q.quant.scale[0] == scale


@pytest.mark.parametrize("rmin, rmax, num_bits, narrow_range", RANGES[:5], ids=str)
@pytest.mark.parametrize("op", ["FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars"])
def test_when_quantizing_an_activation_carries_the_range(op, rmin, rmax, num_bits,
                                                         narrow_range):
    """x -> Relu -> FakeQuant -> Identity converted to int8 (the input's range given): no
    QUANTIZE / DEQUANTIZE pair for the FakeQuant, and the Relu's output has TF's nudged
    range."""
    g = graph(x=(2, 5))
    g.node("r", "Relu", ["x"], T=F32)
    fake_quant_node(g, op, "r", rmin, rmax, num_bits, narrow_range)
    g.node("y", "Identity", ["fq"], T=F32)
    result = convert_detailed(g.bytes(), ConvertOptions(
        outputs=["y"], quantize=QuantizeOptions(mode=QuantMode.INT8,
                                                input_ranges={"x": (-3.0, 3.0)})))
    assert [op.type for op in result.graph.ops] == ["QUANTIZE", "RELU", "DEQUANTIZE"]
    nmin, nmax, _ = tf_nudge(rmin, rmax, num_bits, narrow_range)
    (relu,) = [op.outputs[0] for op in result.graph.ops if op.type == "RELU"]
    assert relu.range == pytest.approx((float(nmin), float(nmax)), rel=1e-6, abs=1e-7)


def test_16_bits_with_an_off_centre_zero_point_pass_values_through():
    """A 16-bit grid whose zero point is not level 32768 has no int16 QUANTIZE with zero point
    0 (LiteRT's DEQUANTIZE needs it): the float model passes values through."""
    x = floats(rng(), 2, 6)
    g = graph(x=x.shape)
    g.node("n", "Neg", ["x"], T=F32)
    fake_quant_node(g, "FakeQuantWithMinMaxVars", "n", -0.3, 5.0, 16, False)
    g.node("y", "Neg", ["fq"], T=F32)
    check(g, {"x": x}, x, ["NEG", "NEG"])


def test_per_channel_on_an_activation_passes_values_through():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("r", "Relu", ["x"], T=F32)
    fake_quant_node(g, "FakeQuantWithMinMaxVarsPerChannel", "r", [0.0] * 3, [1.0] * 3, 8,
                    False)
    g.node("y", "Neg", ["fq"], T=F32)
    check(g, {"x": x}, -np.maximum(x, 0), ["RELU", "NEG"])


@pytest.mark.parametrize("op", sorted(COVERED))
def test_min_above_max_is_refused(op):
    g = graph(x=(2, 3))
    per_channel = op.endswith("PerChannel")
    rmin, rmax = ([1.0] * 3, [-1.0] * 3) if per_channel else (1.0, -1.0)
    fake_quant_node(g, op, "x", rmin, rmax, 8, False)
    g.node("y", "Neg", ["fq"], T=F32)
    with pytest.raises(GraphError, match=rf"^node 'fq' \({op}\): min > max"):
        run(g, {"x": np.zeros((2, 3), np.float32)}, ["y"])


@pytest.mark.parametrize("op", sorted(op for op in COVERED if "Vars" in op))  # (Args: bounded)
def test_a_range_wider_than_float32_is_refused(op):
    g = graph(x=(2, 3))
    per_channel = op.endswith("PerChannel")
    rmin, rmax = ([-3e38] * 3, [3e38] * 3) if per_channel else (-3e38, 3e38)
    fake_quant_node(g, op, "x", rmin, rmax, 8, False)
    g.node("y", "Neg", ["fq"], T=F32)
    with pytest.raises(GraphError, match=rf"^node 'fq' \({op}\): max - min overflows float32"):
        run(g, {"x": np.zeros((2, 3), np.float32)}, ["y"])


def test_nan_weights_stay_nan_without_a_warning():
    # a signaling NaN (a flipped bit of a weight file) raises numpy's "invalid value"
    w = np.array([0.25, -0.5, 0.0], np.float32)
    w.view(np.uint32)[2] = 0x7FA00000
    with np.errstate(all="raise"):
        got = fake_quantize(w, -1.0, 1.0, 8, False)
    np.testing.assert_array_equal(got[:2], tf_fake_quant(w[:2], -1.0, 1.0))
    assert np.isnan(got[2])
