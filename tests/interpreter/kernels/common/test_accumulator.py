"""The int32 accumulators of int8 / uint8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
(kernels/accumulator.py): bias + sum wraps at int32 like LiteRT's kernels, and long
reductions run as float32-exact chunks -- bit-exact with both LiteRT kernel sets, with
the chosen path asserted from the prepared record."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter import quant_math as qm
from edgelite.interpreter.kernels.common.accumulator import (FLOAT32_EXACT, GemmPath,
                                                             float32_chunks, plan_accumulator,
                                                             term_bounds, wrap_int32_float)

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range
from ..test_conv import quant_conv_model

INT32 = 2**31


# --------------------------------------------------------------------------- builders


def layer_model(op, dtype, x_shape, weights, bias, *, s_x=0.02, zp_x=0, w_scales=(0.01,),
                w_zp=0, s_out=1.0, zp_out=0, padding="SAME", axis=None):
    """One CONV_2D (weights OHWI), DEPTHWISE_CONV_2D (1HWO) or FULLY_CONNECTED (OI)."""
    m = QuantModel()
    w_scales = np.float32(w_scales)
    x = m.input("x", x_shape, dtype, s_x, zp_x)
    if axis is None:
        axis = 3 if op == "DEPTHWISE_CONV_2D" else 0
    w = m.const("w", weights, dtype, w_scales, np.full(len(w_scales), w_zp, np.int64), axis)
    units = weights.shape[3] if op == "DEPTHWISE_CONV_2D" else weights.shape[0]
    inputs = [x, w]
    if bias is not None:
        inputs.append(m.const("b", bias, np.int32, np.float32(s_x) * w_scales,
                              np.zeros(len(w_scales), np.int64)))
    version = 3 if dtype == np.int8 else 1
    if op == "FULLY_CONNECTED":
        y = m.output("y", (int(np.prod(x_shape[:-1])), units), dtype, s_out, zp_out)
        m.op(op, inputs, [y], version=4 if dtype == np.int8 else 1,
             fused_activation_function="NONE")
        return m.build()
    n, h, wd, _ = x_shape
    kh, kw = weights.shape[1:3]
    oh, ow = (h, wd) if padding == "SAME" else (h - kh + 1, wd - kw + 1)
    y = m.output("y", (n, oh, ow, units), dtype, s_out, zp_out)
    extra = {"depth_multiplier": units // x_shape[3]} if op == "DEPTHWISE_CONV_2D" else {}
    m.op(op, inputs, [y], version=version, padding=padding, stride_h=1, stride_w=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE", **extra)
    return m.build()


def record_of(model: bytes, kernels="default", threads=None):
    """The numpy kernel's prepared record (the accumulator plan is its concern; the
    native GEMM sums in wrapping int32, and assert_bit_exact checks it against LiteRT)."""
    interp = Interpreter(model_content=model, kernels=kernels, num_threads=threads,
                         native=False)
    interp.allocate_tensors()
    (_, record, _, _), = interp._steps
    return getattr(record, "record", record), interp


def random_weights(rng, dtype, shape):
    if dtype == np.int8:
        return rng.integers(-127, 128, size=shape).astype(np.int8)
    return full_range(rng, shape, np.uint8)


def near_limits(rng, size, margin):
    """int32 biases within ``margin`` of +-2^31, half of each sign."""
    mags = INT32 - 1 - rng.integers(0, margin, size=size)
    return (mags * np.where(np.arange(size) % 2 == 0, 1, -1)).astype(np.int64)


# --------------------------------------------------------------------------- wrapping

# (op, weights shape, x shape): reductions of 3x3x8 taps, 3x3 depthwise taps, 72 inputs.
WRAP_CASES = [
    ("CONV_2D", (16, 3, 3, 8), (1, 6, 6, 8)),
    ("DEPTHWISE_CONV_2D", (1, 3, 3, 16), (1, 6, 6, 16)),
    ("FULLY_CONNECTED", (16, 72), (8, 72)),
]


def _exact_accumulators(op, dtype, x, weights, bias, zp_x, w_zp):
    """bias + sum (w - zp_w) (x - zp_x) in int64, per output, no wrap (the layers of
    WRAP_CASES: SAME padding, stride 1)."""
    xc = x.astype(np.int64) - zp_x
    wc = weights.astype(np.int64) - w_zp
    if op == "FULLY_CONNECTED":
        return xc @ wc.T + bias
    kh, kw = wc.shape[1:3]
    padded = np.pad(xc, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    n, h, w, _ = xc.shape
    acc = np.zeros((n, h, w, len(bias)), np.int64)
    for dy in range(kh):
        for dx in range(kw):
            window = padded[:, dy:dy + h, dx:dx + w, :]
            if op == "CONV_2D":
                acc += window @ wc[:, dy, dx, :].T
            else:
                acc += window * wc[0, dy, dx, :]
    return acc + bias


@pytest.mark.parametrize("op,w_shape,x_shape", WRAP_CASES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_extreme_bias_wraps_like_litert(rng, op, w_shape, x_shape, dtype):
    # Biases within 2^16 of +-2^31 and sums of 72 random products (~2^16): many
    # accumulators leave int32 and LiteRT wraps them (a large positive sum becomes a
    # large negative one). M = s_x s_w / s_out = 2^-24 spreads int32 over the int8 range.
    units = w_shape[3] if op == "DEPTHWISE_CONV_2D" else w_shape[0]
    weights = random_weights(rng, dtype, w_shape)
    w_zp = 0 if dtype == np.int8 else 128
    zp_x = -3 if dtype == np.int8 else 130
    bias = near_limits(rng, units, 2**16)
    s_x, s_w = 2.0**-6, 2.0**-7
    model = layer_model(op, dtype, x_shape, weights, bias, s_x=s_x, zp_x=zp_x, w_scales=[s_w],
                        w_zp=w_zp, s_out=s_x * s_w * 2.0**24, zp_out=0 if dtype == np.int8 else 128)
    x = full_range(rng, x_shape, dtype)
    if op == "FULLY_CONNECTED":
        x = x.reshape(-1, x_shape[-1])
    exact = _exact_accumulators(op, dtype, x, weights, bias, zp_x, w_zp)
    overflowing = np.count_nonzero((exact < -INT32) | (exact >= INT32))
    assert overflowing > exact.size // 20  # the test exercises the wrap
    for kernels in ("reference", "default"):
        record, _ = record_of(model, kernels)
        assert record.plan.wraps
    results = assert_bit_exact(model, [x])
    # What LiteRT gives is the wrapped accumulator times 2^-24 (within the rounding of
    # its requantization), not the saturated exact one.
    zp_out = 0 if dtype == np.int8 else 128
    info = np.iinfo(dtype)
    expected = np.clip(np.round(qm.wrap_int32(exact) * 2.0**-24) + zp_out, info.min, info.max)
    ours = results["reference"][0].astype(np.int64)
    assert np.abs(ours - expected).max() <= 1


def test_extreme_bias_per_channel_int8_conv_and_fc(rng):
    # Per-channel scales, int8, M_c close to 2^-24 per channel.
    for op, w_shape, x_shape in (WRAP_CASES[0], WRAP_CASES[2]):
        units = w_shape[0]
        weights = random_weights(rng, np.int8, w_shape)
        s_x = 2.0**-6
        w_scales = np.float32(rng.uniform(0.005, 0.02, units))
        bias = near_limits(rng, units, 2**16)
        model = layer_model(op, np.int8, x_shape, weights, bias, s_x=s_x, zp_x=-128,
                            w_scales=w_scales, s_out=float(s_x * w_scales.mean()) * 2.0**24)
        x = full_range(rng, x_shape, np.int8)
        assert record_of(model)[0].plan.wraps
        assert_bit_exact(model, [x.reshape(-1, x_shape[-1]) if op == "FULLY_CONNECTED" else x])


def test_extreme_bias_int8_fc_with_weight_zero_point(rng):
    # Per-tensor int8 FC weights may have a zero point (TFLite's weights_offset): the
    # terms are (w - zp_w)(x - zp_x), up to 255 * 255, and the sum still wraps.
    weights = random_weights(rng, np.int8, (16, 72))
    model = layer_model("FULLY_CONNECTED", np.int8, (8, 72), weights,
                        near_limits(rng, 16, 2**16), s_x=2.0**-6, zp_x=100,
                        w_scales=[2.0**-7], w_zp=-90, s_out=2.0**11)
    assert record_of(model)[0].plan.wraps
    assert_bit_exact(model, [full_range(rng, (8, 72), np.int8)])


@pytest.mark.parametrize("axis", [0, 3])
def test_extreme_bias_uint8_depthwise_both_litert_kernels(rng, axis):
    # uint8 depthwise: XNNPACK takes it with a dimension-0 filter quantization, TFLite's
    # optimized kernel otherwise; both wrap.
    from tests.support import litert_delegates
    weights = random_weights(rng, np.uint8, (1, 3, 3, 16))
    model = layer_model("DEPTHWISE_CONV_2D", np.uint8, (1, 6, 6, 16), weights,
                        near_limits(rng, 16, 2**16), s_x=2.0**-6, zp_x=120,
                        w_scales=[2.0**-7], w_zp=128, s_out=2.0**11, zp_out=128, axis=axis)
    assert litert_delegates(model) == (axis == 0)
    assert record_of(model)[0].plan.wraps
    assert_bit_exact(model, [full_range(rng, (1, 6, 6, 16), np.uint8)])


@pytest.mark.parametrize("op,w_shape,x_shape", WRAP_CASES)
def test_bias_that_cannot_overflow_keeps_the_float32_path(rng, op, w_shape, x_shape):
    # The largest sum is bounded by 72 * 127 * 255 < 2^22; biases of +-(2^31 - 2^23)
    # cannot leave int32, so nothing changes on the fast path (bias exact in float32).
    units = w_shape[3] if op == "DEPTHWISE_CONV_2D" else w_shape[0]
    bias = (INT32 - 2**23) * np.where(np.arange(units) % 2 == 0, 1, -1)
    model = layer_model(op, np.int8, x_shape, random_weights(rng, np.int8, w_shape), bias,
                        s_x=2.0**-6, zp_x=-128, w_scales=[2.0**-7], s_out=2.0**11)
    record, _ = record_of(model)
    assert not record.plan.wraps
    assert record.plan.path is GemmPath.FLOAT32 and record.acc.dtype == np.float32
    x = full_range(rng, x_shape, np.int8)
    assert_bit_exact(model, [x.reshape(-1, x_shape[-1]) if op == "FULLY_CONNECTED" else x])


def test_wrap_int32_float_matches_integer_wrap():
    values = np.array([0, 1, -1, INT32 - 1, INT32, -INT32, -INT32 - 1, 3 * INT32 + 5,
                       -5 * INT32 - 7, 2**52, -(2**52) + 3], np.int64)
    acc = values.astype(np.float64)
    wrap_int32_float(acc)
    assert acc.tolist() == qm.wrap_int32(values).tolist()


def _aligned_rows(rng, weights, zp_x, rows):
    """int8 FC inputs whose row r pushes unit r's sum towards its largest value:
    x - zp_x = +-(100..127 - ...) with the sign of w[r] (random magnitudes, so the sums
    are arbitrary integers, not multiples of a power of two)."""
    info = np.iinfo(np.int8)
    mags = rng.integers(100, 128, size=(rows, weights.shape[1]))
    x = zp_x + np.sign(weights[:rows].astype(np.int64)) * mags
    return np.clip(x, info.min, info.max).astype(np.int8)


def test_wrapped_long_fc_lands_mid_range(rng):
    # Depth 65536 with inputs aligned to the weights: each row's own unit sums to about
    # 65536 * 64 * 114 ~ 2^28.8, and its bias 2^31 - 1 - sum / 2 pushes it past 2^31 by
    # half the sum: it wraps to about -2^31 + 2^27.8, an output well inside the int8
    # range at M = 2^-24 -- the requantization of wrapped values is compared exactly, in
    # both kernel sets. The depth also takes the chunked path.
    depth, units = 65536, 8
    weights = random_weights(rng, np.int8, (units, depth))
    x = _aligned_rows(rng, weights, 0, units)
    sums = x.astype(np.int64) @ weights.T.astype(np.int64)
    bias = INT32 - 1 - np.diagonal(sums) // 2
    s_x, s_w = 2.0**-6, 2.0**-7
    model = layer_model("FULLY_CONNECTED", np.int8, (units, depth), weights, bias, s_x=s_x,
                        zp_x=0, w_scales=[s_w], s_out=s_x * s_w * 2.0**24)
    assert np.all(np.diagonal(sums + bias) >= INT32)  # each row's own unit overflows
    record, _ = record_of(model)
    assert record.plan.wraps and record.plan.path is GemmPath.CHUNKED
    results = assert_bit_exact(model, [x])
    for kernels in ("reference", "default"):
        mid = np.diagonal(results[kernels][0]).astype(np.int64)
        assert np.all((mid > -120) & (mid < -100))  # wrapped, not saturated


# --------------------------------------------------------------------------- long reductions


def _chunks_are_exact(plan, weights_ko, x_dtype, zp_x):
    bounds = term_bounds(weights_ko, x_dtype, zp_x)
    edges = bounds.edges.tolist()
    starts = [start for start, _ in plan.chunks]
    stops = [stop for _, stop in plan.chunks]
    assert starts[0] == 0 and stops[-1] == len(weights_ko) and starts[1:] == stops[:-1]
    for start, stop in plan.chunks:
        assert bounds.reach(edges.index(start), edges.index(stop)) <= FLOAT32_EXACT


def _relu_pattern(rng, filt, o, shape, zp_x):
    """A CONV_2D input whose 3x3 patches centred on (y, x) = (1, 1) mod 3 match the
    sign pattern of filter ``o``: those accumulators reach about K * 64 * 124 > 2^24."""
    n, h, w, c = shape
    signs = np.sign(filt[o].astype(np.int64))  # (3, 3, C)
    tiled = signs[np.arange(h) % 3][:, np.arange(w) % 3]  # (H, W, C)
    mags = rng.integers(120, 128, size=shape)
    return np.clip(zp_x + tiled * mags, -128, 127).astype(np.int8)


@pytest.mark.parametrize("kernels", ["reference", "default"])
def test_long_conv_reduction_runs_in_float32_chunks(rng, kernels):
    # K = 3 * 3 * 256 = 2304 with uniform int8 weights: the partial sums reach about
    # 2304 * 64 * 128 ~ 1.1 * 2^24, so one float32 GEMM is not provably exact; the
    # reduction runs as float32 chunks, and the accumulators are exact integers well
    # above 2^24, which a single float32 product would round.
    shape, w_shape, zp_x = (1, 8, 8, 256), (16, 3, 3, 256), 0
    filt = random_weights(rng, np.int8, w_shape)
    bias = rng.integers(-5000, 5000, 16)
    model = layer_model("CONV_2D", np.int8, shape, filt, bias, s_x=0.02, zp_x=zp_x,
                        w_scales=rng.uniform(0.001, 0.002, 16), s_out=40.0, padding="VALID")
    x = _relu_pattern(rng, filt, 3, shape, zp_x)
    record, interp = record_of(model, kernels)
    plan = record.plan
    assert plan.path is GemmPath.CHUNKED and len(plan.chunks) == 2 and not plan.wraps
    weights_ko = filt.reshape(16, -1).T
    _chunks_are_exact(plan, weights_ko, np.int8, zp_x)
    assert_bit_exact(model, [x], kernels=[kernels])
    # The sums themselves, after an invoke (the reference stage reads acc without
    # changing it): exact, although many exceed 2^24 and are odd.
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    windows = np.lib.stride_tricks.sliding_window_view(x[0].astype(np.int64) - zp_x,
                                                       (3, 3), axis=(0, 1))
    cols = windows.transpose(0, 1, 3, 4, 2).reshape(36, -1)  # (OH*OW, KH*KW*C)
    exact = cols @ weights_ko.astype(np.int64)
    assert np.abs(exact).max() > FLOAT32_EXACT
    single = (cols.astype(np.float32) @ weights_ko.astype(np.float32)).astype(np.int64)
    assert not np.array_equal(single, exact)  # one float32 product would be wrong here
    if kernels == "reference":
        assert np.array_equal(record.acc.reshape(36, 16), exact)


def test_long_fc_reduction_runs_in_float32_chunks(rng):
    # Depth 2048 (ResNet50's classifier) with uniform weights and uint8-like zero
    # point: float32 chunks, exact sums above 2^24.
    depth, units, zp_x = 2048, 32, -128
    weights = random_weights(rng, np.int8, (units, depth))
    model = layer_model("FULLY_CONNECTED", np.int8, (units, depth), weights,
                        rng.integers(-9000, 9000, units), zp_x=zp_x, s_out=60.0)
    record, interp = record_of(model, "reference")
    assert record.plan.path is GemmPath.CHUNKED and len(record.plan.chunks) >= 2
    _chunks_are_exact(record.plan, weights.T, np.int8, zp_x)
    x = np.clip(_aligned_rows(rng, weights, 0, units).astype(np.int64) * 2 + 1, -128,
                127).astype(np.int8)
    assert_bit_exact(model, [x])
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    exact = (x.astype(np.int64) - zp_x) @ weights.T.astype(np.int64)
    assert np.abs(exact).max() > FLOAT32_EXACT
    assert np.array_equal(record.acc, exact)


def test_grouped_long_conv_chunks(rng):
    # Two groups of 256 input channels: the chunks split each group's K = 2304.
    filt = random_weights(rng, np.int8, (8, 3, 3, 256))
    model = layer_model("CONV_2D", np.int8, (1, 5, 5, 512), filt, rng.integers(-99, 99, 8),
                        w_scales=[0.002], s_out=30.0)
    record, _ = record_of(model)
    assert record.groups == 2 and record.plan.path is GemmPath.CHUNKED
    assert_bit_exact(model, [full_range(rng, (1, 5, 5, 512), np.int8)])


def test_chunked_conv_split_over_threads_is_exact(rng):
    # 64 * 64 outputs x 64 channels = 2^18 values: two threads split the rows, each
    # slice runs the chunked product into its own part of the scratch.
    shape, w_shape = (1, 64, 64, 256), (64, 3, 3, 256)
    filt = random_weights(rng, np.int8, w_shape)
    model = layer_model("CONV_2D", np.int8, shape, filt, rng.integers(-99, 99, 64),
                        w_scales=[0.001], s_out=20.0)
    x = _relu_pattern(rng, filt, 0, shape, 0)
    outputs = []
    for threads in (1, 2):
        record, interp = record_of(model, "reference", threads)
        assert record.plan.path is GemmPath.CHUNKED
        assert len(record.slices) == (2 if threads == 2 else 0)
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        outputs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
        if threads == 2:
            acc = record.acc.reshape(64, 64, 64)
            assert np.abs(acc).max() > FLOAT32_EXACT
    assert np.array_equal(outputs[0], outputs[1])


def test_signed_bound_keeps_relu_inputs_in_one_float32_product(rng):
    # Inputs after a ReLU (zero point -128: x - zp_x in [0, 255]) and bell-shaped
    # weights: the plain bound 255 * sum |w| exceeds 2^24, but a partial sum can only
    # reach 255 * max(sum of positive w, sum of |negative w|), about half: one product.
    w = np.clip(np.round(rng.normal(0, 127 / 3.5, size=(16, 3, 3, 256))), -127, 127)
    filt = w.astype(np.int8)
    plain = 255 * np.abs(filt.astype(np.int64)).reshape(16, -1).sum(axis=1).max()
    assert plain > FLOAT32_EXACT
    model = layer_model("CONV_2D", np.int8, (1, 6, 6, 256), filt, rng.integers(-99, 99, 16),
                        zp_x=-128, w_scales=[0.002], s_out=20.0)
    record, _ = record_of(model)
    assert record.plan.path is GemmPath.FLOAT32 and record.acc.dtype == np.float32
    assert_bit_exact(model, [full_range(rng, (1, 6, 6, 256), np.int8)])


# --------------------------------------------------------------------------- the planner


def test_term_bounds_are_attained(rng):
    weights = rng.integers(-127, 128, size=(300, 5))
    zp_x = 17
    bounds = term_bounds(weights, np.int8, zp_x)
    low, high = bounds.extremes(0, len(bounds.edges) - 1)
    hi_x, lo_x = 127 - zp_x, -128 - zp_x
    assert high.tolist() == (np.where(weights > 0, hi_x, lo_x) * weights).sum(axis=0).tolist()
    assert low.tolist() == (np.where(weights > 0, lo_x, hi_x) * weights).sum(axis=0).tolist()


def test_chunks_are_block_aligned_and_balanced(rng):
    weights = rng.integers(-127, 128, size=(4608, 3))  # ~2.2 x the float32 limit
    plan = plan_accumulator(weights, np.int8, 0, None, float32_bias=True)
    assert plan.path is GemmPath.CHUNKED and plan.acc_dtype == np.float64
    assert len(plan.chunks) == 3
    assert all(start % 64 == 0 for start, _ in plan.chunks)
    lengths = [stop - start for start, stop in plan.chunks]
    assert max(lengths) - min(lengths) <= 64
    _chunks_are_exact(plan, weights, np.int8, 0)
    bounds = term_bounds(weights, np.int8, 0)
    assert float32_chunks(bounds) == plan.chunks


def test_depthwise_with_many_taps_sums_in_float64(rng):
    # A 33 x 33 depthwise kernel at the worst weights: 1089 * 127 * 128 > 2^24, and tap
    # sums are not split: float64.
    filt = np.full((1, 33, 33, 4), -127, np.int8)
    model = layer_model("DEPTHWISE_CONV_2D", np.int8, (1, 33, 33, 4), filt,
                        rng.integers(-99, 99, 4), w_scales=[0.001], s_out=200.0,
                        padding="VALID")
    record, _ = record_of(model)
    assert record.plan.path is GemmPath.FLOAT64 and record.acc.dtype == np.float64
    assert_bit_exact(model, [full_range(rng, (1, 33, 33, 4), np.int8)])


# --------------------------------------------------------------------------- float32 or float64


def _accumulator_dtype(model: bytes) -> np.dtype:
    return record_of(model)[0].acc.dtype


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_accumulator_is_float32_when_exact(rng, op):
    # 3x3x16 int8 taps: 144 * 127 * 255 < 2^24, so float32 BLAS sums are exact.
    w_shape = (8, 3, 3, 16) if op == "CONV_2D" else (1, 3, 3, 16)
    model, feeds = quant_conv_model(rng, np.int8, (1, 7, 7, 16), w_shape, op=op)
    assert _accumulator_dtype(model) == np.float32
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_bias_beyond_float32_accumulates_in_float64(rng, op):
    # Biases of about +-2^24 are not all exact in float32, so the accumulator the output
    # stage reads is float64 (CONV_2D's GEMM itself stays float32).
    w_shape = (8, 3, 3, 4) if op == "CONV_2D" else (1, 3, 3, 4)
    model, feeds = quant_conv_model(rng, np.int8, (1, 6, 6, 4), w_shape, op=op,
                              w_scale=(0.01, 0.01), out_scale=(60.0, 0),
                              bias_range=(2**24, 2**24 + 2**22))
    assert _accumulator_dtype(model) == np.float64
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_acc_plus_bias_is_rounded_to_float32_once(op):
    # acc = 1, bias = 2^24 + 65537: XNNPACK converts the exact int32 sum 2^24 + 65538
    # (exact in float32) and scales it by M = 2^-5 * 2^-6 / 2^6 = 2^-17: 128.5 + 2^-16,
    # which rounds to 129. Adding a float32 bias (2^24 + 65536 after rounding) to the
    # float32 acc would round twice and land on the tie 128.5 -> 128.
    m = QuantModel()
    x = m.input("x", (1, 1, 1, 1), np.int8, 2.0**-5, 0)
    w = m.const("w", np.ones((1, 1, 1, 1)), np.int8, np.float32([2.0**-6]), np.zeros(1, np.int64),
                axis=0 if op == "CONV_2D" else 3)
    b = m.const("b", [2**24 + 65537], np.int32, np.float32([2.0**-11]), np.zeros(1, np.int64))
    y = m.output("y", (1, 1, 1, 1), np.int8, 64.0, -100)
    m.op(op, [x, w, b], [y], version=3, padding="VALID", stride_h=1, stride_w=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE",
         **({"depth_multiplier": 1} if op == "DEPTHWISE_CONV_2D" else {}))
    model = m.build()
    results = assert_bit_exact(model, [np.ones((1, 1, 1, 1), np.int8)], kernels=["default"])
    assert results["default"][0].item() == 129 - 100
